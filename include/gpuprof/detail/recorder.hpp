// gpuprof/detail/recorder.hpp: the process-wide state scopes write into.
//
// One Recorder per process (created on first use, never destroyed: scopes on
// other threads and CUDA's own teardown may outlive static destructors). It
// owns the interned names, the global node table ((parent, name) -> node id),
// one ThreadState per thread that ever opened a scope, the observers, the
// timing mode and the calibration of scope time stamps (TickClock). Everything a scope touches in steady state is its own
// ThreadState; the mutexes here are taken when a thread, a name or a node is
// seen for the first time, and by report()/reset().
#pragma once
#include <atomic>
#include <cstdint>
#include <iostream>
#include <memory>
#include <mutex>
#include <shared_mutex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "../config.hpp"
#include "../cuda_events.hpp"
#include "device.hpp"
#include "graph_intervals.hpp"
#include "graph_timing.hpp"
#include "names.hpp"
#include "record_log.hpp"
#include "scope_observer.hpp"
#include "tick_clock.hpp"

GPUPROF_NAMESPACE_BEGIN
namespace detail {

inline constexpr std::uint32_t root_node = 0;  // global and local id of the virtual root
inline constexpr std::uint32_t no_node = 0xFFFFFFFFu;

struct GlobalNode {
  std::uint32_t parent;
  std::uint32_t name;
};

// What a scope does, in one word that it loads once (relaxed) at entry:
// settings change rarely, and a scope that starts just before a change
// finishes in the mode it started in. Written by the Recorder's setters.
enum ScopeMode : std::uint32_t {
  mode_nvtx_only = 1u,  // Profiler::set_nvtx_only(true): the range and nothing else
  mode_gpu = 2u,        // record CUDA events: a usable device and set_gpu_timing(true)
  mode_observers = 4u,  // at least one ScopeObserver is registered
  mode_unready = 8u,    // no Recorder yet: the first scope creates it, then reads the word again
  mode_tsc = 16u,       // ticks_are_tsc(): scope_ticks() reads the TSC without asking again
};
inline std::atomic<std::uint32_t> scope_mode{mode_unready};

// host_ticks() for a scope that read `mode` once the Recorder existed: the
// mode word carries ticks_are_tsc(), so the hot path tests a bit it already
// holds instead of a function-local static's guard.
inline std::int64_t scope_ticks(std::uint32_t mode) noexcept {
#if GPUPROF_DETAIL_HAVE_TSC
  if (mode & mode_tsc) return read_tsc();
#endif
  return host_now_ns();
}

// Everything one thread records. Only its own thread writes it, except for
// the RecordLog's published records (see record_log.hpp). What every scope
// touches comes first; aligned so that no other thread's state shares its
// cache lines.
struct alignas(64) ThreadState {
  explicit ThreadState(std::uint32_t dense_id) : thread_id(dense_id) {}

  std::uint32_t current = root_node;  // global node of the innermost open scope
  // Scopes open on this thread: each entry keeps room in `records` for every
  // open scope, so closing one never allocates (see Scope's constructor).
  std::uint32_t open_scopes = 0;
  std::uint64_t current_instance = 0;  // instance id of the innermost open scope (0: none open)
  // Instance ids are handed out to threads in blocks: one shared atomic
  // increment per block, not per scope.
  std::uint64_t next_instance_id = 0;
  std::uint64_t instance_id_end = 0;
  std::int64_t last_exit_ticks = 0;  // the tick clock is calibrated at entry from this
  std::int64_t calibration_due = 0;  // TickClock::next_due() as this thread last read it
  std::atomic<bool> reset_pending{false};
  const std::uint32_t thread_id;
  RecordLog records;

  // (parent node, name) -> child node, for the node a scope enters: a
  // direct-mapped cache in front of `children`, which holds every pair this
  // thread has seen (the Recorder's table behind both is shared and locked).
  struct ChildSlot {
    std::uint64_t key = ~std::uint64_t{0};  // no pair: the root has no parent
    std::uint32_t child = 0;
  };
  static constexpr int child_cache_bits = 8;
  ChildSlot child_cache[1u << child_cache_bits];
  std::unordered_map<std::uint64_t, std::uint32_t> children;
  std::unordered_map<std::string_view, const NameEntry*> names;  // run-time names seen here
  std::uint64_t resolve_from = 0;  // first record that may still hold a pending event pair
  // reset(): records before this index are gone; the owner compacts the log
  // when it next can (see reclaim_after_reset() in thread_ops.hpp).
  std::atomic<std::uint64_t> discard_before{0};
#if GPUPROF_WITH_CUDA
  EventPool events;
#endif
};

// The calling thread's state; null until it opens its first scope. One
// trivially initialized thread_local: no guard, no TLS wrapper call.
inline thread_local ThreadState* this_thread_state = nullptr;

class Recorder {
 public:
  static constexpr int max_observers = 8;

