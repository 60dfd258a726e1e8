// Hardware counters on a real GPU against known truths: a copy of N bytes
// reads and writes N bytes of DRAM (within 3 %: the buffers are far larger
// than L2), a chain of FFMAs executes exactly the FFMAs it was given, a
// cuBLAS BF16 GEMM does 2mnk tensor operations (within 3 %), per kernel
// (auto ranges, kernel replay or user replay) and per scope (user ranges, user replay: the
// work runs once per pass, and the set says how many passes it took).
// bench() drives the passes through BenchOptions::counters. Every scope's
// duration, the first of a pass included, against CUDA events. Reports hold
// the capture's last set and its GPU's ceilings. Exits 77
// (skipped) without a GPU.
#include <doctest/doctest.h>

#include <cublas_v2.h>
#include <cuda_bf16.h>

#include <gpuprof/bench.hpp>
#include <gpuprof/profiler.hpp>
#include <gpuprof/counters.hpp>
#include <gpuprof/roofline.hpp>
#include <gpuprof/scope.hpp>

#include <algorithm>
#include <cmath>
#include <functional>
#include <string>
#include <vector>

#include "counter_kernels.cuh"

namespace {

constexpr std::size_t copy_bytes = std::size_t{512} << 20;  // ≫ L2 (50 MB on H100)

double value(const gpuprof::CounterRange& range, const char* metric) {
  const double* found = range.find(metric);
  REQUIRE_MESSAGE(found != nullptr, metric << " missing in " << range.name);
  return *found;
}

const gpuprof::CounterRange& find_range(const std::vector<gpuprof::CounterRange>& ranges,
                                        const std::string& name) {
  for (const auto& range : ranges)
    if (range.name == name) return range;
  std::string names;
  for (const auto& range : ranges) names += " \"" + range.name + "\"";
  FAIL("no range \"" << name << "\"; ranges:" << names);
  throw 0;  // not reached: FAIL throws
}

void check_copy(const gpuprof::CounterRange& range) {
  CAPTURE(range.name);
  CHECK(value(range, gpuprof::metric::dram_bytes_read) == doctest::Approx(double(copy_bytes)).epsilon(0.03));
  CHECK(value(range, gpuprof::metric::dram_bytes_written) ==
        doctest::Approx(double(copy_bytes)).epsilon(0.03));
  CHECK(value(range, gpuprof::metric::duration_ns) > 0);
}
void check_fma(const gpuprof::CounterRange& range) {
  CAPTURE(range.name);
  CHECK(value(range, gpuprof::metric::fp32_ffma) == counter_kernels::fma_instructions);
  const gpuprof::RangeMeasures measured = gpuprof::measure_range(range);
  CHECK(measured.flops == 2 * counter_kernels::fma_instructions);
  CHECK(measured.dominant_pipe() == "fp32");
}

gpuprof::CounterCapture& require_active(gpuprof::CounterCapture& capture) {
  REQUIRE_MESSAGE(capture.active(), "counters are off: " << capture.why_inactive());
  return capture;
}

double median(std::vector<double> values) {
  REQUIRE(!values.empty());
  std::sort(values.begin(), values.end());
  return values[values.size() / 2];
}

// A scope of known work: its kernel, the DRAM bytes it reads and the FFMAs it
// executes.
struct KnownScope {
  const char* name;
  std::function<void()> launch;
  double dram_read;
  double ffma;
};

// Durations in us of each scope's work, timed by CUDA events: the kernels one
// after another, an event between each two, all queued behind a lead-in of
// the last scope's work, so that no event times the host's launch of the
// next kernel on an idle GPU (the first one would, by 5-15 us).
std::vector<std::vector<double>> event_durations_us(const std::vector<KnownScope>& scopes, int runs) {
  std::vector<cudaEvent_t> events(scopes.size() + 1);
  for (cudaEvent_t& event : events) GPUPROF_CUDA_CHECK(cudaEventCreate(&event));
  std::vector<std::vector<double>> durations(scopes.size());
  for (int run = 0; run < runs; ++run) {
    GPUPROF_CUDA_CHECK(cudaDeviceSynchronize());
    scopes.back().launch();
    GPUPROF_CUDA_CHECK(cudaEventRecord(events[0]));
    for (std::size_t i = 0; i < scopes.size(); ++i) {
      scopes[i].launch();
      GPUPROF_CUDA_CHECK(cudaEventRecord(events[i + 1]));
    }
    GPUPROF_CUDA_CHECK(cudaEventSynchronize(events.back()));
    for (std::size_t i = 0; i < scopes.size(); ++i) {
      float ms = 0;
      GPUPROF_CUDA_CHECK(cudaEventElapsedTime(&ms, events[i], events[i + 1]));
      durations[i].push_back(1000.0 * ms);
    }
  }
  for (cudaEvent_t event : events) GPUPROF_CUDA_CHECK(cudaEventDestroy(event));
  return durations;
}

}  // namespace

