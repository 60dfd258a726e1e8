// gpuprof/allocation_record.hpp: one device-memory allocation or release as
// kernel capture sees it (CUPTI MEMORY2), plain data with no CUPTI dependency,
// so memory.hpp can replay them per scope and tests can feed synthetic ones.
#pragma once
#include <cstdint>

#include "config.hpp"

GPUPROF_NAMESPACE_BEGIN

struct AllocationRecord {
  std::int64_t time_ns = 0;  // host clock (std::chrono::steady_clock), like KernelRecord
  std::int64_t bytes = 0;    // > 0 allocation, < 0 release
  std::uint64_t address = 0;
  std::uint32_t device = 0;
  // A sub-allocation from a stream-ordered pool (cudaMallocAsync): it moves the
  // pool's used bytes, not the device's, so memory.hpp counts it through the
  // pool's attributes instead.
  bool from_pool = false;
};

GPUPROF_NAMESPACE_END
