// gpuprof/detail/names.hpp: scope names, interned once per process.
//
// A scope's name becomes a NameEntry (the text, a dense id and its registered
// NVTX string) the first time it is seen; after that a scope only compares a
// pointer (string-literal call sites, cached in a CallSite) or looks the text
// up in its thread's cache (names built at run time). Entries are never
// freed, so their addresses and texts stay valid for the whole process.
#pragma once
#include <cstdint>
#include <deque>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>

#include "../config.hpp"
#include "name_entry.hpp"

GPUPROF_NAMESPACE_BEGIN
namespace detail {

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

}  // namespace detail
GPUPROF_NAMESPACE_END
