// gpuprof/memory_timeline.hpp: device memory in use over a run, as plain
// data in the report model (Report::memory_timeline).
//
// Two sources, either may be empty: device memory in use sampled at scope
// boundaries (MemoryWatch's cudaMemGetInfo readings), and the allocations
// kernel capture saw (CUPTI MEMORY2), each paired with its release and
// attributed to the innermost scope open when it was made. The HTML report
// draws the allocations as a stacked timeline of live blocks, the picture
// PyTorch's memory viewer gives. build_memory_timeline.hpp builds it.
#pragma once
#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "config.hpp"

GPUPROF_NAMESPACE_BEGIN

// Device memory in use (cudaMemGetInfo: total - free, whole device) at one moment.
struct MemoryUsePoint {
  std::int64_t time_ns = 0;  // host clock, steady_clock ns
  std::int64_t bytes_in_use = 0;
};

// One allocation from its cudaMalloc to its cudaFree.
struct TimelineAllocation {
  std::uint64_t address = 0;
  std::int64_t bytes = 0;
  std::int64_t alloc_ns = 0;
  std::int64_t free_ns = -1;         // -1: still live when the report was taken
  std::uint64_t scope_instance = 0;  // innermost scope open at alloc_ns; 0 if none
  std::string scope_path;            // its path; "" if none
  bool from_pool = false;            // a cudaMallocAsync sub-allocation
};

struct MemoryTimeline {
  std::vector<MemoryUsePoint> in_use;           // by time
  std::vector<TimelineAllocation> allocations;  // by alloc_ns
  bool empty() const { return in_use.empty() && allocations.empty(); }
};

// The `count` largest allocations, largest first (ties: earlier first).
inline std::vector<TimelineAllocation> largest_allocations(const MemoryTimeline& timeline,
                                                           std::size_t count) {
  std::vector<TimelineAllocation> sorted = timeline.allocations;
  std::stable_sort(
      sorted.begin(), sorted.end(),
      [](const TimelineAllocation& a, const TimelineAllocation& b) { return a.bytes > b.bytes; });
  if (sorted.size() > count) sorted.resize(count);
  return sorted;
}

GPUPROF_NAMESPACE_END