TEST_CASE("per kernel: a copy's DRAM bytes and an FMA chain's FLOPs") {
  const counter_kernels::Buffers buffers(copy_bytes);
  gpuprof::CounterCaptureOptions options;
  options.ranges = gpuprof::CounterRanges::kernels;
  gpuprof::CounterCapture capture(options);
  require_active(capture);
  buffers.copy();
  buffers.fma();
  GPUPROF_CUDA_CHECK(cudaDeviceSynchronize());
  const gpuprof::CounterSet set = capture.collect();
  INFO("note: " << set.note);
  CHECK(set.note.empty());
  CHECK(set.passes >= 1);
  CHECK(!set.chip.empty());
  REQUIRE(set.kernels.size() == 2);
  check_copy(set.kernels[0]);
  check_fma(set.kernels[1]);
}

TEST_CASE("per kernel, user replay: the work runs once per pass, each kernel measured in it") {
  const counter_kernels::Buffers buffers(copy_bytes);
  gpuprof::CounterCaptureOptions options;
  options.ranges = gpuprof::CounterRanges::kernels;
  options.replay = gpuprof::CounterReplay::user;
  gpuprof::CounterCapture capture(options);
  require_active(capture);
  int runs = 0;
  const gpuprof::CounterSet set = capture.measure([&] {
    ++runs;
    buffers.copy();
    buffers.fma();
  });
  INFO("note: " << set.note);
  CHECK(set.note.empty());
  CHECK(set.passes == runs);
  CHECK(runs >= capture.passes());
  CHECK(set.scopes.empty());
  REQUIRE(set.kernels.size() == 2);
  check_copy(set.kernels[0]);
  check_fma(set.kernels[1]);
  CHECK_THROWS_AS(capture.collect(), gpuprof::Error);
}

TEST_CASE("per scope: nested scopes by path, the work replayed once per pass") {
  const counter_kernels::Buffers buffers(copy_bytes);
  gpuprof::CounterCapture capture;
  require_active(capture);
  int runs = 0;
  const gpuprof::CounterSet set = capture.measure([&] {
    ++runs;
    GPUPROF_SCOPE("step");
    {
      GPUPROF_SCOPE("copy");
      buffers.copy();
    }
    {
      GPUPROF_SCOPE("fma");
      buffers.fma();
    }
  });
  INFO("note: " << set.note);
  CHECK(set.note.empty());
  CHECK(set.passes == runs);
  CHECK(runs >= capture.passes());
  MESSAGE("default metric set: " << set.passes << " run(s) of the work, " << capture.passes()
                                 << " pass(es) per nesting level, chip " << set.chip);
  check_copy(find_range(set.scopes, "step/copy"));
  check_fma(find_range(set.scopes, "step/fma"));
  const gpuprof::CounterRange& step = find_range(set.scopes, "step");
  CHECK(value(step, gpuprof::metric::fp32_ffma) == counter_kernels::fma_instructions);
  CHECK(value(step, gpuprof::metric::dram_bytes_read) >= 0.97 * double(copy_bytes));

  // The same capture measures again from pass 0.
  const gpuprof::CounterSet again = capture.measure([&] {
    GPUPROF_SCOPE("copy");
    buffers.copy();
  });
  CHECK(again.passes >= capture.passes());
  MESSAGE("one level of scopes (three measured): " << again.passes << " run(s)");
  check_copy(find_range(again.scopes, "copy"));
}

