// gpuprof/call_site.hpp: CallSite, the place in the program a scope is
// opened from; GPUPROF_SCOPE makes one per use.
//
// A call site remembers the name most recently used there, so that a scope
// whose name is a string literal costs one pointer comparison to name. The
// macro makes it a function-local static with a constexpr constructor (no
// guard, no initialization order issue). Code that opens scopes without the
// macro (a binding to another language, a tool) keeps one CallSite per name
// for the whole process and passes it to Scope's constructor. The first
// thread to get there publishes the binding; a call site whose name changes
// at run time still works, through the slower per-thread lookup.
#pragma once
#include <atomic>

#include "config.hpp"
#include "detail/name_entry.hpp"

GPUPROF_NAMESPACE_BEGIN

class CallSite;
namespace detail {
const CallSiteBinding* site_binding(const CallSite& site) noexcept;
void bind_site(CallSite& site, const char* pointer, const NameEntry& entry);
}  // namespace detail

class CallSite {
 public:
  constexpr CallSite() = default;
  CallSite(const CallSite&) = delete;
  CallSite& operator=(const CallSite&) = delete;

 private:
  friend const detail::CallSiteBinding* detail::site_binding(const CallSite& site) noexcept;
  friend void detail::bind_site(CallSite& site, const char* pointer, const detail::NameEntry& entry);
  std::atomic<const detail::CallSiteBinding*> binding_{nullptr};
};

namespace detail {

inline const CallSiteBinding* site_binding(const CallSite& site) noexcept {
  return site.binding_.load(std::memory_order_acquire);
}

// Publishes {pointer, entry} unless another thread did first. The binding
// lives as long as the process, like the call site that holds it.
inline void bind_site(CallSite& site, const char* pointer, const NameEntry& entry) {
  if (site_binding(site)) return;
  const CallSiteBinding* expected = nullptr;
  const CallSiteBinding* mine = new CallSiteBinding{pointer, &entry, entry.nvtx};
  if (!site.binding_.compare_exchange_strong(expected, mine, std::memory_order_acq_rel)) delete mine;
}

}  // namespace detail
GPUPROF_NAMESPACE_END
