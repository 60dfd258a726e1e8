// bench/driver.cpp: the order of a run: check every output first, pick the
// device, measure the GEMM ceilings, dump, sweep, studies, then print and write.
#include "bench/driver.hpp"

#include <gpuprof/atomic_file.hpp>
#include <gpuprof_cli/output_paths.hpp>
#include <gpuprof/profiler.hpp>
#include <gpuprof/report.hpp>

#include <algorithm>
#include <cstdio>
#include <iostream>
#include <optional>

#include "bench/dump.hpp"
#include "bench/gemm_ceiling.hpp"
#include "bench/loss_curve.hpp"
#include "bench/sweep.hpp"
#include "bench/torch_reference.hpp"
#include "bench/warmup_study.hpp"
#include "harness/device.hpp"
#include "harness/output.hpp"
#include "harness/cells.hpp"
#include "model/backend.hpp"

namespace transformer::bench {
namespace {

std::vector<gpuprof::OutputFile> output_files(const DriverOptions& options) {
  return {{"--json", options.json_path},
          {"--csv", options.csv_path},
          {"--report-json", options.report_json_path},
          {"--trace", options.trace_path}};
}

void check_outputs(const DriverOptions& options) {
  std::vector<std::string> inputs;
  if (!options.torch_jsonl_path.empty()) inputs.push_back(options.torch_jsonl_path);
  harness::check_output_files(output_files(options), inputs);
  if (!options.dump_dir.empty()) harness::prepare_output_directory("--dump", options.dump_dir);
}

std::optional<TorchReference> read_torch_reference(const std::string& path) {
  if (path.empty()) return std::nullopt;
  try {
    return TorchReference::read(path);
  } catch (const std::runtime_error& error) {
    throw harness::UsageError(std::string("--torch-jsonl: ") + error.what());
  }
}

std::map<Precision, double> measure_ceilings(const harness::Device& device, std::ostream& text) {
  if (!device.is_cuda()) return {};
  const GemmCeilingOptions gemm;
  std::fprintf(stderr, "measuring GEMM ceilings (%d^3 cuBLAS products, median of %d) ...\n", gemm.n,
               gemm.iters);
  const std::map<Precision, double> ceilings = measure_gemm_ceilings(gemm);
  text << "GEMM ceilings (" << gemm.n << "^3 cuBLAS, median of " << gemm.iters << "):";
  for (const auto& [precision, tflops] : ceilings)
    text << "  " << to_string(precision) << " " << harness::fixed(tflops, 1) << " TFLOP/s";
  text << "\n";
  return ceilings;
}

// The first configuration the device can run: what --dump uses.
std::optional<RunConfig> first_supported(const harness::Device& device, const DriverOptions& options) {
  for (const RunConfig& config : sweep_configurations(options))
    if (device.supports(config.precision) && harness::unsupported_attention(config).empty()) return config;
  return std::nullopt;
}

void write_dump(const harness::Device& device, const DriverOptions& options) {
  const std::optional<RunConfig> config = first_supported(device, options);
  if (!config)
    throw std::runtime_error("--dump: no configuration the " + std::string(device.backend_name()) +
                             " backend supports");
  std::fprintf(stderr, "dump: one train step of %s into %s\n", harness::configuration_label(*config).c_str(),
               options.dump_dir.c_str());
  write_training_step_dump(options.dump_dir, device, *config,
                           harness::make_token_batch(*config, options.seed), *options.graph);
}

void write_profile(const DriverOptions& options, std::ostream& text) {
  if (!options.print_report && options.report_json_path.empty() && options.trace_path.empty()) return;
  const gpuprof::Report report = gpuprof::profiler().report();
  if (options.print_report) {
    text << "\n";
    gpuprof::print_table(report, text);
  }
  if (!options.report_json_path.empty()) gpuprof::write_json(report, options.report_json_path);
  if (!options.trace_path.empty()) gpuprof::write_chrome_trace(report, options.trace_path);
}

}  // namespace

int run_driver(DriverOptions options) {
  check_outputs(options);
  // Standard output carries the one document asked for with "-"; the tables then go to stderr.
  std::ostream& text = gpuprof::any_to_standard_output(output_files(options)) ? std::cerr : std::cout;
  const std::optional<TorchReference> torch = read_torch_reference(options.torch_jsonl_path);
  gpuprof::profiler();  // probes the device now, so its one-time notice precedes the progress lines
  const harness::Device device = harness::Device::select(options.device);
  if (!device.notice().empty()) std::fprintf(stderr, "notice: %s\n", device.notice().c_str());
  // The CPU backend's work is timed by the host clock, also where a GPU is
  // present: CUDA events around host work would time nothing of it.
  if (!device.is_cuda()) gpuprof::profiler().set_gpu_timing(false);
  resolve_defaults(options, device.is_cuda());
  if (*options.graph && !device.is_cuda())
    throw harness::UsageError(std::string("--graph needs the CUDA backend; this run uses the ") +
                              device.backend_name() + " backend");

  harness::BenchResults results;
  results.device = device.name();
  results.backend = device.backend_name();
  results.cudnn = device.cudnn();
  results.batch = options.batch;
  results.warmup = options.warmup;
  results.steps = options.steps;
  results.graph = *options.graph;
  results.seed = options.seed;
  const gpuprof::Axes axes = sweep_axes(options);  // a configuration listed twice fails before any work
  const std::map<Precision, double> ceilings = measure_ceilings(device, text);
  for (const auto& [precision, tflops] : ceilings) results.ceilings_tflops[to_string(precision)] = tflops;

  if (!options.dump_dir.empty()) write_dump(device, options);
  results.rows = run_sweep(device, options, axes, ceilings);
  if (torch)
    for (harness::ResultRow& row : results.rows) torch->join(row);
  if (options.warmup_study) results.warmup_study = run_warmup_study(device, options);
  if (options.loss_curve_steps > 0) {
    // The first size and context of the sweep; run_loss_curves picks the precisions.
    const RunConfig config = sweep_configurations(options).front();
    results.loss_curves =
        run_loss_curves(device, config, options.precisions, harness::make_token_batch(config, options.seed),
                        options.loss_curve_steps);
  }

  harness::print_results_table(text, results);
  print_warmup_study(text, results.warmup_study);
  print_loss_curves(text, results.loss_curves);
  if (!options.json_path.empty())
    gpuprof::write_file_atomically(options.json_path, harness::results_json(results));
  if (!options.csv_path.empty())
    gpuprof::write_file_atomically(options.csv_path, harness::results_csv(results));
  write_profile(options, text);
  const bool any_failed =
      std::any_of(results.rows.begin(), results.rows.end(),
                  [](const harness::ResultRow& row) { return row.status == harness::RowStatus::error; });
  return any_failed ? 1 : 0;
}

}  // namespace transformer::bench
