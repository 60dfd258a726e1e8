// gpuprof/detail/kernel_capture_graph_split.hpp: how a KernelCapture keeps
// CUPTI's work at each graph launch from preceding the graph's execution.
//
// That work grows with the graph's nodes (about 1 to 1.5 us per node on the
// H100), and when the graph is one chain of kernel nodes the GPU starts none
// of it before all of it is done (+10 to +27 % on the small Transformer's
// train step). A node of another kind makes the driver submit the graph in
// pieces, and the GPU runs the first while CUPTI handles the rest (+2 to
// +4 %; docs/experiments/2026-11-26-capture-overhead-long-graphs.md). So once
// KernelCaptureOptions::graph_piece_nodes nodes were captured since the last
// split, the next captured scope to close adds one: an event record nothing
// waits for, put *before* the stream's last node, so it is never a loose end
// of the capture and the stream's own dependencies do not change (only where
// the capture ends in one node reached by plain edges). Split points follow
// the node count: a capture repeated gives the same topology (cudaGraphExecUpdate).
#pragma once
#include <cuda_runtime_api.h>

#include <cstddef>
#include <mutex>
#include <unordered_map>
#include <utility>
#include <vector>

#include "../config.hpp"
#include "../error.hpp"

GPUPROF_NAMESPACE_BEGIN
namespace detail {

class KernelCaptureGraphSplit {
 public:
  // At the close of a scope captured on `stream`: adds the split node if
  // `piece_nodes` nodes were captured since the last one. Returns the CUDA
  // call that failed, or nullptr. Throws gpuprof::Error if the split event
  // cannot be created.
  const char* split_if_due(cudaStream_t stream, std::size_t piece_nodes) {
    cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
    unsigned long long capture_id = 0;
    cudaGraph_t graph = nullptr;
    const cudaGraphNode_t* frontier = nullptr;
    std::size_t frontier_size = 0;
    if (cudaStreamGetCaptureInfo(stream, &status, &capture_id, &graph, &frontier, nullptr, &frontier_size) !=
        cudaSuccess)
      return "cudaStreamGetCaptureInfo";
    if (status != cudaStreamCaptureStatusActive || frontier_size != 1) return nullptr;
    std::size_t nodes = 0;
    if (cudaGraphGetNodes(graph, nullptr, &nodes) != cudaSuccess) return "cudaGraphGetNodes";
    {
      const std::lock_guard<std::mutex> lock(split_mutex_);
      if (nodes < split_point(capture_id) + piece_nodes) return nullptr;  // most closes end here
    }
    const cudaGraphNode_t last = frontier[0];
    std::size_t before_count = 0;
    if (cudaGraphNodeGetDependencies(last, nullptr, nullptr, &before_count) != cudaSuccess)
      return "cudaGraphNodeGetDependencies";
    std::vector<cudaGraphNode_t> before(before_count);
    std::vector<cudaGraphEdgeData> edges(before_count);
    if (before_count > 0 &&
        cudaGraphNodeGetDependencies(last, before.data(), edges.data(), &before_count) != cudaSuccess)
      return "cudaGraphNodeGetDependencies";
    for (const cudaGraphEdgeData& edge : edges)  // a programmatic edge keeps its overlap
      if (edge.type != cudaGraphDependencyTypeDefault || edge.from_port != 0 || edge.to_port != 0)
        return nullptr;
    {
      const std::lock_guard<std::mutex> lock(split_mutex_);
      split_point(capture_id) = nodes + 1;  // the split node itself
    }
    // The current device: work captured from this thread goes to it
    // (cudaStreamGetDevice would end the capture: it may not run inside one).
    int device = 0;
    if (cudaGetDevice(&device) != cudaSuccess) return "cudaGetDevice";
    cudaGraphNode_t split = nullptr;
    if (cudaGraphAddEventRecordNode(&split, graph, before.data(), before.size(), split_event(device)) !=
        cudaSuccess)
      return "cudaGraphAddEventRecordNode";
    if (cudaGraphAddDependencies(graph, &split, &last, nullptr, 1) != cudaSuccess)
      return "cudaGraphAddDependencies";
    return nullptr;
  }

 private:
  // The node count at the last split of a capture, for the most recent
  // captures (a process may capture any number of graphs; a few are open at once).
  std::size_t& split_point(unsigned long long capture_id) {
    for (auto& [id, nodes] : split_points_)
      if (id == capture_id) return nodes;
    if (split_points_.size() == max_split_captures) split_points_.erase(split_points_.begin());
    split_points_.emplace_back(capture_id, 0);
    return split_points_.back().second;
  }

  // One event per device, created on first use and never destroyed (nor is
  // the map, as the recorder is not): graphs holding a node that records it
  // may outlive this capture, and scopes may close during static
  // destruction. (After cudaDeviceReset the handle is stale; so are the
  // graphs that hold it.) Throws gpuprof::Error if CUDA refuses.
  static cudaEvent_t split_event(int device) {
    static auto* const mutex = new std::mutex;
    static auto* const events = new std::unordered_map<int, cudaEvent_t>;
    const std::lock_guard<std::mutex> lock(*mutex);
    cudaEvent_t& event = (*events)[device];
    if (!event) {  // `device` is the current one
      cudaEvent_t created = nullptr;
      GPUPROF_CUDA_CHECK(cudaEventCreateWithFlags(&created, cudaEventDisableTiming));
      event = created;
    }
    return event;
  }

  std::mutex split_mutex_;  // captures may run on several threads
  static constexpr std::size_t max_split_captures = 64;
  std::vector<std::pair<unsigned long long, std::size_t>>
      split_points_;  // (capture id, nodes at its last split)
};

}  // namespace detail
GPUPROF_NAMESPACE_END
