// CUPTI's host-side metric evaluator, which needs no GPU: the default metric
// set is known on Hopper and Ampere and has a pass count, an unknown metric
// is named in the error, and FLOPs are derived from the per-pipe counters.
#include <doctest/doctest.h>

#include <gpuprof/counters.hpp>

#include <string>
#include <vector>

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

TEST_CASE("FLOPs from the per-pipe counters: an FFMA is two, missing counters count zero") {
  gpuprof::CounterRange range;
  range.values = {{gpuprof::metric::fp32_ffma, 1000}, {gpuprof::metric::fp32_fadd, 10},
                  {gpuprof::metric::fp32_fmul, 5}, {gpuprof::metric::tensor_bf16_ops, 4096},
                  {gpuprof::metric::tensor_tf32_ops, 1024}};
  CHECK(gpuprof::fp32_flops(range) == 2015);
  CHECK(gpuprof::tensor_flops(range) == 5120);
  CHECK(gpuprof::fp32_flops(gpuprof::CounterRange{}) == 0);
  CHECK(gpuprof::tensor_flops(gpuprof::CounterRange{}) == 0);
}

TEST_CASE("without a usable GPU the capture is off, says why, and hands back an empty set with the note") {
  int devices = 0;
  if (cudaGetDeviceCount(&devices) == cudaSuccess && devices > 0) {
    MESSAGE("a GPU is present: the off path is not exercised here");
    return;
  }
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
