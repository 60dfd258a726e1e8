// gpuprof/detail/thread_ops.hpp: what a scope does to its thread's state.
//
// Finding the name and the tree node, taking an event pair (and handing back
// the pairs whose work has finished), and appending the finished instance.
// All of it runs on the scope's own thread; see recorder.hpp for who else
// reads what. First sights go through the scope backend (scope_state.hpp).
#pragma once
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string_view>
#include <type_traits>

#include "../config.hpp"
#include "scope_state.hpp"

GPUPROF_NAMESPACE_BEGIN
namespace detail {

// The call site's binding when it names `name`, else null. A string literal
// (any const char array) is recognised by its address, so a call site costs
// one pointer comparison; anything else is compared by text.
template <class Name>
const CallSiteBinding* bound_name(const CallSite& site, const Name& name) noexcept {
  const CallSiteBinding* bound = site_binding(site);
  if constexpr (std::is_array_v<Name>) {
    static_assert(std::is_same_v<std::remove_cv_t<std::remove_extent_t<Name>>, char>,
                  "a scope name is a string");
    if (bound && bound->pointer == static_cast<const char*>(name)) return bound;
  } else {
    if (bound && bound->entry->text == std::string_view(name)) return bound;
  }
  return nullptr;
}

// The name's entry when the call site is not bound to it (its first use, or
// a call site whose name changes): looked up by text, and bound if unbound.
template <class Name>
const NameEntry& resolve_unbound_name(ThreadState& thread, CallSite& site, const Name& name) {
  const std::string_view text(name);
  return installed_backend().resolve_unbound_name(thread, site, text,
                                                  std::is_array_v<Name> ? text.data() : nullptr);
}

template <class Name>
const NameEntry& resolve_name(ThreadState& thread, CallSite& site, const Name& name) {
  if (const CallSiteBinding* bound = bound_name(site, name)) return *bound->entry;
  return resolve_unbound_name(thread, site, name);
}

// NVTX-only mode: the range's name, from the call site's binding when it
// matches; the full lookup otherwise (which needs the thread's state). Only
// the Recorder sets NVTX-only mode, and it installs the backend first, so
// the thread can be registered.
template <class Name>
const NvtxName& nvtx_only_name(CallSite& site, const Name& name) {
  if (const CallSiteBinding* bound = bound_name(site, name)) return bound->nvtx;
  return resolve_unbound_name(*scope_thread(), site, name).nvtx;
}

// The child of `parent` named `name_id`: the thread's direct-mapped cache,
// then the backend (child_node_slow() in recorder.hpp).
inline std::uint32_t child_node(ThreadState& thread, std::uint32_t parent, std::uint32_t name_id) {
  const std::uint64_t key = (std::uint64_t{parent} << 32) | name_id;
  // Fibonacci hashing: the top bits of key * 2^64 / golden ratio.
  ThreadState::ChildSlot& slot =
      thread.child_cache[(key * 0x9E3779B97F4A7C15ull) >> (64 - ThreadState::child_cache_bits)];
  if (slot.key != key) {
    slot.child = installed_backend().child_node_slow(thread, key);
    slot.key = key;
  }
  return slot.child;
}

// Holds the owner's side of a RecordLog's access flag, if it could get it.
class OwnerGuard {
 public:
  explicit OwnerGuard(RecordLog& log) : log_(log), held_(log.try_lock_for_owner()) {}
  ~OwnerGuard() {
    if (held_) log_.unlock_for_owner();
  }
  OwnerGuard(const OwnerGuard&) = delete;
  OwnerGuard& operator=(const OwnerGuard&) = delete;
  bool held() const noexcept { return held_; }

 private:
  RecordLog& log_;
  bool held_;
};

// After reset(): drop the discarded records (handing their event pairs back)
// and keep the ones that finished since. Postponed while a report reads.
// Every scope asks (ThreadState::exit_work); only one after a reset does this.
GPUPROF_DETAIL_NOINLINE inline void reclaim_discarded(ThreadState& thread) {
  const OwnerGuard guard(thread.records);
  if (!guard.held()) return;
  const std::uint64_t discard = thread.discard_before.load(std::memory_order_relaxed);
#if GPUPROF_WITH_CUDA
  for (std::uint64_t i = thread.resolve_from; i < discard; ++i) {
    InstanceRecord& record = thread.records.at(i);
    if (record.gpu_pending) thread.events.release(record.events);
    record.gpu_pending = false;
  }
#endif
  thread.records.drop_front(discard);
  thread.resolve_from = thread.resolve_from > discard ? thread.resolve_from - discard : 0;
#if GPUPROF_WITH_CUDA
  std::uint64_t& asked_below = thread.readback.asked_below;
  asked_below = asked_below > discard ? asked_below - discard : 0;
#endif
  thread.discard_before.store(0, std::memory_order_relaxed);
  thread.exit_work.fetch_and(static_cast<std::uint8_t>(~exit_reclaim), std::memory_order_release);
}

#if GPUPROF_WITH_CUDA
// Reads back a record's pair and returns it to the pool; false when it was
// still in flight after all (a stream destroyed and another created at its
// address can break the stream-order inference; nothing is read then).
inline bool read_back(ThreadState& thread, InstanceRecord& record) {
  float milliseconds = 0;
  if (!record.events.try_elapsed_ms(milliseconds)) return false;
  record.gpu_ms = milliseconds;
  record.gpu_pending = false;
  thread.events.release(record.events);
  return true;
}

// Reads back the pairs that have completed, among the records published
// before the previous pass, and returns them to the pool (see PairReadback
// for why it asks so little).
inline void resolve_completed(ThreadState& thread) {
  PairReadback& readback = thread.readback;
  const std::int64_t now_ns = host_now_ns();
  if (now_ns < readback.next_pass_ns) return;
  const OwnerGuard guard(thread.records);
  if (!guard.held()) return;
  const std::uint64_t published = thread.records.size();
  const std::uint64_t asked_below = std::min(readback.asked_below, published);
  readback.asked_below = published;
  std::uint64_t i = thread.resolve_from;
  bool in_flight = false;
  if (!readback.end_streams_mixed) {
    std::uint64_t newest = asked_below;
    for (std::uint64_t k = asked_below; k > i; --k) {
      if (thread.records.at(k - 1).gpu_pending) {
        newest = k - 1;
        break;
      }
    }
    if (newest == asked_below) {
      i = asked_below;  // nothing pending below it
    } else if (thread.records.at(newest).events.completed()) {
      for (; i <= newest; ++i) {
        InstanceRecord& record = thread.records.at(i);
        if (record.gpu_pending && !read_back(thread, record)) break;
      }
      in_flight = i <= newest;
    }
  }
  // Several streams, or the newest still in flight: oldest first, up to the
  // first one in flight.
  for (; !in_flight && i < asked_below; ++i) {
    InstanceRecord& record = thread.records.at(i);
    if (!record.gpu_pending) continue;
    in_flight = !record.events.completed() || !read_back(thread, record);
    if (in_flight) break;
  }
  thread.resolve_from = i;
  if (in_flight) readback.next_pass_ns = now_ns + PairReadback::retry_ns;
  if (i == published && !thread.deferred) readback.end_stream_known = readback.end_streams_mixed = false;
}

// A pair for a new scope: a finished one when there is one, a new one only
// when every pair the thread owns is still in flight.
inline EventPair acquire_event_pair(ThreadState& thread) {
  if (!thread.events.has_free()) resolve_completed(thread);
  return thread.events.acquire();
}
#endif

}  // namespace detail
GPUPROF_NAMESPACE_END
