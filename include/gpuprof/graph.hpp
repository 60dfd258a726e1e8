// gpuprof/graph.hpp: launching a CUDA graph that holds gpuprof scopes.
//
// ```cpp
// #include <cuda_runtime.h>
// #include <gpuprof/graph.hpp>
// void replay(cudaStream_t s, void (*step)(cudaStream_t)) {  // GPUPROF_SCOPE(..., s) inside step
//   cudaGraph_t graph;
//   cudaGraphExec_t exec;
//   GPUPROF_CUDA_CHECK(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal));
//   step(s);
//   GPUPROF_CUDA_CHECK(cudaStreamEndCapture(s, &graph));
//   GPUPROF_CUDA_CHECK(cudaGraphInstantiate(&exec, graph, 0));
//   for (int i = 0; i < 100; ++i) gpuprof::launch_graph(exec, s);  // or cudaGraphLaunch
// }
// ```
//
// Scopes captured into a graph are timed on every replay, whoever launches
// it (detail/graph_timing.hpp; under a capturing KernelCapture, from its
// records: detail/graph_intervals.hpp). launch_graph adds two things to a plain
// cudaGraphLaunch: an NVTX range around the launch named after the scope
// that encloses it (the ranges pushed during capture are not replayed, so
// this is what Nsight Systems shows, projected onto the graph's kernels),
// and a read of the replays' time stamps every 64 launches, so that none is
// overwritten before it is read while the GPU keeps within 192 launches of
// the host.
#pragma once
#include "config.hpp"

#if GPUPROF_WITH_CUDA && !defined(GPUPROF_DISABLE)
#include "detail/recorder.hpp"
#include "error.hpp"

GPUPROF_NAMESPACE_BEGIN

inline void launch_graph(cudaGraphExec_t exec, Stream stream) {
  detail::Recorder& recorder = detail::recorder();
  detail::ThreadState& thread = recorder.this_thread();
  static const detail::NameEntry& unscoped = recorder.names().intern("gpuprof graph launch");
  const std::uint32_t current = thread.current.load(std::memory_order_relaxed);
  const NvtxName& range =
      current == detail::root_node ? unscoped.nvtx : recorder.names().entry(recorder.node_name(current)).nvtx;
  range.push();
  const cudaError_t status = cudaGraphLaunch(exec, stream);
  nvtx_pop();
  GPUPROF_CUDA_CHECK(status);
  recorder.graph_timings().note_launch();
}

GPUPROF_NAMESPACE_END

#elif GPUPROF_WITH_CUDA  // GPUPROF_DISABLE: a plain launch
#include "error.hpp"

GPUPROF_NAMESPACE_BEGIN
inline void launch_graph(cudaGraphExec_t exec, cudaStream_t stream) {
  GPUPROF_CUDA_CHECK(cudaGraphLaunch(exec, stream));
}
GPUPROF_NAMESPACE_END

#endif
