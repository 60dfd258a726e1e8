// gpuprof/detail/thread_ops.hpp: what a scope does to its thread's state.
//
// Finding the name and the tree node, taking an event pair (and handing back
// the pairs whose work has finished), and appending the finished instance.
// All of it runs on the scope's own thread; see recorder.hpp for who else
// reads what.
#pragma once
#include <cstdint>
#include <cstring>
#include <string_view>
#include <type_traits>

#include "../config.hpp"
#include "names.hpp"
#include "recorder.hpp"

GPUPROF_NAMESPACE_BEGIN
namespace detail {

inline const NameEntry& thread_cached_name(Recorder& recorder, ThreadState& thread,
                                           std::string_view text) {
  const auto found = thread.names.find(text);
  if (found != thread.names.end()) return *found->second;
  const NameEntry& entry = recorder.names().intern(text);
  thread.names.emplace(entry.text, &entry);
  return entry;
}

// A string literal (any const char array) is recognised by its address, so a
// call site costs one pointer comparison; anything else is compared by text.
template <class Name>
const NameEntry& resolve_name(Recorder& recorder, ThreadState& thread, CallSite& site,
                              const Name& name) {
  const CallSite::Binding* bound = site.binding();
  if constexpr (std::is_array_v<Name>) {
    static_assert(std::is_same_v<std::remove_cv_t<std::remove_extent_t<Name>>, char>,
                  "a scope name is a string");
    const char* pointer = name;
    if (bound && bound->pointer == pointer) return *bound->entry;
    const NameEntry& entry = thread_cached_name(recorder, thread, std::string_view(pointer));
    if (!bound) site.bind(pointer, entry);
    return entry;
  } else {
    const std::string_view text(name);
    if (bound && bound->entry->text == text) return *bound->entry;
    const NameEntry& entry = thread_cached_name(recorder, thread, text);
    if (!bound) site.bind(nullptr, entry);
    return entry;
  }
}

// NVTX-only mode: the call site's bound entry when it matches (the pointer
// for a literal), the full lookup otherwise.
template <class Name>
const NameEntry& nvtx_only_name(CallSite& site, const Name& name) {
  if constexpr (std::is_array_v<Name>) {
    const CallSite::Binding* bound = site.binding();
    if (bound && bound->pointer == static_cast<const char*>(name)) return *bound->entry;
  }
  Recorder& recorder = detail::recorder();
  return resolve_name(recorder, recorder.this_thread(), site, name);
}

// The global node id of the innermost scope open on the calling thread
// (root_node when none is): what a graph node created now belongs to.
inline std::uint32_t innermost_scope_node() {
  ThreadState& thread = recorder().this_thread();
  return thread.local_nodes[thread.current].global;
}

// The instance id of the innermost scope open on the calling thread (0 when
// none is): the captured scope a graph node created now belongs to.
inline std::uint64_t innermost_scope_instance() { return recorder().this_thread().current_instance; }

// The local node for `name` under `parent`, created (and given a global id)
// on first sight. Children are a short linked list: scanning it beats
// hashing for the handful of children a scope usually has.
inline std::uint32_t enter_child(Recorder& recorder, ThreadState& thread, std::uint32_t parent,
                                 const NameEntry& name) {
  for (std::uint32_t child = thread.local_nodes[parent].first_child; child != no_node;
       child = thread.local_nodes[child].next_sibling)
    if (thread.local_nodes[child].name == name.id) return child;
  const std::uint32_t global = recorder.global_node(thread.local_nodes[parent].global, name.id);
  const auto child = static_cast<std::uint32_t>(thread.local_nodes.size());
  ThreadState::LocalNode node{global, name.id};
  node.next_sibling = thread.local_nodes[parent].first_child;
  thread.local_nodes.push_back(node);
  thread.local_nodes[parent].first_child = child;
  return child;
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
inline void reclaim_after_reset(ThreadState& thread) {
  if (!thread.reset_pending.load(std::memory_order_acquire)) return;
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
  thread.discard_before.store(0, std::memory_order_relaxed);
  thread.reset_pending.store(false, std::memory_order_release);
}

#if GPUPROF_WITH_CUDA
// Reads back, oldest first, the pairs that have completed, and returns them
// to the pool; stops at the first one still in flight. One call per pair:
// cudaEventElapsedTime says cudaErrorNotReady for a pair still in flight, so
// no cudaEventQuery is needed first.
inline void resolve_completed(ThreadState& thread) {
  const OwnerGuard guard(thread.records);
  if (!guard.held()) return;
  const std::uint64_t published = thread.records.size();
  std::uint64_t i = thread.resolve_from;
  for (; i < published; ++i) {
    InstanceRecord& record = thread.records.at(i);
    if (!record.gpu_pending) continue;
    float milliseconds = 0;
    const cudaError_t status = cudaEventElapsedTime(&milliseconds, record.events.begin, record.events.end);
    if (status == cudaErrorNotReady) break;
    GPUPROF_CUDA_CHECK(status);
    record.gpu_ms = milliseconds;
    record.gpu_pending = false;
    thread.events.release(record.events);
  }
  thread.resolve_from = i;
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
