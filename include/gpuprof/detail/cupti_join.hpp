// gpuprof/detail/cupti_join.hpp: how kernel capture ties GPU activity to the
// scope and the host call that launched it. Plain host code with no CUPTI
// types, so the join is tested on synthetic records without a GPU.
//
// CUPTI gives every launching API call (runtime or driver) a correlation id,
// repeated in the kernel/memcpy/memset record it caused. With external
// correlation on, each API record is preceded by an EXTERNAL_CORRELATION
// record mapping that correlation id to the id on top of the calling thread's
// external-id stack: the innermost gpuprof scope instance.
#pragma once
#include <algorithm>
#include <cstdint>
#include <unordered_map>
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

// Fills scope_instance and launch_ns of every record from `tables`; records
// without a match keep 0 (launched outside any scope, or its API record was
// dropped). Returns how many records found no scope.
inline std::size_t join_correlations(std::vector<KernelRecord>& records, const CorrelationTables& tables) {
  std::size_t outside = 0;
  for (KernelRecord& record : records) {
    const auto scope = tables.scope_instance.find(record.correlation_id);
    record.scope_instance = scope == tables.scope_instance.end() ? 0 : scope->second;
    if (record.scope_instance == 0) ++outside;
    const auto launch = tables.api_start_ns.find(record.correlation_id);
    record.launch_ns = launch == tables.api_start_ns.end() ? 0 : launch->second;
  }
  return outside;
}

}  // namespace detail
GPUPROF_NAMESPACE_END