TEST_CASE("report() holds the capture's last set, merged by path, and the GPU's ceilings, with no copy") {
  const counter_kernels::Buffers buffers(copy_bytes);
  const auto copies = [&](const char* name) {
    for (int i = 0; i < 2; ++i) {
      GPUPROF_SCOPE(name);
      buffers.copy();
    }
  };
  {
    gpuprof::CounterCapture capture;
    require_active(capture);
    CHECK(gpuprof::profiler().report().counters.empty());  // nothing measured yet: nothing added
    const gpuprof::CounterSet set = capture.measure([&] { copies("copy"); });
    REQUIRE(set.scopes.size() == 1);  // CUPTI sums a path's openings into one range
    CHECK(value(set.scopes[0], gpuprof::metric::dram_bytes_read) ==
          doctest::Approx(2.0 * double(copy_bytes)).epsilon(0.03));
    gpuprof::profiler().reset();  // keeps the set: it describes one run of the work
    copies("copy");
    const gpuprof::Report report = gpuprof::profiler().report();
    REQUIRE(report.counters.scopes.size() == 1);  // one per path, like the report's node
    const gpuprof::CounterRange& copy = find_range(report.counters.scopes, "copy");
    CHECK(value(copy, gpuprof::metric::dram_bytes_read) ==
          doctest::Approx(value(set.scopes[0], gpuprof::metric::dram_bytes_read)));
    CHECK(report.counters.passes == set.passes);
    CHECK(report.counters.chip == set.chip);
    MESSAGE("device " << report.device_name << ": ceilings from " << report.ceilings.source);
    CHECK(report.ceilings.source == capture.ceilings().source);
    CHECK_FALSE(report.ceilings.source.empty());
    CHECK(report.ceilings.dram_bytes_per_s == capture.ceilings().dram_bytes_per_s);

    // The next measurement replaces the last.
    capture.measure([&] { copies("again"); });
    const gpuprof::Report replaced = gpuprof::profiler().report();
    CHECK(replaced.counters.scopes.size() == 1);
    CHECK(value(find_range(replaced.counters.scopes, "again"), gpuprof::metric::dram_bytes_read) ==
          doctest::Approx(2.0 * double(copy_bytes)).epsilon(0.03));
  }
  // Gone with the capture.
  CHECK(gpuprof::profiler().report().counters.empty());
}

TEST_CASE("ceilings given in the options reach the report as the user's") {
  const counter_kernels::Buffers buffers(copy_bytes);
  gpuprof::CounterCaptureOptions options;
  options.ceilings.pipes = {{"fp32", 1e12}};
  options.ceilings.dram_bytes_per_s = 1e12;
  gpuprof::CounterCapture capture(options);
  require_active(capture);
  capture.measure([&] {
    GPUPROF_SCOPE("copy");
    buffers.copy();
  });
  const gpuprof::Report report = gpuprof::profiler().report();
  CHECK(report.ceilings.source == "user");
  CHECK(report.ceilings.dram_bytes_per_s == 1e12);
}

TEST_CASE("per scope: scopes beyond max_ranges are not measured, and the note says how many") {
  const counter_kernels::Buffers buffers(copy_bytes);
  gpuprof::CounterCaptureOptions options;
  options.max_ranges = 2;
  gpuprof::CounterCapture capture(options);
  require_active(capture);
  const gpuprof::CounterSet set = capture.measure([&] {
    GPUPROF_SCOPE("step");
    for (int i = 0; i < 4; ++i) {
      GPUPROF_SCOPE("fma");
      buffers.fma();
    }
  });
  INFO("note: " << set.note);
  CHECK(set.note.find("3 scope range(s) not measured: more than max_ranges (2)") == 0);
  REQUIRE(set.scopes.size() == 2);
  check_fma(find_range(set.scopes, "step/fma"));  // the first of the four
  CHECK(value(find_range(set.scopes, "step"), gpuprof::metric::fp32_ffma) ==
        4 * counter_kernels::fma_instructions);
}

