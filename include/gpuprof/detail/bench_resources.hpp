// gpuprof/detail/bench_resources.hpp: the CUDA objects bench() owns for one
// run: the L2-flush scratch buffer and the captured graph of the function.
#pragma once
#include "../config.hpp"

#if GPUPROF_WITH_CUDA
#include <cstddef>
#include <utility>

#include "../cuda_events.hpp"
#include "../error.hpp"
#include "recorder.hpp"

GPUPROF_NAMESPACE_BEGIN
namespace detail {

// A device buffer exactly as large as the current device's L2 cache;
// overwriting it evicts whatever the benchmarked function left in L2.
class L2Flusher {
 public:
  L2Flusher() {
    int device = 0, l2_bytes = 0;
    GPUPROF_CUDA_CHECK(cudaGetDevice(&device));
    GPUPROF_CUDA_CHECK(cudaDeviceGetAttribute(&l2_bytes, cudaDevAttrL2CacheSize, device));
    bytes_ = static_cast<std::size_t>(l2_bytes);
    if (bytes_ > 0) GPUPROF_CUDA_CHECK(cudaMalloc(&scratch_, bytes_));
  }
  ~L2Flusher() {
    if (scratch_) cudaFree(scratch_);  // nothing useful to do with a failure here
  }
  L2Flusher(const L2Flusher&) = delete;
  L2Flusher& operator=(const L2Flusher&) = delete;

  std::size_t bytes() const noexcept { return bytes_; }
  // Writes the whole buffer on `stream` and waits, so the flush is in no sample.
  // The byte changes each time: a memset of unchanged contents is still a
  // write, but there is no reason to let any layer prove that.
  void flush(Stream stream) {
    if (!scratch_) return;
    GPUPROF_CUDA_CHECK(cudaMemsetAsync(scratch_, ++fill_ & 0xFF, bytes_, stream));
    GPUPROF_CUDA_CHECK(cudaStreamSynchronize(stream));
  }

 private:
  void* scratch_ = nullptr;
  std::size_t bytes_ = 0;
  int fill_ = 0;
};

// fn() captured once on `stream` into an executable graph.
class CapturedGraph {
 public:
  template <class Fn>
  CapturedGraph(Fn& fn, Stream stream) : stream_(stream) {
    if (stream == nullptr)
      throw Error(
          "gpuprof::bench: cuda_graph needs BenchOptions::stream (the legacy default stream cannot be "
          "captured)");
    GPUPROF_CUDA_CHECK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal));
    try {
      fn();
    } catch (...) {
      cudaGraph_t abandoned = nullptr;
      if (cudaStreamEndCapture(stream, &abandoned) == cudaSuccess && abandoned) cudaGraphDestroy(abandoned);
      throw;
    }
    GPUPROF_CUDA_CHECK(cudaStreamEndCapture(stream, &graph_));
    GPUPROF_CUDA_CHECK(cudaGraphInstantiate(&exec_, graph_, 0));
  }
  ~CapturedGraph() {
    if (exec_) cudaGraphExecDestroy(exec_);
    if (graph_) cudaGraphDestroy(graph_);
  }
  CapturedGraph(const CapturedGraph&) = delete;
  CapturedGraph& operator=(const CapturedGraph&) = delete;

  // Scopes captured in fn are timed per replay; their rings are read as it goes.
  void launch() {
    GPUPROF_CUDA_CHECK(cudaGraphLaunch(exec_, stream_));
    recorder().graph_timings().note_launch();
  }

 private:
  Stream stream_;
  cudaGraph_t graph_ = nullptr;
  cudaGraphExec_t exec_ = nullptr;
};

}  // namespace detail
GPUPROF_NAMESPACE_END

#endif  // GPUPROF_WITH_CUDA
