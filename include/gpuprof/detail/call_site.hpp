// gpuprof/detail/call_site.hpp: a scope name's entry and the call site's
// cached binding to it: what a scope touches when its name is known already.
// The table that interns names is in names.hpp, behind the scope backend.
#pragma once
#include <atomic>
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

// The name most recently used at one GPUPROF_SCOPE call site. The macro makes
// it a function-local static with a constexpr constructor (no guard, no
// initialization order issue). The first thread to get there publishes the
// binding; a call site whose name changes at run time still works, through
// the slower per-thread lookup.
class CallSite {
 public:
  struct Binding {
    const char* pointer;  // the argument's address, for the literal fast path
    const NameEntry* entry;
    NvtxName nvtx;  // entry->nvtx, copied: an NVTX-only scope reads this binding only
  };
  constexpr CallSite() = default;
  CallSite(const CallSite&) = delete;
  CallSite& operator=(const CallSite&) = delete;

  const Binding* binding() const noexcept { return binding_.load(std::memory_order_acquire); }
  // Publishes {pointer, entry} unless another thread did first. The binding
  // lives as long as the process, like the static that holds it.
  void bind(const char* pointer, const NameEntry& entry) {
    if (binding()) return;
    const Binding* expected = nullptr;
    const Binding* mine = new Binding{pointer, &entry, entry.nvtx};
    if (!binding_.compare_exchange_strong(expected, mine, std::memory_order_acq_rel)) delete mine;
  }

 private:
  std::atomic<const Binding*> binding_{nullptr};
};

}  // namespace detail
GPUPROF_NAMESPACE_END
