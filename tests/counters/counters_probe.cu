// Prints hardware counter values as CSV lines "mode,range,metric,value" for
// the known kernels of counter_kernels.cuh: per kernel (auto ranges) and per
// scope (user ranges). With --plain it only runs the kernels, once, in the
// same order, for Nsight Compute to measure (ncu cannot profile a process
// that holds the counters itself). scripts/counters_check.sh compares the two.
// Exits 1 when counters cannot be collected, 2 on bad usage.
#include <gpuprof/counters.hpp>
#include <gpuprof/scope.hpp>

#include <cstdio>
#include <cstring>

#include "counter_kernels.cuh"

namespace {

constexpr std::size_t copy_bytes = std::size_t{512} << 20;

void print(const char* mode, const gpuprof::CounterSet& set,
           const std::vector<gpuprof::CounterRange>& ranges) {
  std::printf("# %s: chip %s, %d pass(es), %zu range(s)%s%s\n", mode, set.chip.c_str(), set.passes,
              ranges.size(), set.note.empty() ? "" : ", note: ", set.note.c_str());
  for (const gpuprof::CounterRange& range : ranges)
    for (const gpuprof::MetricValue& value : range.values)
      std::printf("%s,%s,%s,%.17g\n", mode, range.name.c_str(), value.metric.c_str(), value.value);
}

}  // namespace

int main(int argc, char** argv) {
  const bool plain = argc == 2 && std::strcmp(argv[1], "--plain") == 0;
  if (argc > 2 || (argc == 2 && !plain)) {
    std::fprintf(stderr, "usage: %s [--plain]\n", argv[0]);
    return 2;
  }
  try {
    const counter_kernels::Buffers buffers(copy_bytes);
    auto work = [&] {
      buffers.copy();
      buffers.fma();
      GPUPROF_CUDA_CHECK(cudaDeviceSynchronize());
    };
    if (plain) {
      work();
      return 0;
    }
    int status = 0;
    {
      gpuprof::CounterCaptureOptions options;
      options.ranges = gpuprof::CounterRanges::kernels;
      gpuprof::CounterCapture capture(options);
      work();
      const gpuprof::CounterSet set = capture.collect();
      print("kernel", set, set.kernels);
      if (!capture.active()) status = 1;
    }
    {
      gpuprof::CounterCapture capture;
      const gpuprof::CounterSet set = capture.measure([&] {
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
      print("scope", set, set.scopes);
      if (!capture.active()) status = 1;
    }
    return status;
  } catch (const std::exception& error) {
    std::fprintf(stderr, "counters_probe: %s\n", error.what());
    return 1;
  }
}