TEST_CASE("per scope: scopes below nesting_levels push no range and use up none of max_ranges") {
  const counter_kernels::Buffers buffers(copy_bytes);
  gpuprof::CounterCaptureOptions options;
  options.nesting_levels = 2;
  options.max_ranges = 2;  // "step" and "step/fma": three deeper ranges would be refused
  gpuprof::CounterCapture capture(options);
  require_active(capture);
  const gpuprof::CounterSet set = capture.measure([&] {
    GPUPROF_SCOPE("step");
    GPUPROF_SCOPE("fma");
    for (int i = 0; i < 3; ++i) {
      GPUPROF_SCOPE("one chain");
      buffers.fma();
    }
  });
  INFO("note: " << set.note);
  CHECK(set.note.empty());
  REQUIRE(set.scopes.size() == 2);
  CHECK(value(find_range(set.scopes, "step/fma"), gpuprof::metric::fp32_ffma) ==
        3 * counter_kernels::fma_instructions);
}

TEST_CASE("per scope: a cuBLAS BF16 GEMM does 2mnk tensor operations") {
  const int n = 4096;
  __nv_bfloat16* a = nullptr;
  __nv_bfloat16* b = nullptr;
  float* c = nullptr;
  GPUPROF_CUDA_CHECK(cudaMalloc(&a, sizeof(__nv_bfloat16) * n * n));
  GPUPROF_CUDA_CHECK(cudaMalloc(&b, sizeof(__nv_bfloat16) * n * n));
  GPUPROF_CUDA_CHECK(cudaMalloc(&c, sizeof(float) * n * n));
  GPUPROF_CUDA_CHECK(cudaMemset(a, 0, sizeof(__nv_bfloat16) * n * n));
  GPUPROF_CUDA_CHECK(cudaMemset(b, 0, sizeof(__nv_bfloat16) * n * n));
  cublasHandle_t handle = nullptr;
  REQUIRE(cublasCreate(&handle) == CUBLAS_STATUS_SUCCESS);
  const float alpha = 1, beta = 0;
  auto gemm = [&] {
    REQUIRE(cublasGemmEx(handle, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &alpha, a, CUDA_R_16BF, n, b, CUDA_R_16BF,
                         n, &beta, c, CUDA_R_32F, n, CUBLAS_COMPUTE_32F,
                         CUBLAS_GEMM_DEFAULT) == CUBLAS_STATUS_SUCCESS);
  };
  gemm();  // cuBLAS's own first-call work stays out of the measurement
  GPUPROF_CUDA_CHECK(cudaDeviceSynchronize());
  {
    gpuprof::CounterCapture capture;
    require_active(capture);
    const gpuprof::CounterSet set = capture.measure([&] {
      GPUPROF_SCOPE("gemm");
      gemm();
    });
    const gpuprof::CounterRange& range = find_range(set.scopes, "gemm");
    const double expected = 2.0 * n * n * n;
    MESSAGE("bf16 tensor ops " << value(range, gpuprof::metric::tensor_bf16_ops) << " vs 2mnk " << expected);
    CHECK(gpuprof::measure_range(range).flops == doctest::Approx(expected).epsilon(0.03));
    CHECK(value(range, gpuprof::metric::tensor_bf16_ops) == doctest::Approx(expected).epsilon(0.03));
  }
  CHECK(cublasDestroy(handle) == CUBLAS_STATUS_SUCCESS);
  GPUPROF_CUDA_CHECK(cudaFree(a));
  GPUPROF_CUDA_CHECK(cudaFree(b));
  GPUPROF_CUDA_CHECK(cudaFree(c));
}

TEST_CASE("bench() drives the replay passes and says how many it took") {
  const counter_kernels::Buffers buffers(copy_bytes);
  gpuprof::BenchOptions options;
  options.warmup = 1;
  options.iters = 3;
  options.counters = gpuprof::counter_replay();
  int calls = 0;
  const gpuprof::BenchResult result = gpuprof::bench(
      [&] {
        ++calls;
        GPUPROF_SCOPE("copy");
        buffers.copy();
      },
      options);
  INFO("note: " << result.counters.note);
  CHECK(result.counters.note.empty());
  CHECK(result.counters.passes >= 1);
  CHECK(calls == 1 + options.warmup + options.iters + result.counters.passes);
  check_copy(find_range(result.counters.scopes, "bench/copy"));
  CHECK(result.host_ms.size() == 3);
}

