// CUPTI's host-side metric evaluator, which needs no GPU: the default metric
// set is known on Hopper and Ampere and has a pass count, an unknown metric
// is named in the error, and the roofline reads its FLOPs from that set.
// Without a GPU the capture is off and reports say why.
#include <doctest/doctest.h>

#include <gpuprof/counters.hpp>
#include <gpuprof/roofline.hpp>

#include <algorithm>
#include <string>
#include <vector>

namespace {

// The off path needs a machine without a usable GPU.
bool gpu_present() {
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) return false;
  MESSAGE("a GPU is present: the off path is not exercised here");
  return true;
}

}  // namespace

TEST_CASE("the default metric set is valid on Hopper and Ampere and needs a few passes") {
  for (const std::string chip : {"GH100", "GA100"}) {
    CAPTURE(chip);
    const int passes = gpuprof::counter_passes(chip, gpuprof::default_counter_metrics(chip));
    MESSAGE(chip << ": default set needs " << passes << " pass(es)");
    CHECK(passes >= 1);
    CHECK(passes <= 64);
    // One cheap counter fits one pass; the full set needs at least as many.
    const int one = gpuprof::counter_passes(chip, {gpuprof::metric::dram_bytes_read});
    CHECK(one == 1);
    CHECK(passes >= one);
    // The two throughput metrics cost most of the passes: the rest is cheap.
    std::vector<std::string> cheap;
    for (const std::string& name : gpuprof::default_counter_metrics(chip))
      if (name != gpuprof::metric::sm_throughput_pct && name != gpuprof::metric::memory_throughput_pct)
        cheap.push_back(name);
    const int cheap_passes = gpuprof::counter_passes(chip, cheap);
    MESSAGE(chip << ": without the throughputs " << cheap_passes << " pass(es)");
    CHECK(cheap_passes < passes);
  }
}

TEST_CASE("an unknown metric is refused by name") {
  try {
    (void)gpuprof::counter_passes("GH100", {gpuprof::metric::dram_bytes_read, "dram__no_such_metric.sum"});
    FAIL("an unknown metric was accepted");
  } catch (const gpuprof::Error& error) {
    CHECK(std::string(error.what()).find("dram__no_such_metric.sum") != std::string::npos);
  }
}

TEST_CASE("the roofline's FLOP metrics are the default set's, and a chip's set counts every pipe") {
  // flop_pipes() sums the FP16 counters of Hopper and Ampere: each chip's
  // default set has its own, so each pipe has a collected metric there.
  for (const std::string chip : {"GH100", "GA100"}) {
    CAPTURE(chip);
    const std::vector<std::string> defaults = gpuprof::default_counter_metrics(chip);
    gpuprof::CounterRange range;
    for (const std::string& name : defaults) range.values.push_back({name, 1});
    const gpuprof::RangeMeasures measured = gpuprof::measure_range(range);
    CHECK(measured.pipes.size() == gpuprof::flop_pipes().size());
    // Every default FLOP counter feeds a pipe: 2 (FFMA) + 1 + 1 + one per tensor counter.
    int flop_counters = 0;
    for (const std::string& name : gpuprof::flop_metrics())
      flop_counters += std::count(defaults.begin(), defaults.end(), name) > 0 ? 1 : 0;
    CHECK(measured.flops == flop_counters + 1);
  }
}

TEST_CASE("without a usable GPU the capture is off, says why, and hands back an empty set with the note") {
  if (gpu_present()) return;
  gpuprof::CounterCapture capture;
  CHECK_FALSE(capture.active());
  CHECK_FALSE(capture.why_inactive().empty());
  int runs = 0;
  const gpuprof::CounterSet set = capture.measure([&] { ++runs; });
  CHECK(runs == 0);
  CHECK(set.empty());
  CHECK(set.passes == 0);
  CHECK(set.note == capture.why_inactive());
  gpuprof::CounterCaptureOptions per_kernel;
  per_kernel.ranges = gpuprof::CounterRanges::kernels;
  gpuprof::CounterCapture kernels(per_kernel);
  CHECK(kernels.collect().note == kernels.why_inactive());
}

TEST_CASE("without a usable GPU the next report says why it holds no counters, with no copy") {
  if (gpu_present()) return;
  {
    gpuprof::CounterCapture capture;
    CHECK(gpuprof::profiler().report().counters.note.empty());  // nothing measured yet
    (void)capture.measure([] {});
    gpuprof::profiler().reset();  // keeps the set
    const gpuprof::Report report = gpuprof::profiler().report();
    CHECK(report.counters.empty());
    CHECK(report.counters.note == capture.why_inactive());
    CHECK(report.ceilings.empty());
  }
  CHECK(gpuprof::profiler().report().counters.note.empty());  // gone with the capture
}
