// What KernelCapture costs a CUDA-graph replay (a measurement, not a test).
//
// A graph of 10 "layer" scopes x 3 inner scopes x 10 kernels (300 kernels in
// nested scopes) is captured once and replayed in batches, launched back to
// back with one synchronisation per batch; prints the wall time per replay
// (median and minimum over batches). Compare a run with --capture against one
// without, in separate processes: CUPTI, once attached, stays for the process.
//
//   gpuprof_graph_capture_overhead [--capture] [--kernel-ns N] [--replays R] [--batches B]
//                                  [--buffer-mb M] [--device-buffer-mb D] [--blocks K]
//                                  [--sync-each]
//
// --kernel-ns 0 (default) launches a one-block kernel that does almost
// nothing (the worst case: overhead against the shortest kernels); N > 0
// spins each kernel for N ns of GPU time. --buffer-mb sets
// KernelCaptureOptions::buffer_bytes, --device-buffer-mb CUPTI's device
// buffer size (CUPTI_ACTIVITY_ATTR_DEVICE_BUFFER_SIZE), to see what they change.
// --blocks K launches each kernel with K blocks (does CUPTI's cost grow with
// them?). --sync-each waits for every replay before launching the next (as a
// benchmark timing each step does), so the host's time to launch is in the
// replay's time. Every run prints the mean host time spent in launch_graph.
// Exit status: 0 done, 1 a CUDA or CUPTI call failed, 2 bad arguments, 3 no
// usable GPU or kernel capture unavailable.
#include <gpuprof/cupti.hpp>
#include <gpuprof/device.hpp>
#include <gpuprof/graph.hpp>
#include <gpuprof/profiler.hpp>
#include <gpuprof/scope.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

namespace {

__device__ long long global_timer_ns() {
  long long now;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
  return now;
}

__global__ void work_kernel(float* data, long long spin_ns) {
  if (spin_ns > 0) {
    const long long start = global_timer_ns();
    while (global_timer_ns() - start < spin_ns) {
    }
  }
  data[threadIdx.x] += 1.0f;
}

constexpr const char* usage =
    "usage: gpuprof_graph_capture_overhead [--capture] [--kernel-ns N] [--replays R] [--batches B]\n"
    "         [--buffer-mb M] [--device-buffer-mb D] [--blocks K] [--sync-each]\n"
    "Wall time per replay of a 300-kernel CUDA graph in nested scopes; run once with and once\n"
    "without --capture (separate processes) to see what kernel capture costs.\n"
    "  --capture             capture every kernel with a KernelCapture\n"
    "  --kernel-ns N         each kernel spins N ns of GPU time (default 0: almost nothing)\n"
    "  --replays R           replays per batch (default 200)\n"
    "  --batches B           batches, one synchronisation each (default 7)\n"
    "  --buffer-mb M         KernelCaptureOptions::buffer_bytes in MiB (default: its default)\n"
    "  --device-buffer-mb D  CUPTI's device buffer in MiB (default: CUPTI's)\n"
    "  --blocks K            blocks per kernel (default 1)\n"
    "  --sync-each           wait for every replay before launching the next\n"
    "  -h, --help            this text\n"
    "exit status: 0 done; 1 a CUDA or CUPTI call failed; 2 bad arguments; 3 no usable GPU, or\n"
    "kernel capture unavailable\n";

struct Options {
  bool help = false;
  bool capture = false;
  long long kernel_ns = 0;
  int replays = 200;
  int batches = 7;
  long long buffer_mb = 0;         // 0: KernelCaptureOptions' default
  long long device_buffer_mb = 0;  // 0: CUPTI's default
  int blocks = 1;
  bool sync_each = false;
};

Options parse(int argc, char** argv) {
  Options options;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    const auto value = [&]() -> long long {
      if (i + 1 >= argc) throw std::invalid_argument(arg + " needs a value");
      char* end = nullptr;
      const long long parsed = std::strtoll(argv[++i], &end, 10);
      if (*end != '\0' || parsed < 0) throw std::invalid_argument(arg + " needs a non-negative integer");
      return parsed;
    };
    if (arg == "--help" || arg == "-h") options.help = true;
    else if (arg == "--capture") options.capture = true;
    else if (arg == "--sync-each") options.sync_each = true;
    else if (arg == "--kernel-ns") options.kernel_ns = value();
    else if (arg == "--replays") options.replays = static_cast<int>(std::max(1LL, value()));
    else if (arg == "--batches") options.batches = static_cast<int>(std::max(1LL, value()));
    else if (arg == "--buffer-mb") options.buffer_mb = value();
    else if (arg == "--device-buffer-mb") options.device_buffer_mb = value();
    else if (arg == "--blocks") options.blocks = static_cast<int>(std::max(1LL, value()));
    else throw std::invalid_argument("unknown argument " + arg);
  }
  return options;
}

constexpr int layers = 10, kernels_per_scope = 10;
constexpr int kernels_per_replay = layers * 3 * kernels_per_scope;

void launch_some(float* data, long long spin_ns, int blocks, cudaStream_t stream) {
  for (int k = 0; k < kernels_per_scope; ++k) work_kernel<<<blocks, 32, 0, stream>>>(data, spin_ns);
}

void scoped_step(float* data, long long spin_ns, int blocks, cudaStream_t stream) {
  GPUPROF_SCOPE("step", stream);
  for (int layer = 0; layer < layers; ++layer) {
    GPUPROF_SCOPE("layer", stream);
    {
      GPUPROF_SCOPE("norm", stream);
      launch_some(data, spin_ns, blocks, stream);
    }
    {
      GPUPROF_SCOPE("attention", stream);
      launch_some(data, spin_ns, blocks, stream);
    }
    {
      GPUPROF_SCOPE("mlp", stream);
      launch_some(data, spin_ns, blocks, stream);
    }
  }
  GPUPROF_CUDA_CHECK(cudaGetLastError());
}

