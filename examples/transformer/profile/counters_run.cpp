// profile/counters_run.cpp: transformer_profile --counters. The ceilings are
// measured first, before any counter collection; then each run goes through
// the same protocol as the profile's plain runs, once per replay pass inside
// counters_report, and once more without counters for the report's timings
// and scope counts: the counters are per run and the report covers one run,
// so the roofline's per-instance values (a range's totals divided by its
// node's count) agree.
#include "profile/counters_run.hpp"

#include <cuda_runtime_api.h>

#include <gpuprof/bench.hpp>
#include <gpuprof/error.hpp>
#include <gpuprof/report.hpp>
#include <gpuprof/report/roofline_svg.hpp>

#include <cstdio>
#include <exception>
#include <filesystem>

#include "common/device_buffer.hpp"
#include "bench/gemm_ceiling.hpp"
#include "harness/run.hpp"
#include "profile/counter_capture.hpp"
#include "profile/profile_run.hpp"

namespace transformer::profile {
namespace {

// Large enough to stream through DRAM (far past the 50 MiB of an H100's L2).
constexpr std::size_t copy_bytes = std::size_t{1} << 30;

double measure_copy_bandwidth() {
  examples::DeviceBuffer<unsigned char> from(copy_bytes), to(copy_bytes);
  GPUPROF_CUDA_CHECK(cudaMemset(from.data(), 1, copy_bytes));
  gpuprof::BenchOptions options;
  options.warmup = 3;
  options.iters = 20;
  const gpuprof::BenchResult result = gpuprof::bench(
      [&] {
        GPUPROF_CUDA_CHECK(
            cudaMemcpyAsync(to.data(), from.data(), copy_bytes, cudaMemcpyDeviceToDevice, nullptr));
      },
      options);
  return 2.0 * static_cast<double>(copy_bytes) /
         (result.primary().median / 1e3);  // each byte read once and written once
}

CountersRun counters_run(const ProfileOptions& options, const harness::Device& device,
                         const ConfigurationProfile& c, Mode mode,
                         const gpuprof::RooflineCeilings& ceilings) {
  CountersRun run;
  run.label = c.label();
  run.slug = c.slug();
  run.mode = mode;
  const RunConfig config = run_config(options, c, mode);
  std::fprintf(stderr, "counters: %s ...\n", harness::configuration_label(config).c_str());
  try {
    harness::ResultRow row;
    const auto work = [&] {
      row = harness::run_configuration(device, config, {options.warmup, options.steps}, {});
    };
    run.report = counters_report(work, ceilings);
    if (row.status == harness::RowStatus::oom) {
      run.status = RunStatus::oom;
      print_oom(row.bytes_requested);
      return run;
    }
    if (run.report.counters.empty()) run.note = run.report.counters.note;
    const std::filesystem::path dir(options.out_dir);
    gpuprof::write_json(run.report, (dir / counters_file(run, "json")).string());
    gpuprof::RooflineSvgOptions picture;
    picture.title = run.label + ", " + to_string(mode) + ": scopes under the roofline";
    gpuprof::write_roofline_svg(run.report, (dir / counters_file(run, "svg")).string(), picture);
  } catch (const std::exception& error) {
    mark_failed(run, error);
  }
  return run;
}

}  // namespace

gpuprof::RooflineCeilings measure_roofline_ceilings() {
  gpuprof::RooflineCeilings ceilings;
  for (const auto& [precision, tflops] : bench::measure_gemm_ceilings()) {
    const char* pipe = precision == Precision::bf16   ? "tensor bf16"
                       : precision == Precision::tf32 ? "tensor tf32"
                                                      : "fp32";
    ceilings.pipes.push_back({pipe, tflops * 1e12});
  }
  ceilings.dram_bytes_per_s = measure_copy_bandwidth();
  ceilings.source = "measured";
  return ceilings;
}

CountersResults run_counters(const ProfileOptions& options) {
  const harness::Device device = require_gpu();
  CountersResults results;
  describe(results, options, device);
  std::fprintf(stderr, "counters: measuring the ceilings (GEMM per precision, copy bandwidth) ...\n");
  results.ceilings = measure_roofline_ceilings();
  for (const ConfigurationProfile& c : configurations(options, results.notes))
    for (const Mode mode : {Mode::fwd, Mode::step})
      results.runs.push_back(counters_run(options, device, c, mode, results.ceilings));
  return results;
}

}  // namespace transformer::profile
