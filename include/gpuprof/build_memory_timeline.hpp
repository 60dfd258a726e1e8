// gpuprof/build_memory_timeline.hpp: builds Report::memory_timeline from
// boundary samples and allocation records, attributing each allocation to
// the scope that made it.
//
// ```cpp
// #include <gpuprof/build_memory_timeline.hpp>
// // allocations: KernelCapture::allocations()
// void add_timeline(gpuprof::Report& report, const std::vector<gpuprof::MemoryUsePoint>& in_use,
//                   const std::vector<gpuprof::AllocationRecord>& allocations) {
//   report.memory_timeline = gpuprof::build_memory_timeline(report, in_use, allocations);
// }
// ```
//
// Allocations are paired with their release by (device, address): a release
// closes the latest open allocation at that address. An allocation belongs to
// the innermost scope instance whose host interval holds its time stamp (the
// deepest; of equally deep ones, the latest to begin): allocation records
// carry no thread, so with scopes open on several threads at once the
// attribution is a best guess. Records at or after a release with no open
// allocation (freed memory allocated before capture began) are ignored.
#pragma once
#include <algorithm>
#include <cstdint>
#include <map>
#include <utility>
#include <vector>

#include "allocation_record.hpp"
#include "memory_timeline.hpp"
#include "report_model.hpp"

GPUPROF_NAMESPACE_BEGIN

// The innermost scope instance open at `time_ns`; nullptr if none.
inline const ScopeInstance* innermost_instance_at(const Report& report, std::int64_t time_ns) {
  const ScopeInstance* best = nullptr;
  int best_depth = -1;
  for (const ScopeInstance& instance : report.instances) {
    if (instance.host_begin_ns > time_ns) break;  // instances are in begin-time order
    if (instance.host_end_ns < time_ns || instance.node < 0) continue;
    const int depth = report.nodes[static_cast<std::size_t>(instance.node)].depth;
    if (depth >= best_depth) {
      best = &instance;
      best_depth = depth;
    }
  }
  return best;
}

inline MemoryTimeline build_memory_timeline(const Report& report, std::vector<MemoryUsePoint> in_use,
                                            std::vector<AllocationRecord> records) {
  MemoryTimeline timeline;
  std::stable_sort(in_use.begin(), in_use.end(),
                   [](const MemoryUsePoint& a, const MemoryUsePoint& b) { return a.time_ns < b.time_ns; });
  timeline.in_use = std::move(in_use);

  std::stable_sort(records.begin(), records.end(), [](const AllocationRecord& a, const AllocationRecord& b) {
    return a.time_ns < b.time_ns;
  });
  std::map<std::pair<std::uint32_t, std::uint64_t>, std::vector<std::size_t>>
      open;  // (device, address) -> indices
  for (const AllocationRecord& record : records) {
    const auto where = std::make_pair(record.device, record.address);
    if (record.bytes > 0) {
      TimelineAllocation allocation;
      allocation.address = record.address;
      allocation.bytes = record.bytes;
      allocation.alloc_ns = record.time_ns;
      allocation.from_pool = record.from_pool;
      if (const ScopeInstance* scope = innermost_instance_at(report, record.time_ns)) {
        allocation.scope_instance = scope->id;
        allocation.scope_path = report.nodes[static_cast<std::size_t>(scope->node)].path;
      }
      open[where].push_back(timeline.allocations.size());
      timeline.allocations.push_back(std::move(allocation));
    } else if (record.bytes < 0) {
      const auto found = open.find(where);
      if (found == open.end() || found->second.empty()) continue;
      timeline.allocations[found->second.back()].free_ns = record.time_ns;
      found->second.pop_back();
    }
  }
  return timeline;
}

GPUPROF_NAMESPACE_END