  Recorder() : device_(probe_device()) {
    if (!device_.usable) std::cerr << "gpuprof: " << device_.reason << "; timing with the host clock\n";
    update_mode(mode_gpu, device_.usable);
    update_mode(mode_tsc, ticks_are_tsc());
    update_mode(mode_unready, false);
  }
  Recorder(const Recorder&) = delete;
  Recorder& operator=(const Recorder&) = delete;

  // --- timing mode -----------------------------------------------------------
  const DeviceStatus& device() const noexcept { return device_; }
  bool gpu_timing() const noexcept {
    return device_.usable && gpu_enabled_.load(std::memory_order_relaxed);
  }
  void set_gpu_timing(bool enabled) {
    const std::lock_guard<std::mutex> lock(mode_mutex_);
    gpu_enabled_.store(enabled, std::memory_order_relaxed);
    update_mode(mode_gpu, enabled && device_.usable);
  }
  bool gpu_timing_requested() const noexcept { return gpu_enabled_.load(std::memory_order_relaxed); }
  void set_nvtx_only(bool enabled) { update_mode(mode_nvtx_only, enabled); }

  // --- identities --------------------------------------------------------------
  static constexpr std::uint64_t instance_id_block = 4096;
  // Gives `thread` its next block of ids (see next_instance_id()).
  void take_instance_ids(ThreadState& thread) noexcept {
    thread.next_instance_id = next_instance_.fetch_add(instance_id_block, std::memory_order_relaxed);
    thread.instance_id_end = thread.next_instance_id + instance_id_block;
  }
  NameTable& names() noexcept { return names_; }
  TickClock& tick_clock() noexcept { return tick_clock_; }
#if GPUPROF_WITH_CUDA
  GraphTimings& graph_timings() noexcept { return graph_timings_; }
#endif

  ThreadState& this_thread();

  // Global id of (parent, name), created on first sight.
  std::uint32_t global_node(std::uint32_t parent, std::uint32_t name) {
    const std::lock_guard<std::mutex> lock(nodes_mutex_);
    const std::uint64_t key = (std::uint64_t{parent} << 32) | name;
    const auto found = node_index_.find(key);
    if (found != node_index_.end()) return found->second;
    const auto id = static_cast<std::uint32_t>(nodes_.size());
    nodes_.push_back({parent, name});
    node_index_.emplace(key, id);
    return id;
  }
  std::uint32_t node_name(std::uint32_t node) const {
    const std::lock_guard<std::mutex> lock(nodes_mutex_);
    return nodes_.at(node).name;
  }
  std::vector<GlobalNode> nodes_snapshot() const {
    const std::lock_guard<std::mutex> lock(nodes_mutex_);
    return nodes_;
  }

  // --- observers ---------------------------------------------------------------
  ScopeObserver* observer(int slot) const noexcept {
    return observers_[slot].load(std::memory_order_acquire);
  }
  void add_observer(ScopeObserver* observer);
  // Returns once no report()/reset() is calling `observer` any more, so the
  // caller may destroy it then (scopes still open on other threads are the
  // caller's to wait for; see Profiler::add_observer).
  void remove_observer(ScopeObserver* observer);
  // fn(ScopeObserver&) for each registered observer, for report() and reset():
  // removal waits until this returns. fn must not add or remove observers.
  template <class Fn>
  void for_each_observer(Fn&& fn) {
    const std::shared_lock<std::shared_mutex> calling(observer_calls_);
    for (const auto& slot : observers_)
      if (ScopeObserver* observer = slot.load(std::memory_order_acquire)) fn(*observer);
  }

  // --- GPU time of captured scopes from kernel capture (detail/graph_intervals.hpp)
  // While a source is set, scopes entered on a capturing stream add no stamps.
  bool graph_intervals_derived() const noexcept {
    return graph_interval_source_.load(std::memory_order_acquire) != nullptr;
  }
  // Replaces the source (nullptr: stamps again). Returns once report() no
  // longer calls the source it replaced, as remove_observer does.
  void set_graph_interval_source(GraphIntervalSource* source) {
    const std::unique_lock<std::shared_mutex> no_calls_in_progress(observer_calls_);
    graph_interval_source_.store(source, std::memory_order_release);
  }
  // fn(GraphIntervalSource&) if one is set, for report().
  template <class Fn>
  void with_graph_interval_source(Fn&& fn) {
    const std::shared_lock<std::shared_mutex> calling(observer_calls_);
    if (GraphIntervalSource* source = graph_interval_source_.load(std::memory_order_acquire)) fn(*source);
  }
  // An instance id for a scope instance that report() derives (a replay).
  std::uint64_t fresh_instance_id() noexcept { return next_instance_.fetch_add(1, std::memory_order_relaxed); }

  // --- errors a destructor could not throw ---------------------------------------
  void note_lost_gpu_time(const char* what) noexcept;
  std::pair<std::uint64_t, std::string> lost_gpu_time() const;

