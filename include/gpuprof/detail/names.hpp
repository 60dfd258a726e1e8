// gpuprof/detail/names.hpp: scope names, interned once per process.
//
// A scope's name becomes a NameEntry (the text, a dense id and its registered
// NVTX string) the first time it is seen; after that a scope only compares a
// pointer (string-literal call sites, cached in a CallSite) or looks the text
// up in its thread's cache (names built at run time). Entries are never
// freed, so their addresses and texts stay valid for the whole process.
#pragma once
#include <atomic>
#include <cstdint>
#include <deque>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>

#include "../config.hpp"
#include "../nvtx.hpp"

GPUPROF_NAMESPACE_BEGIN
namespace detail {

struct NameEntry {
  NameEntry(std::string_view name, std::uint32_t name_id)
      : text(name), id(name_id), nvtx(text) {}
  std::string text;
  std::uint32_t id;
  NvtxName nvtx;
};

class NameTable {
 public:
  const NameEntry& intern(std::string_view text) {
    const std::lock_guard<std::mutex> lock(mutex_);
    const auto found = index_.find(text);
    if (found != index_.end()) return *found->second;
    const NameEntry& entry = entries_.emplace_back(text, static_cast<std::uint32_t>(entries_.size()));
    index_.emplace(entry.text, &entry);  // the key views the entry's own, stable text
    return entry;
  }
  const NameEntry& entry(std::uint32_t id) const {
    const std::lock_guard<std::mutex> lock(mutex_);
    return entries_.at(id);
  }
  std::string text(std::uint32_t id) const {
    const std::lock_guard<std::mutex> lock(mutex_);
    return entries_.at(id).text;
  }

 private:
  mutable std::mutex mutex_;
  std::deque<NameEntry> entries_;  // a deque never moves its elements
  std::unordered_map<std::string_view, const NameEntry*> index_;
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
