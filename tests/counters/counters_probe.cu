// Prints hardware counter values as CSV lines "mode,range,metric,value" for
// the known kernels of counter_kernels.cuh: per kernel (auto ranges), per
// scope nested in a step (mode "scope": step, step/copy, step/fma) and per
// flat scope (mode "flat": copy, copy back, fma; user ranges). With --plain
// it only runs the kernels, once, in the same order, for Nsight Compute to
// measure (ncu cannot profile a process that holds the counters itself).
// scripts/counters_check.sh compares the two.
//
//   --user-replay    per kernel with user replay (the work once per pass), as
//                    ncu's application replay, instead of CUPTI's kernel replay
//   --reads N        N reads of the 512 MB source (0-4) between the copy and
//                    the FMA chain: the first takes the copy's dirty lines out
//                    of L2, a second finds only lines dirtied since the first
//                    (the write-back check of counters_check.sh)
//   --gap-ms N       the GPU left idle for N ms after the copy (synchronize,
//                    then sleep): do dirty lines leave L2 while nothing runs?
//   --metrics A,B    the per-kernel capture's metric set (default: the chip's)
//   --max-ranges N   the per-kernel capture's ranges per pass (default 512)
//   --profiler-ranges  with --plain: each kernel between cudaProfilerStart and
//                    cudaProfilerStop, so ncu's range replay measures each
//                    kernel as a range of its own
//   --tiny-first     the flat scopes open with a scope "tiny" around a 2 us
//                    FMA chain
//
// Exits 1 when counters cannot be collected, 2 on bad usage.
#include <cuda_profiler_api.h>
#include <gpuprof/counters.hpp>
#include <gpuprof/scope.hpp>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

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
  bool plain = false, user_replay = false, profiler_ranges = false, tiny_first = false;
  int reads = 0, gap_ms = 0;
  std::vector<std::string> metrics;
  std::size_t max_ranges = 512;
};

// The value of a numeric flag, or -1 when it is not a whole number in [low, high].
long number_in(const char* text, long low, long high) {
  char* end = nullptr;
  const long value = std::strtol(text, &end, 10);
  return end != text && *end == '\0' && value >= low && value <= high ? value : -1;
}

// The items of "A,B,C"; empty when the list is empty or has an empty item.
std::vector<std::string> metric_list(const std::string& list) {
  std::vector<std::string> items;
  std::istringstream in(list);
  for (std::string item; std::getline(in, item, ',');) {
    if (item.empty()) return {};
    items.push_back(item);
  }
  if (list.empty() || list.back() == ',') return {};
  return items;
}

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
    std::fprintf(stderr,
                 "usage: %s [--plain] [--user-replay] [--reads 0..4] [--gap-ms 1..1000] [--metrics A,B,...]"
                 " [--max-ranges 1..65536] [--profiler-ranges] [--tiny-first]\n",
                 argv[0]);
    return 2;
  };
  bool seen_reads = false, seen_gap = false, seen_metrics = false, seen_max_ranges = false;
  for (int i = 1; i < argc; ++i) {
    const std::string flag = argv[i];
    if (flag == "--plain" || flag == "--user-replay" || flag == "--profiler-ranges" ||
        flag == "--tiny-first") {
      bool& on = flag == "--plain"             ? probe.plain
                 : flag == "--user-replay"     ? probe.user_replay
                 : flag == "--profiler-ranges" ? probe.profiler_ranges
                                               : probe.tiny_first;
      if (on) return usage();
      on = true;
      continue;
    }
    if (i + 1 >= argc) return usage();
    const char* value = argv[++i];
    if (flag == "--reads" && !seen_reads) {
      seen_reads = true;
      probe.reads = static_cast<int>(number_in(value, 0, 4));
      if (probe.reads < 0) return usage();
    } else if (flag == "--gap-ms" && !seen_gap) {
      seen_gap = true;
      probe.gap_ms = static_cast<int>(number_in(value, 1, 1000));
      if (probe.gap_ms < 0) return usage();
    } else if (flag == "--metrics" && !seen_metrics) {
      seen_metrics = true;
      probe.metrics = metric_list(value);
      if (probe.metrics.empty()) return usage();
    } else if (flag == "--max-ranges" && !seen_max_ranges) {
      seen_max_ranges = true;
      const long ranges = number_in(value, 1, 65536);
      if (ranges < 0) return usage();
      probe.max_ranges = static_cast<std::size_t>(ranges);
    } else {
      return usage();
    }
  }
  if (probe.profiler_ranges && !probe.plain) return usage();
  if (probe.tiny_first && probe.plain) return usage();
  try {
    const counter_kernels::Buffers buffers(copy_bytes);
    // A kernel's launch, inside a profiler start/stop range of its own when asked.
    auto launch = [&](auto&& kernel) {
      if (probe.profiler_ranges) GPUPROF_CUDA_CHECK(cudaProfilerStart());
      kernel();
      GPUPROF_CUDA_CHECK(cudaGetLastError());
      if (probe.profiler_ranges) {
        GPUPROF_CUDA_CHECK(cudaDeviceSynchronize());
        GPUPROF_CUDA_CHECK(cudaProfilerStop());
      }
    };
    auto work = [&] {
      launch([&] { buffers.copy(); });
      if (probe.gap_ms > 0) {
        GPUPROF_CUDA_CHECK(cudaDeviceSynchronize());
        std::this_thread::sleep_for(std::chrono::milliseconds(probe.gap_ms));
      }
      for (int read = 0; read < probe.reads; ++read)
        launch([&] {
          evict_kernel<<<132 * 16, 256>>>(buffers.in, copy_bytes / sizeof(float4), buffers.fma_out);
        });
      launch([&] { buffers.fma(); });
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
      options.metrics = probe.metrics;
      options.max_ranges = probe.max_ranges;
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
    // The copy and the chain, with the copy back between them in the flat
    // scopes (and the tiny chain first with --tiny-first).
    auto scopes = [&](bool flat) {
      if (flat && probe.tiny_first) {
        GPUPROF_SCOPE("tiny");
        buffers.tiny_fma();
      }
      {
        GPUPROF_SCOPE("copy");
        buffers.copy();
      }
      if (flat) {
        GPUPROF_SCOPE("copy back");
        buffers.copy_back();
      }
      GPUPROF_SCOPE("fma");
      buffers.fma();
    };
    for (const bool flat : {false, true}) {
      gpuprof::CounterCapture capture;
      const gpuprof::CounterSet set = capture.measure([&] {
        if (flat) return scopes(true);
        GPUPROF_SCOPE("step");
        scopes(false);
      });
      print(flat ? "flat" : "scope", set, set.scopes);
      if (!capture.active()) status = 1;
    }
    return status;
  } catch (const std::exception& error) {
    std::fprintf(stderr, "counters_probe: %s\n", error.what());
    return 1;
  }
}
