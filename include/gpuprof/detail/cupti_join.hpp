// gpuprof/detail/cupti_join.hpp: how kernel capture ties GPU activity to the
// scope and the host call that launched it. Plain host code with no CUPTI
// types, so the join is tested on synthetic records without a GPU.
//
// Records are joined by CUPTI's correlation id to the scope instance on top
// of the launching thread's external-id stack; work a CUDA graph runs, by its
// graph node to the scope that was innermost when the node was created. How:
// docs/internals.md#joining-cupti-records-to-scopes-detailcupti_joinhpp
#pragma once
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string>
#include <unordered_map>
#include <vector>

#include "../config.hpp"
#include "../kernel_record.hpp"
#include "graph_intervals.hpp"

GPUPROF_NAMESPACE_BEGIN
namespace detail {

struct CorrelationTables {
  std::unordered_map<std::uint32_t, std::uint64_t> scope_instance;  // correlation id -> external id
  std::unordered_map<std::uint32_t, std::int64_t> api_start_ns;     // correlation id -> API call start

  void add_external(std::uint32_t correlation_id, std::uint64_t external_id) {
    scope_instance[correlation_id] = external_id;
  }
  // A runtime call and the driver call inside it share a correlation id; the
  // outer (earlier) start is the launch as the user wrote it.
  void add_api_call(std::uint32_t correlation_id, std::int64_t start_ns) {
    const auto [slot, inserted] = api_start_ns.emplace(correlation_id, start_ns);
    if (!inserted) slot->second = std::min(slot->second, start_ns);
  }
  // A launch whose records were all folded (detail/kernel_aggregates.hpp).
  void forget(std::uint32_t correlation_id) {
    scope_instance.erase(correlation_id);
    api_start_ns.erase(correlation_id);
  }
  void clear() {
    scope_instance.clear();
    api_start_ns.clear();
  }
};

// Graph node id -> the global scope node and the scope instance innermost on
// the creating thread when the node was created (0 for both: none, or not
// seen: created before capture began).
struct GraphNodeScopes {
  struct Origin {
    std::uint32_t scope_node = 0;
    std::uint64_t scope_instance = 0;
  };
  std::unordered_map<std::uint64_t, Origin> origin_of_node;