namespace {

// Every scope's duration, the first of each pass included, within 5 % of
// CUDA events; its DRAM bytes read and FFMA count as known.
void check_durations_against_events(const gpuprof::CounterCaptureOptions& options) {
  const counter_kernels::Buffers buffers(copy_bytes);
  // The first scope of a pass is the one that used to carry the host's slow
  // first launches of the pass (10-80 us). It is a long FMA chain (about
  // 300 us): a range's own boundaries add a few us in the profiler, 1 % of it,
  // and 5 % of a 2 us kernel is below what CUDA events resolve
  // (gpuprof_counters_probe --tiny-first prints that case). The last scope
  // runs the same chain, behind other work.
  constexpr int chain_iterations = 4 * counter_kernels::fma_iterations;
  const auto chain = [&] { counter_kernels::launch_fma(buffers.fma_out, nullptr, chain_iterations); };
  const std::vector<KnownScope> scopes = {
      {"first chain", chain, 0, 4 * counter_kernels::fma_instructions},
      {"copy", [&] { buffers.copy(); }, double(copy_bytes), 0},
      {"copy back", [&] { buffers.copy_back(); }, double(copy_bytes), 0},
      {"chain", chain, 0, 4 * counter_kernels::fma_instructions},
  };
  auto work = [&] {
    {
      GPUPROF_SCOPE("first chain");
      scopes[0].launch();
    }
    {
      GPUPROF_SCOPE("copy");
      scopes[1].launch();
    }
    {
      GPUPROF_SCOPE("copy back");
      scopes[2].launch();
    }
    {
      GPUPROF_SCOPE("chain");
      scopes[3].launch();
    }
  };
  constexpr int event_runs = 11, captures = 5;
  // Clocks settle under load first; the events are timed before and after
  // the captures, so a clock that drifts meanwhile moves both sides alike.
  (void)event_durations_us(scopes, 5);
  std::vector<std::vector<double>> events = event_durations_us(scopes, event_runs);

  // Each measure() gives one duration per scope (from the pass that reads
  // time): the median of several.
  gpuprof::CounterCapture capture(options);
  require_active(capture);
  std::vector<std::vector<double>> measured(scopes.size());
  for (int repeat = 0; repeat < captures; ++repeat) {
    const gpuprof::CounterSet set = capture.measure(work);
    INFO("note: " << set.note);
    CHECK(set.note.empty());
    REQUIRE(set.scopes.size() == scopes.size());
    for (std::size_t i = 0; i < scopes.size(); ++i) {
      const gpuprof::CounterRange& range = set.scopes[i];
      CAPTURE(range.name);
      CHECK(range.name == scopes[i].name);
      measured[i].push_back(value(range, gpuprof::metric::duration_ns) / 1000.0);
      // Within 1 % of the bytes the kernel reads; a chain reads none, and a
      // floor of 1 MB (docs/counters.md) takes instruction fetches.
      const double read = value(range, gpuprof::metric::dram_bytes_read);
      CHECK(std::abs(read - scopes[i].dram_read) <= std::max(0.01 * scopes[i].dram_read, 1e6));
      CHECK(value(range, gpuprof::metric::fp32_ffma) == scopes[i].ffma);
    }
  }

  const std::vector<std::vector<double>> events_after = event_durations_us(scopes, event_runs);
  for (std::size_t i = 0; i < scopes.size(); ++i)
    events[i].insert(events[i].end(), events_after[i].begin(), events_after[i].end());
  for (std::size_t i = 0; i < scopes.size(); ++i) {
    CAPTURE(scopes[i].name);
    const double reference = median(events[i]);
    const double counters = median(measured[i]);
    MESSAGE(std::string(scopes[i].name)
            << ": CUDA events " << reference << " us; counters " << counters << " us");
    CHECK(counters == doctest::Approx(reference).epsilon(0.05));
  }
}

}  // namespace

TEST_CASE("per scope: every scope's duration, the first of each pass included, agrees with CUDA events") {
  gpuprof::CounterCaptureOptions options;
  options.metrics = {gpuprof::metric::duration_ns, gpuprof::metric::dram_bytes_read,
                     gpuprof::metric::fp32_ffma};
  options.nesting_levels = 1;
  check_durations_against_events(options);
}

// The default set's per-SM metrics lengthened the ranges of their pass by
// 10-90 us: the duration is measured apart (detail/counter_groups.hpp).
TEST_CASE("per scope: durations agree with CUDA events under the default metric set, three levels deep") {
  check_durations_against_events({});
}
