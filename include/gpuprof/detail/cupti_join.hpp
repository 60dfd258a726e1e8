// gpuprof/detail/cupti_join.hpp: how kernel capture ties GPU activity to the
// scope and the host call that launched it. Plain host code with no CUPTI
// types, so the join is tested on synthetic records without a GPU.
//
// CUPTI gives every launching API call (runtime or driver) a correlation id,
// repeated in the kernel/memcpy/memset record it caused. With external
// correlation on, each API record is preceded by an EXTERNAL_CORRELATION
// record mapping that correlation id to the id on top of the calling thread's
// external-id stack: the innermost gpuprof scope instance.
//
// A graph launch is one API call for all the work its graph runs, so that
// correlation id only names the scope around the launch. Records of graph
// work also carry the executable graph's node id; GraphNodeScopes remembers,
// per node, the scope that was innermost when the node was created (stream
// capture or cudaGraphAdd*Node), and follows clones (instantiation, graph
// clones, child graphs) back to that original node.
#pragma once
#include <algorithm>
#include <cstdint>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "../config.hpp"
#include "../kernel_record.hpp"

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
  void clear() {
    scope_instance.clear();
    api_start_ns.clear();
  }
};

// Graph node id -> the scope instance innermost on the creating thread when
// the node was created (0: none, or not seen: created before capture began).
struct GraphNodeScopes {
  std::unordered_map<std::uint64_t, std::uint64_t> scope_of_node;

  // A node created through the API. Never overwrites: when CUPTI reports a
  // node as a clone too, the clone's original decides, whichever came first.
  void add_created(std::uint64_t node_id, std::uint64_t scope_instance) {
    scope_of_node.emplace(node_id, scope_instance);
  }
  // `clone` copies `original` (an executable graph's node, a cloned graph's,
  // a child graph's): it belongs where the original was captured.
  void add_clone(std::uint64_t clone_id, std::uint64_t original_id) {
    scope_of_node[clone_id] = scope_of(original_id);
  }
  std::uint64_t scope_of(std::uint64_t node_id) const {
    const auto found = scope_of_node.find(node_id);
    return found == scope_of_node.end() ? 0 : found->second;
  }
  void clear() { scope_of_node.clear(); }
};

// Fills scope_instance, graph_launch and launch_ns of every record. Eager
// work gets the scope of its launching call. Graph work gets the scope its
// node was captured in, with graph_launch = the launch's correlation id (one
// execution of that scope per launch); a node captured outside any scope, or
// whose scope is not in `reported` (when given: e.g. forgotten by a reset),
// falls back to the scope around the launch. Records without a match keep 0
// (launched outside any scope, or the API record was dropped). Returns how
// many records found no scope.
inline std::size_t join_correlations(std::vector<KernelRecord>& records, const CorrelationTables& tables,
                                     const GraphNodeScopes& graph_nodes = {},
                                     const std::unordered_set<std::uint64_t>* reported = nullptr) {
  std::size_t outside = 0;
  for (KernelRecord& record : records) {
    const std::uint64_t captured = record.graph_node_id != 0 ? graph_nodes.scope_of(record.graph_node_id) : 0;
    if (captured != 0 && (reported == nullptr || reported->count(captured) != 0)) {
      record.scope_instance = captured;
      record.graph_launch = record.correlation_id;
    } else {
      const auto scope = tables.scope_instance.find(record.correlation_id);
      record.scope_instance = scope == tables.scope_instance.end() ? 0 : scope->second;
      record.graph_launch = 0;
    }
    if (record.scope_instance == 0) ++outside;
    const auto launch = tables.api_start_ns.find(record.correlation_id);
    record.launch_ns = launch == tables.api_start_ns.end() ? 0 : launch->second;
  }
  return outside;
}

}  // namespace detail
GPUPROF_NAMESPACE_END
