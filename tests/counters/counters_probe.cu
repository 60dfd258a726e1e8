// Prints hardware counter values as CSV lines "mode,range,metric,value" for
// the known kernels of counter_kernels.cuh: per kernel (auto ranges) and per
// scope (user ranges). With --plain it only runs the kernels, once, in the
// same order, for Nsight Compute to measure (ncu cannot profile a process
// that holds the counters itself). scripts/counters_check.sh compares the two.
//
//   --user-replay  per kernel with user replay (the work once per pass), as
//                  ncu's application replay, instead of CUPTI's kernel replay
//   --evict        a read of the 512 MB source between the copy and the FMA
//                  chain: the copy's dirty lines leave L2 before the chain runs
//                  (the write-back check of counters_check.sh)
//   --gap-ms N     the GPU left idle for N ms after the copy (synchronize,
//                  then sleep): do dirty lines leave L2 while nothing runs?
//
// Exits 1 when counters cannot be collected, 2 on bad usage.
#include <gpuprof/counters.hpp>
#include <gpuprof/scope.hpp>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <thread>

#include "counter_kernels.cuh"

namespace {

constexpr std::size_t copy_bytes = std::size_t{512} << 20;

// Reads every byte of `in` and writes nothing: the memset(1) source sums to
// a positive number, never -1, but the compiler cannot know that.
__global__ void evict_kernel(const float4* in, std::size_t count, float* never_written) {
  const std::size_t stride = std::size_t{gridDim.x} * blockDim.x;
  float sum = 0;
  for (std::size_t i = std::size_t{blockIdx.x} * blockDim.x + threadIdx.x; i < count; i += stride) {
    const float4 v = in[i];
    sum += v.x + v.y + v.z + v.w;
  }
  if (sum == -1.0f) *never_written = sum;
}

struct ProbeOptions {
  bool plain = false, user_replay = false, evict = false;
  int gap_ms = 0;
};

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
  ProbeOptions probe;
  const auto usage = [&] {
    std::fprintf(stderr, "usage: %s [--plain] [--user-replay] [--evict] [--gap-ms 1..1000]\n", argv[0]);
    return 2;
  };
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--gap-ms") == 0) {
      char* end = nullptr;
      const long gap = i + 1 < argc ? std::strtol(argv[++i], &end, 10) : 0;
      if (probe.gap_ms != 0 || end == nullptr || *end != '\0' || gap < 1 || gap > 1000) return usage();
      probe.gap_ms = static_cast<int>(gap);
      continue;
    }
    bool* flag = std::strcmp(argv[i], "--plain") == 0         ? &probe.plain
                 : std::strcmp(argv[i], "--user-replay") == 0 ? &probe.user_replay
                 : std::strcmp(argv[i], "--evict") == 0       ? &probe.evict
                                                              : nullptr;
    if (flag == nullptr || *flag) return usage();
    *flag = true;
  }
  try {
    const counter_kernels::Buffers buffers(copy_bytes);
    auto work = [&] {
      buffers.copy();
      if (probe.gap_ms > 0) {
        GPUPROF_CUDA_CHECK(cudaDeviceSynchronize());
        std::this_thread::sleep_for(std::chrono::milliseconds(probe.gap_ms));
      }
      if (probe.evict) {
        evict_kernel<<<132 * 16, 256>>>(buffers.in, copy_bytes / sizeof(float4), buffers.fma_out);
        GPUPROF_CUDA_CHECK(cudaGetLastError());
      }
      buffers.fma();
      GPUPROF_CUDA_CHECK(cudaDeviceSynchronize());
    };
    if (probe.plain) {
      work();
      return 0;
    }
    int status = 0;
    {
      gpuprof::CounterCaptureOptions options;
      options.ranges = gpuprof::CounterRanges::kernels;
      if (probe.user_replay) options.replay = gpuprof::CounterReplay::user;
      gpuprof::CounterCapture capture(options);
      gpuprof::CounterSet set;
      if (probe.user_replay) {
        set = capture.measure(work);
      } else {
        work();
        set = capture.collect();
      }
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
