// gpuprof/detail/cupti_records.hpp: CUPTI activity records (CUDA 13 layouts)
// turned into gpuprof's plain records. Only field copies; naming, joining and
// attribution happen elsewhere.
#pragma once
#include <cupti.h>

#include <string>

#include "../allocation_record.hpp"
#include "../config.hpp"
#include "../kernel_record.hpp"

GPUPROF_NAMESPACE_BEGIN
namespace detail {

// The activity structs CUDA 13's CUPTI delivers for the kinds we enable
// (cupti_activity.h names them next to each CUpti_ActivityKind).
using CuptiKernel = CUpti_ActivityKernel10;  // CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL
using CuptiMemcpy = CUpti_ActivityMemcpy6;   // CUPTI_ACTIVITY_KIND_MEMCPY
using CuptiMemset = CUpti_ActivityMemset4;   // CUPTI_ACTIVITY_KIND_MEMSET
using CuptiApiCall = CUpti_ActivityAPI;      // CUPTI_ACTIVITY_KIND_RUNTIME / DRIVER
using CuptiMemory = CUpti_ActivityMemory4;   // CUPTI_ACTIVITY_KIND_MEMORY2

inline KernelRecord kernel_record(const CuptiKernel& kernel) {
  KernelRecord record;
  record.kind = ActivityKind::kernel;
  record.start_ns = static_cast<std::int64_t>(kernel.start);
  record.end_ns = static_cast<std::int64_t>(kernel.end);
  record.device = kernel.deviceId;
  record.stream = kernel.streamId;
  record.correlation_id = kernel.correlationId;
  record.graph_node_id = kernel.graphNodeId;
  record.grid[0] = static_cast<std::uint32_t>(kernel.gridX);
  record.grid[1] = static_cast<std::uint32_t>(kernel.gridY);
  record.grid[2] = static_cast<std::uint32_t>(kernel.gridZ);
  record.block[0] = static_cast<std::uint32_t>(kernel.blockX);
  record.block[1] = static_cast<std::uint32_t>(kernel.blockY);
  record.block[2] = static_cast<std::uint32_t>(kernel.blockZ);
  record.registers_per_thread = kernel.registersPerThread;
  record.shared_bytes = static_cast<std::uint32_t>(kernel.staticSharedMemory) +
                        static_cast<std::uint32_t>(kernel.dynamicSharedMemory);
  return record;
}

// nsys's wording, so names line up with `nsys stats` tables.
inline std::string memcpy_name(std::uint8_t copy_kind) {
  switch (copy_kind) {
    case CUPTI_ACTIVITY_MEMCPY_KIND_HTOD: return "[CUDA memcpy Host-to-Device]";
    case CUPTI_ACTIVITY_MEMCPY_KIND_DTOH: return "[CUDA memcpy Device-to-Host]";
    case CUPTI_ACTIVITY_MEMCPY_KIND_DTOD: return "[CUDA memcpy Device-to-Device]";
    case CUPTI_ACTIVITY_MEMCPY_KIND_HTOH: return "[CUDA memcpy Host-to-Host]";
    case CUPTI_ACTIVITY_MEMCPY_KIND_PTOP: return "[CUDA memcpy Peer-to-Peer]";
    case CUPTI_ACTIVITY_MEMCPY_KIND_HTOA: return "[CUDA memcpy Host-to-Array]";
    case CUPTI_ACTIVITY_MEMCPY_KIND_ATOH: return "[CUDA memcpy Array-to-Host]";
    case CUPTI_ACTIVITY_MEMCPY_KIND_ATOA: return "[CUDA memcpy Array-to-Array]";
    case CUPTI_ACTIVITY_MEMCPY_KIND_ATOD: return "[CUDA memcpy Array-to-Device]";
    case CUPTI_ACTIVITY_MEMCPY_KIND_DTOA: return "[CUDA memcpy Device-to-Array]";
    default: return "[CUDA memcpy]";
  }
}

inline KernelRecord memcpy_record(const CuptiMemcpy& copy) {
  KernelRecord record;
  record.kind = ActivityKind::memcpy;
  record.start_ns = static_cast<std::int64_t>(copy.start);
  record.end_ns = static_cast<std::int64_t>(copy.end);
  record.device = copy.deviceId;
  record.stream = copy.streamId;
  record.correlation_id = copy.correlationId;
  record.graph_node_id = copy.graphNodeId;
  record.bytes = copy.bytes;
  return record;
}

inline KernelRecord memset_record(const CuptiMemset& set) {
  KernelRecord record;
  record.kind = ActivityKind::memset;
  record.start_ns = static_cast<std::int64_t>(set.start);
  record.end_ns = static_cast<std::int64_t>(set.end);
  record.device = set.deviceId;
  record.stream = set.streamId;
  record.correlation_id = set.correlationId;
  record.graph_node_id = set.graphNodeId;
  record.bytes = set.bytes;
  return record;
}

// Device allocations and releases only; false for host, pinned or managed memory.
inline bool allocation_record(const CuptiMemory& memory, AllocationRecord& record) {
  if (memory.memoryKind != CUPTI_ACTIVITY_MEMORY_KIND_DEVICE) return false;
  const bool allocation = memory.memoryOperationType == CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_ALLOCATION;
  if (!allocation && memory.memoryOperationType != CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_RELEASE) return false;
  record.time_ns = static_cast<std::int64_t>(memory.timestamp);
  record.bytes =
      allocation ? static_cast<std::int64_t>(memory.bytes) : -static_cast<std::int64_t>(memory.bytes);
  record.address = memory.address;
  record.device = memory.deviceId;
  record.from_pool = memory.memoryPoolConfig.memoryPoolType != CUPTI_ACTIVITY_MEMORY_POOL_TYPE_INVALID;
  return true;
}

}  // namespace detail
GPUPROF_NAMESPACE_END
