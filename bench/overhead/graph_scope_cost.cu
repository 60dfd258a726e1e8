// graph_scope_cost: what timing a scope inside a CUDA graph costs the GPU on
// every replay, for the ways it could be done (the numbers behind the choice
// in detail/graph_timing.hpp). A graph of 100 tiny memsets in a chain, each
// wrapped in one of:
//   nothing                      the baseline
//   gpuprof scope                the two stamp kernels gpuprof adds
//   empty kernel pair            the floor of any kernel-based stamp
//   globaltimer pair, device mem stamps without system-scope fences
//   event record node pair       cudaEventRecordWithFlags(External): cheap,
//                                but every replay overwrites the last one
// Prints GPU ns added per wrapped memset per replay (median of 7).
// Exit status: 0 done, 1 a CUDA call failed, 2 bad arguments, 3 no usable GPU.
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <functional>
#include <vector>

#include <cuda_runtime_api.h>

#include <gpuprof/device.hpp>
#include <gpuprof/graph.hpp>
#include <gpuprof/profiler.hpp>
#include <gpuprof/scope.hpp>

namespace {

void check(cudaError_t status) {
  if (status != cudaSuccess) {
    std::fprintf(stderr, "graph_scope_cost: %s\n", cudaGetErrorString(status));
    std::exit(1);
  }
}

__global__ void empty_kernel() {}
__global__ void device_stamp(std::uint64_t* slot) {
  std::uint64_t now;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
  *slot = now;
}

constexpr int memsets = 100, replays = 50, runs = 7;

// GPU ns per replay of a graph whose memsets are wrapped by `wrap`.
double replay_ns(cudaStream_t stream, void* scratch,
                 const std::function<void(int, const std::function<void()>&)>& wrap) {
  cudaGraph_t graph = nullptr;
  cudaGraphExec_t exec = nullptr;
  check(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal));
  for (int i = 0; i < memsets; ++i) wrap(i, [&] { check(cudaMemsetAsync(scratch, i, 4, stream)); });
  check(cudaStreamEndCapture(stream, &graph));
  check(cudaGraphInstantiate(&exec, graph, 0));
  check(cudaGraphLaunch(exec, stream));
  check(cudaStreamSynchronize(stream));
  cudaEvent_t begin, end;
  check(cudaEventCreate(&begin));
  check(cudaEventCreate(&end));
  check(cudaEventRecord(begin, stream));
  for (int r = 0; r < replays; ++r) gpuprof::launch_graph(exec, stream);
  check(cudaEventRecord(end, stream));
  check(cudaStreamSynchronize(stream));
  float ms = 0;
  check(cudaEventElapsedTime(&ms, begin, end));
  cudaEventDestroy(begin);
  cudaEventDestroy(end);
  cudaGraphExecDestroy(exec);
  cudaGraphDestroy(graph);
  return 1e6 * ms / replays;
}

constexpr const char* usage =
    "usage: graph_scope_cost\n"
    "GPU ns a scope inside a CUDA graph adds to each replay, against the other ways it could\n"
    "be timed (no options; prints a table).\n"
    "  -h, --help  this text\n"
    "exit status: 0 done; 1 a CUDA call failed; 2 bad arguments; 3 no usable GPU\n";

}  // namespace

int main(int argc, char** argv) {
  if (argc == 2 && (std::strcmp(argv[1], "--help") == 0 || std::strcmp(argv[1], "-h") == 0)) {
    std::fputs(usage, stdout);
    return 0;
  }
  if (argc != 1) {
    std::fprintf(stderr, "graph_scope_cost: unknown argument %s\n%s", argv[1], usage);
    return 2;
  }
  if (const gpuprof::DeviceStatus device = gpuprof::device_status(); !device.usable) {
    std::fprintf(stderr, "graph_scope_cost: %s\n", device.reason.c_str());
    return 3;
  }
  cudaStream_t stream = nullptr;
  check(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  void* scratch = nullptr;
  std::uint64_t* slots = nullptr;
  check(cudaMalloc(&scratch, 4));
  check(cudaMalloc(&slots, 2 * memsets * sizeof(std::uint64_t)));
  std::vector<cudaEvent_t> events(2 * memsets);
  for (auto& event : events) check(cudaEventCreateWithFlags(&event, cudaEventDefault));

  using Body = std::function<void()>;
  struct Case {
    const char* name;
    std::function<void(int, const Body&)> wrap;
  };
  const std::vector<Case> cases{
      {"nothing (baseline)", [](int, const Body& body) { body(); }},
      {"gpuprof scope (stamp kernels)",
       [&](int, const Body& body) {
         GPUPROF_SCOPE("graph scope cost", stream);
         body();
       }},
      {"empty kernel pair",
       [&](int, const Body& body) {
         empty_kernel<<<1, 1, 0, stream>>>();
         body();
         empty_kernel<<<1, 1, 0, stream>>>();
       }},
      {"globaltimer pair to device memory",
       [&](int i, const Body& body) {
         device_stamp<<<1, 1, 0, stream>>>(slots + 2 * i);
         body();
         device_stamp<<<1, 1, 0, stream>>>(slots + 2 * i + 1);
       }},
      {"event record node pair (External)",
       [&](int i, const Body& body) {
         check(cudaEventRecordWithFlags(events[2 * i], stream, cudaEventRecordExternal));
         body();
         check(cudaEventRecordWithFlags(events[2 * i + 1], stream, cudaEventRecordExternal));
       }},
  };
  std::vector<std::vector<double>> samples(cases.size());
  for (int run = 0; run < runs; ++run)
    for (std::size_t c = 0; c < cases.size(); ++c)
      samples[c].push_back(replay_ns(stream, scratch, cases[c].wrap));
  std::printf(
      "graph_scope_cost: GPU ns added per wrapped node per replay (median of %d runs of %d replays)\n", runs,
      replays);
  std::sort(samples[0].begin(), samples[0].end());
  const double baseline = samples[0][runs / 2];
  std::printf("%-40s %8.0f ns per replay of %d memsets\n", cases[0].name, baseline, memsets);
  for (std::size_t c = 1; c < cases.size(); ++c) {
    std::sort(samples[c].begin(), samples[c].end());
    std::printf("%-40s %8.0f\n", cases[c].name, (samples[c][runs / 2] - baseline) / memsets);
  }
  gpuprof::profiler().reset();
  return 0;
}