int run(const Options& options) {
  std::unique_ptr<gpuprof::KernelCapture> capture;
  if (options.capture) {
    if (options.device_buffer_mb > 0) {  // before CUDA makes its context
      std::size_t bytes = static_cast<std::size_t>(options.device_buffer_mb) << 20;
      std::size_t size = sizeof bytes;
      GPUPROF_CUPTI_CHECK(cuptiActivitySetAttribute(CUPTI_ACTIVITY_ATTR_DEVICE_BUFFER_SIZE, &size, &bytes));
    }
    gpuprof::KernelCaptureOptions capture_options;
    if (options.buffer_mb > 0)
      capture_options.buffer_bytes = static_cast<std::size_t>(options.buffer_mb) << 20;
    capture = std::make_unique<gpuprof::KernelCapture>(capture_options);
    if (!capture->active()) return 3;  // the capture said why on stderr
  }
  float* data = nullptr;
  GPUPROF_CUDA_CHECK(cudaMalloc(&data, 32 * sizeof(float)));
  cudaStream_t stream = nullptr;
  GPUPROF_CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  cudaGraph_t graph = nullptr;
  // With capture on, the scopes are timed from its records and add nothing
  // to the graph; without it they would add stamp kernels. Captured with
  // scope GPU timing off in that run, both graphs hold the same kernels, so
  // the difference is the capture's own cost (as transformer_profile compares).
  if (!capture) gpuprof::profiler().set_gpu_timing(false);
  GPUPROF_CUDA_CHECK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal));
  scoped_step(data, options.kernel_ns, options.blocks, stream);
  GPUPROF_CUDA_CHECK(cudaStreamEndCapture(stream, &graph));
  gpuprof::profiler().set_gpu_timing(true);
  cudaGraphExec_t exec = nullptr;
  GPUPROF_CUDA_CHECK(cudaGraphInstantiate(&exec, graph, 0));

  for (int i = 0; i < 20; ++i) gpuprof::launch_graph(exec, stream);  // warm-up
  GPUPROF_CUDA_CHECK(cudaStreamSynchronize(stream));
  std::vector<double> per_replay_us;
  std::chrono::steady_clock::duration launching{};
  for (int batch = 0; batch < options.batches; ++batch) {
    const auto begin = std::chrono::steady_clock::now();
    for (int i = 0; i < options.replays; ++i) {
      const auto launch_begin = std::chrono::steady_clock::now();
      gpuprof::launch_graph(exec, stream);
      launching += std::chrono::steady_clock::now() - launch_begin;
      if (options.sync_each) GPUPROF_CUDA_CHECK(cudaStreamSynchronize(stream));
    }
    GPUPROF_CUDA_CHECK(cudaStreamSynchronize(stream));
    const auto end = std::chrono::steady_clock::now();
    per_replay_us.push_back(std::chrono::duration<double, std::micro>(end - begin).count() / options.replays);
  }
  std::sort(per_replay_us.begin(), per_replay_us.end());

  // With capture on: is every kernel there and charged to its inner scope?
  std::size_t records = 0, unattributed = 0;
  std::uint64_t dropped = 0;
  if (capture) {
    const gpuprof::Report report = gpuprof::profiler().report();
    records = report.kernels.size();
    for (const gpuprof::KernelRecord& record : report.kernels)
      if (record.scope_node < 0 || record.graph_launch == 0) ++unattributed;
    dropped = report.dropped_kernel_records;
  }
  const long long launches = 20 + static_cast<long long>(options.batches) * options.replays;
  std::printf(
      "graph_replay sync_each=%d launch_host_us=%.2f capture=%s blocks=%d buffer_mb=%lld "
      "device_buffer_mb=%lld kernel_ns=%lld kernels=%d replays=%d median_us=%.2f min_us=%.2f "
      "records=%zu expected=%lld unattributed=%zu dropped=%llu\n",
      options.sync_each ? 1 : 0,
      std::chrono::duration<double, std::micro>(launching).count() / (options.batches * options.replays),
      options.capture ? "on" : "off", options.blocks, options.buffer_mb, options.device_buffer_mb,
      options.kernel_ns, kernels_per_replay, options.replays, per_replay_us[per_replay_us.size() / 2],
      per_replay_us.front(), records,
      options.capture ? static_cast<long long>(kernels_per_replay) * launches : 0LL, unattributed,
      static_cast<unsigned long long>(dropped));
  GPUPROF_CUDA_CHECK(cudaGraphExecDestroy(exec));
  GPUPROF_CUDA_CHECK(cudaGraphDestroy(graph));
  GPUPROF_CUDA_CHECK(cudaStreamDestroy(stream));
  GPUPROF_CUDA_CHECK(cudaFree(data));
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    const Options options = parse(argc, argv);
    if (options.help) {
      std::fputs(usage, stdout);
      return 0;
    }
    if (const gpuprof::DeviceStatus device = gpuprof::device_status(); !device.usable) {
      std::fprintf(stderr, "gpuprof_graph_capture_overhead: %s\n", device.reason.c_str());
      return 3;
    }
    return run(options);
  } catch (const std::invalid_argument& error) {
    std::fprintf(stderr, "gpuprof_graph_capture_overhead: %s\n%s", error.what(), usage);
    return 2;
  } catch (const std::exception& error) {
    std::fprintf(stderr, "gpuprof_graph_capture_overhead: %s\n", error.what());
    return 1;
  }
}
