// gpuprof/kernel_record.hpp: one GPU activity (kernel, copy or memset) as the
// kernel-capture layer records it. Plain data with no CUPTI dependency, so the
// joins, summaries and writers work (and are tested) without a GPU.
#pragma once
#include <cstdint>
#include <string>

#include "config.hpp"

GPUPROF_NAMESPACE_BEGIN

enum class ActivityKind { kernel, memcpy, memset };

// The kind's name in the report's files ("kernel", "memcpy", "memset").
inline const char* activity_kind_name(ActivityKind kind) {
  switch (kind) {
    case ActivityKind::kernel: return "kernel";
    case ActivityKind::memcpy: return "memcpy";
    case ActivityKind::memset: return "memset";
  }
  return "unknown";
}

struct KernelRecord {
  ActivityKind kind = ActivityKind::kernel;
  // Kernels: the demangled full name. Copies and memsets: the names nsys
  // prints, "[CUDA memcpy Host-to-Device]" (etc.) and "[CUDA memset]".
  std::string name;
  std::string base_name;  // template arguments and parameter list stripped
  std::string category;   // gemm, attention, softmax, norm, reduction, elementwise,
                          // memory, communication, other
  // GPU start/end on gpuprof's host clock (nanoseconds of std::chrono::steady_clock),
  // so kernels and scopes share one time axis.
  std::int64_t start_ns = 0;
  std::int64_t end_ns = 0;
  std::int64_t launch_ns = 0;  // host time of the launching API call (0 if unknown)
  std::uint32_t device = 0;
  std::uint32_t stream = 0;
  std::uint32_t correlation_id = 0;  // CUPTI's launch/activity correlation id
  // Eager work: ScopeInstance::id of the innermost scope around the launch (0: none).
  std::uint64_t scope_instance = 0;
  // Run by a CUDA graph launch: CUPTI's id of the executable graph's node (0:
  // launched eagerly). Graph work belongs to the scope *node* that was
  // innermost when its graph node was captured (every replay of that scope
  // runs it): scope_node is that node's index into Report::nodes,
  // scope_instance is 0 and graph_launch is the launch's correlation id, so
  // each launch counts as one execution of the node. When the capture scope
  // is unknown (captured outside any scope or before capture started),
  // scope_node is -1, graph_launch 0, and scope_instance is the scope around
  // the launch, as for eager work (see docs/kernel-capture.md).
  std::uint64_t graph_node_id = 0;
  std::uint32_t graph_launch = 0;
  int scope_node = -1;
  std::uint32_t grid[3] = {0, 0, 0};
  std::uint32_t block[3] = {0, 0, 0};
  std::uint32_t registers_per_thread = 0;
  std::uint32_t shared_bytes = 0;  // static + dynamic shared memory per block
  std::uint64_t bytes = 0;         // memcpy / memset size

  // Records hold 0 <= start_ns <= end_ns <= 2^62 (capture produces them so,
  // and read_json.hpp refuses any other), so the difference cannot overflow.
  std::int64_t duration_ns() const { return end_ns - start_ns; }
};

GPUPROF_NAMESPACE_END
