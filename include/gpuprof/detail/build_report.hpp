// gpuprof/detail/build_report.hpp: the call tree of a Report, from the
// aggregates of the instances read so far (scope_aggregates.hpp) and the
// global node table.
//
// Nodes that had instances or are still open are kept with all their
// ancestors. Siblings are ordered by their first instance (a node with none,
// only open, comes last), so the tree reads in execution order, and nodes
// come out depth-first, parents before children.
#pragma once
#include <algorithm>
#include <cstdint>
#include <functional>
#include <limits>
#include <string>
#include <tuple>
#include <vector>

#include "../clock.hpp"
#include "../config.hpp"
#include "../report_model.hpp"
#include "../stats.hpp"
#include "recorder.hpp"
#include "scope_aggregates.hpp"

GPUPROF_NAMESPACE_BEGIN
namespace detail {

// The innermost open scope of each thread (its global node), as report()
// found them: every node from there up to the root has one instance open.
inline std::vector<std::uint64_t> open_instance_counts(const std::vector<GlobalNode>& global_nodes,
                                                       const std::vector<std::uint32_t>& innermost) {
  std::vector<std::uint64_t> open(global_nodes.size(), 0);
  for (std::uint32_t node : innermost)
    for (; node != root_node && node < global_nodes.size(); node = global_nodes[node].parent) ++open[node];
  return open;
}

// Fills report.nodes and report.instances from `folded` and the instances
// not folded into it (`pending`: read for this report only). Summaries sort
// `folded`'s reservoirs in place (OnlineSamples::incremental_summary), so the
// next report sorts only what changed. `name_of` maps
// a name id to its text; `open` (by global node, empty: none) counts
// instances still running; `cold_ms` (by global node, -1 or empty: none) is
// each node's first warm-up time: such a node is kept even when no instance
// is left to count.
inline void build_scope_tree(const std::vector<GlobalNode>& global_nodes,
                             const std::function<std::string(std::uint32_t)>& name_of,
                             ScopeAggregates& folded, const std::vector<InstanceSnapshot>& pending,
                             Report& report, const std::vector<std::uint64_t>& open = {},
                             const std::vector<double>& cold_ms = {}) {
  ScopeAggregates with_pending;  // a copy only when there is something to add
  if (!pending.empty()) {
    with_pending = folded;
    for (const InstanceSnapshot& instance : pending) with_pending.add(instance);
  }
  ScopeAggregates& all = pending.empty() ? folded : with_pending;
  const std::size_t node_count = global_nodes.size();
  constexpr std::int64_t never = std::numeric_limits<std::int64_t>::max();
  std::vector<std::int64_t> first_begin(node_count, never);
  for (std::uint32_t node = 1; node < node_count && node < open.size(); ++node)
    if (open[node] > 0) first_begin[node] = never - 1;  // kept, after siblings that ran
  for (std::uint32_t node = 1; node < node_count && node < cold_ms.size(); ++node)
    if (cold_ms[node] >= 0)
      for (std::uint32_t up = node; up != root_node && first_begin[up] == never; up = global_nodes[up].parent)
        first_begin[up] = never - 1;
  std::vector<NodeAggregate>& aggregates = all.nodes();
  for (std::uint32_t node = 1; node < node_count && node < aggregates.size(); ++node) {
    if (aggregates[node].count == 0) continue;
    // An ancestor starts no later than its descendants.
    for (std::uint32_t up = node; up != root_node; up = global_nodes[up].parent)
      first_begin[up] = std::min(first_begin[up], aggregates[node].first_begin_ns);
  }

  std::vector<std::vector<std::uint32_t>> children(node_count);
  for (std::uint32_t node = 1; node < node_count; ++node)
    if (first_begin[node] != never) children[global_nodes[node].parent].push_back(node);
  for (auto& siblings : children)
    std::sort(siblings.begin(), siblings.end(), [&](std::uint32_t a, std::uint32_t b) {
      return std::tie(first_begin[a], a) < std::tie(first_begin[b], b);
    });

  std::vector<int> index_of(node_count, -1);
  report.nodes.clear();
  // Depth-first, iteratively: a deep tree must not overflow the stack.
  std::vector<std::uint32_t> pending_nodes(children[root_node].rbegin(), children[root_node].rend());
  while (!pending_nodes.empty()) {
    const std::uint32_t node = pending_nodes.back();
    pending_nodes.pop_back();
    const std::uint32_t parent = global_nodes[node].parent;
    ScopeNode out;
    out.name = name_of(global_nodes[node].name);
    out.parent = parent == root_node ? -1 : index_of[parent];
    if (out.parent >= 0) {
      const ScopeNode& up = report.nodes[static_cast<std::size_t>(out.parent)];
      out.depth = up.depth + 1;
      out.path = up.path + "/" + out.name;
    } else {
      out.path = out.name;
    }
    if (node < open.size()) out.open_instances = open[node];
    if (node < cold_ms.size()) out.cold_ms = cold_ms[node];
    if (node < aggregates.size() && aggregates[node].count > 0) {
      NodeAggregate& aggregate = aggregates[node];
      out.count = aggregate.count;
      // Work per instance: the mean of what the instances declared.
      const double count = static_cast<double>(aggregate.count);
      out.work = {aggregate.work_sum.flops / count, aggregate.work_sum.bytes / count,
                  aggregate.work_sum.tokens / count};
      out.host_ms = aggregate.host_ms.incremental_summary();
      out.gpu_ms = aggregate.gpu_ms.incremental_summary();
    } else {
      out.host_ms = summarize({});
      out.gpu_ms = summarize({});
    }
    index_of[node] = static_cast<int>(report.nodes.size());
    report.nodes.push_back(std::move(out));
    pending_nodes.insert(pending_nodes.end(), children[node].rbegin(), children[node].rend());
  }

  report.instances.clear();
  report.instances.reserve(all.recent().size());
  for (const InstanceSnapshot& instance : all.recent()) {
    ScopeInstance out;
    out.id = instance.id;
    out.node = index_of[instance.node];
    out.thread = instance.thread;
    out.host_begin_ns = instance.host_begin_ns;
    out.host_end_ns = instance.host_end_ns;
    out.gpu_ms = instance.gpu_ms;
    report.instances.push_back(out);
  }
  std::sort(report.instances.begin(), report.instances.end(),
            [](const ScopeInstance& a, const ScopeInstance& b) {
              return std::tie(a.host_begin_ns, a.id) < std::tie(b.host_begin_ns, b.id);
            });
  report.recorded_instances = all.instances();
}

}  // namespace detail
GPUPROF_NAMESPACE_END