  // --- readers (report, reset) -------------------------------------------------------
  // Calls fn(ThreadState&) for every thread ever registered, under the registry
  // lock (so at most one reader runs at a time).
  template <class Fn>
  void for_each_thread(Fn&& fn) {
    const std::lock_guard<std::mutex> lock(threads_mutex_);
    for (const auto& state : threads_) fn(*state);
  }

 private:
  // Sets or clears `bits` of scope_mode (fetch_or/fetch_and: each setter owns its bits).
  static void update_mode(std::uint32_t bits, bool on) noexcept {
    if (on)
      scope_mode.fetch_or(bits, std::memory_order_release);
    else
      scope_mode.fetch_and(~bits, std::memory_order_release);
  }
  friend ThreadState& register_this_thread();
  ThreadState& register_thread() {
    const std::lock_guard<std::mutex> lock(threads_mutex_);
    threads_.push_back(std::make_unique<ThreadState>(static_cast<std::uint32_t>(threads_.size())));
    return *threads_.back();
  }

  const DeviceStatus device_;
  std::mutex mode_mutex_;  // set_gpu_timing: the request and mode_gpu change together
  std::atomic<bool> gpu_enabled_{true};
  std::atomic<std::uint64_t> next_instance_{1};
  NameTable names_;
  TickClock tick_clock_;
#if GPUPROF_WITH_CUDA
  GraphTimings graph_timings_{next_instance_};
#endif

  mutable std::mutex nodes_mutex_;
  std::vector<GlobalNode> nodes_{{no_node, 0}};  // [0] is the virtual root
  std::unordered_map<std::uint64_t, std::uint32_t> node_index_;

  std::mutex threads_mutex_;
  std::vector<std::unique_ptr<ThreadState>> threads_;

  std::mutex observers_mutex_;
  std::shared_mutex observer_calls_;  // shared while report()/reset() call observers or the source
  std::atomic<GraphIntervalSource*> graph_interval_source_{nullptr};
  std::atomic<ScopeObserver*> observers_[max_observers]{};
  int observer_count_ = 0;  // under observers_mutex_; mode_observers says whether it is > 0

  mutable std::mutex errors_mutex_;
  std::uint64_t lost_gpu_time_ = 0;
  std::string first_lost_gpu_time_reason_;
};

inline void Recorder::add_observer(ScopeObserver* observer) {
  const std::lock_guard<std::mutex> lock(observers_mutex_);
  for (auto& slot : observers_)
    if (slot.load() == observer) return;
  for (auto& slot : observers_) {
    if (slot.load() == nullptr) {
      slot.store(observer, std::memory_order_release);
      ++observer_count_;
      update_mode(mode_observers, true);
      return;
    }
  }
  throw Error("gpuprof: at most " + std::to_string(max_observers) + " scope observers can be registered");
}

inline void Recorder::remove_observer(ScopeObserver* observer) {
  const std::unique_lock<std::shared_mutex> no_calls_in_progress(observer_calls_);
  const std::lock_guard<std::mutex> lock(observers_mutex_);
  for (auto& slot : observers_) {
    if (slot.load() == observer) {
      slot.store(nullptr, std::memory_order_release);
      --observer_count_;
    }
  }
  update_mode(mode_observers, observer_count_ > 0);
}

inline void Recorder::note_lost_gpu_time(const char* what) noexcept {
  try {
    const std::lock_guard<std::mutex> lock(errors_mutex_);
    if (lost_gpu_time_++ == 0) first_lost_gpu_time_reason_ = what;
  } catch (...) {  // out of memory while saving the message: the count is enough
  }
}

inline std::pair<std::uint64_t, std::string> Recorder::lost_gpu_time() const {
  const std::lock_guard<std::mutex> lock(errors_mutex_);
  return {lost_gpu_time_, first_lost_gpu_time_reason_};
}

// The process's Recorder. Deliberately leaked (see the file comment).
inline Recorder& recorder() {
  static Recorder* const instance = new Recorder();
  return *instance;
}

// The calling thread's state, registered (and the Recorder created) on its
// first scope. A scope reaches its thread through this, not through recorder().
GPUPROF_DETAIL_NOINLINE inline ThreadState& register_this_thread() {
  this_thread_state = &recorder().register_thread();
  return *this_thread_state;
}
inline ThreadState& this_thread() {
  if (ThreadState* state = this_thread_state) return *state;
  return register_this_thread();
}
inline ThreadState& Recorder::this_thread() { return detail::this_thread(); }

// The scope's instance id: from the thread's block, a new block when it is used up.
inline std::uint64_t next_instance_id(ThreadState& thread) noexcept {
  if (thread.next_instance_id == thread.instance_id_end) recorder().take_instance_ids(thread);
  return thread.next_instance_id++;
}

}  // namespace detail
GPUPROF_NAMESPACE_END