  // A node created through the API. Never overwrites: when CUPTI reports a
  // node as a clone too, the clone's original decides, whichever came first.
  void add_created(std::uint64_t node_id, std::uint32_t scope_node, std::uint64_t scope_instance = 0) {
    origin_of_node.emplace(node_id, Origin{scope_node, scope_instance});
  }
  // `clone` copies `original` (an executable graph's node, a cloned graph's,
  // a child graph's): it belongs where the original was captured.
  void add_clone(std::uint64_t clone_id, std::uint64_t original_id) {
    origin_of_node[clone_id] = origin_of(original_id);
  }
  Origin origin_of(std::uint64_t node_id) const {
    const auto found = origin_of_node.find(node_id);
    return found == origin_of_node.end() ? Origin{} : found->second;
  }
  std::uint32_t scope_of(std::uint64_t node_id) const { return origin_of(node_id).scope_node; }
  std::uint64_t instance_of(std::uint64_t node_id) const { return origin_of(node_id).scope_instance; }
  void clear() { origin_of_node.clear(); }
};

// Per captured scope instance and graph launch: first start to last end of
// the graph work (records with a graph node id, before or after the join)
// whose node was created inside that scope instance or inside a captured scope
// nested in it. The chain of enclosing instances stops at the first one that
// is not in `scopes` (an eager scope around the capture). Records of nodes
// created outside every captured scope count for none. Sorted by begin, then
// scope id.
inline std::vector<GraphInterval> graph_scope_intervals(const std::vector<KernelRecord>& records,
                                                        const GraphNodeScopes& graph_nodes,
                                                        const std::vector<CapturedScope>& scopes) {
  std::unordered_map<std::uint64_t, std::uint64_t> parent_of;
  parent_of.reserve(scopes.size());
  for (const CapturedScope& scope : scopes) parent_of.emplace(scope.id, scope.parent);
  std::vector<GraphInterval> intervals;
  std::unordered_map<std::uint64_t, std::unordered_map<std::uint32_t, std::size_t>>
      index;  // scope -> launch -> interval
  for (const KernelRecord& record : records) {
    if (record.graph_node_id == 0) continue;
    // A parent opened before its child on the same thread, so its id is
    // smaller: the walk ends.
    for (auto up = parent_of.find(graph_nodes.instance_of(record.graph_node_id)); up != parent_of.end();
         up = parent_of.find(up->second)) {
      const auto [slot, added] = index[up->first].emplace(record.correlation_id, intervals.size());
      if (added) {
        intervals.push_back({up->first, record.correlation_id, record.start_ns, record.end_ns});
        continue;
      }
      GraphInterval& interval = intervals[slot->second];
      interval.begin_ns = std::min(interval.begin_ns, record.start_ns);
      interval.end_ns = std::max(interval.end_ns, record.end_ns);
    }
  }
  std::sort(intervals.begin(), intervals.end(), [](const GraphInterval& a, const GraphInterval& b) {
    return a.begin_ns != b.begin_ns ? a.begin_ns < b.begin_ns : a.scope < b.scope;
  });
  return intervals;
}

// The begin/end stamp kernels that time scopes inside CUDA graphs
// (detail/graph_timing.hpp names them gpuprof_graph_stamp_begin/_end): gpuprof's
// own overhead, not the user's work, so kernel capture does not keep them.
inline constexpr char graph_stamp_prefix[] = "gpuprof_graph_stamp_";
inline bool is_graph_stamp(const char* raw_name) {
  return raw_name != nullptr &&
         std::strncmp(raw_name, graph_stamp_prefix, sizeof graph_stamp_prefix - 1) == 0;
}

// Fills scope_instance, scope_node, graph_launch and launch_ns of every
// record. Eager work gets the scope instance of its launching call. Graph
// work gets the scope node its graph node was captured in, as an index into
// the report's nodes through `report_node_of_scope` (indexed by global scope
// node id, -1 for a node not in the report), with scope_instance 0 and
// graph_launch = the launch's correlation id (one execution of that node per
// launch). A node captured outside any scope, or whose scope node is not in
// the report (or no report is given), falls back to the scope instance
// around the launch. Records without a match keep scope_instance 0 and
// scope_node -1 (launched outside any scope, or the API record was dropped).
// Returns how many records found no scope.
inline std::size_t join_correlations(std::vector<KernelRecord>& records, const CorrelationTables& tables,
                                     const GraphNodeScopes& graph_nodes = {},
                                     const std::vector<int>& report_node_of_scope = {}) {
  std::size_t outside = 0;
  for (KernelRecord& record : records) {
    const std::uint32_t captured = record.graph_node_id != 0 ? graph_nodes.scope_of(record.graph_node_id) : 0;
    record.scope_node =
        captured != 0 && captured < report_node_of_scope.size() ? report_node_of_scope[captured] : -1;
    if (record.scope_node >= 0) {
      record.scope_instance = 0;
      record.graph_launch = record.correlation_id;
    } else {
      const auto scope = tables.scope_instance.find(record.correlation_id);
      record.scope_instance = scope == tables.scope_instance.end() ? 0 : scope->second;
      record.graph_launch = 0;
      if (record.scope_instance == 0) ++outside;
    }
    const auto launch = tables.api_start_ns.find(record.correlation_id);
    record.launch_ns = launch == tables.api_start_ns.end() ? 0 : launch->second;
  }
  return outside;
}

// Global scope node id -> index into Report::nodes (-1: not in the report),
// from every global node's path (index 0, the root, has none). Paths are
// unique: a global node is one (parent, name) pair, and the report's nodes
// carry the same paths.
inline std::vector<int> report_nodes_by_path(const std::vector<std::string>& global_paths,
                                             const std::vector<std::string>& report_paths) {
  std::unordered_map<std::string, int> report_index;
  report_index.reserve(report_paths.size());
  for (std::size_t i = 0; i < report_paths.size(); ++i)
    report_index.emplace(report_paths[i], static_cast<int>(i));
  std::vector<int> index(global_paths.size(), -1);
  for (std::size_t g = 1; g < global_paths.size(); ++g) {
    const auto found = report_index.find(global_paths[g]);
    if (found != report_index.end()) index[g] = found->second;
  }
  return index;
}

}  // namespace detail
GPUPROF_NAMESPACE_END
