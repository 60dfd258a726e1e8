// gpuprof/detail/name_entry.hpp: a scope name's entry, and what a call site
// (call_site.hpp) caches of it: what a scope touches when its name is known
// already. The table that interns names is in names.hpp, behind the scope
// backend.
#pragma once
#include <cstdint>
#include <string>
#include <string_view>

#include "../config.hpp"
#include "../nvtx.hpp"

GPUPROF_NAMESPACE_BEGIN
namespace detail {

struct NameEntry {
  NameEntry(std::string_view name, std::uint32_t name_id) : text(name), id(name_id), nvtx(text) {}
  std::string text;
  std::uint32_t id;
  NvtxName nvtx;
};

// A call site's binding to the name it saw first.
struct CallSiteBinding {
  const char* pointer;  // the argument's address, for the literal fast path
  const NameEntry* entry;
  NvtxName nvtx;  // entry->nvtx, copied: an NVTX-only scope reads this binding only
};

}  // namespace detail
GPUPROF_NAMESPACE_END
