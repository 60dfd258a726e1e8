// gpuprof/detail/kernel_capture_report.hpp: what a KernelCapture adds to each
// Profiler::report(): the newest records of its window, joined to the
// report's own scope nodes, the aggregates of every record folded past the
// window (detail/kernel_aggregates.hpp), and the count of records lost.
// Plain host code without CUPTI; the caller holds the capture's buffer mutex
// (detail/kernel_capture_activity.hpp) wherever records are read.
#pragma once
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "../config.hpp"
#include "../kernel_record.hpp"
#include "../report_model.hpp"
#include "cupti_join.hpp"
#include "kernel_aggregates.hpp"
#include "kernel_capture_join.hpp"
#include "recorder.hpp"

GPUPROF_NAMESPACE_BEGIN
namespace detail {

// Global scope node id -> index into report.nodes, through the paths: graph
// work is charged to the scope node it was captured in only where that node
// is in the report.
inline std::vector<int> report_nodes_by_scope_node(const Report& report) {
  Recorder& recorder = detail::recorder();
  const std::vector<GlobalNode> nodes = recorder.nodes_snapshot();
  std::vector<std::string> global_paths(nodes.size());
  // A parent's id is below its children's (it existed first).
  for (std::size_t node = 1; node < nodes.size(); ++node) {
    const std::uint32_t parent = nodes[node].parent;
    const std::string name = recorder.names().text(nodes[node].name);
    global_paths[node] = parent == root_node ? name : global_paths[parent] + "/" + name;
  }
  std::vector<std::string> report_paths;
  report_paths.reserve(report.nodes.size());
  for (const ScopeNode& node : report.nodes) report_paths.push_back(node.path);
  return report_nodes_by_path(global_paths, report_paths);
}

class KernelCaptureReport {
 public:
  // `joined`: every record `join` holds, joined against `report`
  // (report_nodes_by_scope_node). Fills the report's kernels, aggregates and
  // drop count, and has `join` forget the records folded for good.
  void add_to(Report& report, std::vector<KernelRecord> joined, KernelCaptureJoin& join,
              std::uint64_t dropped) {
    // A clear() on another thread since the join leaves nothing to drop.
    const std::size_t folded =
        std::min(aggregates_.contribute(report, std::move(joined)), join.record_count());
    join.forget_folded(folded);
    report.dropped_kernel_records = dropped;
  }
  // KernelCapture::set_window(): how many records stay raw (0: all).
  void set_window(std::size_t records) { aggregates_.set_window(records); }
  std::size_t window() const { return aggregates_.window(); }
  void clear() { aggregates_.clear(); }

 private:
  KernelAggregates aggregates_;
};

}  // namespace detail
GPUPROF_NAMESPACE_END
