// gpuprof/detail/recorder.hpp: the process-wide state scopes write into.
//
// One Recorder per process (created on first use, never destroyed: scopes on
// other threads and CUDA's own teardown may outlive static destructors). It
// owns the interned names, the global node table ((parent, name) -> node id),
// one ThreadState per thread that ever opened a scope, the observers, the
// timing mode and the calibration of scope time stamps (TickClock). Everything a scope touches in steady
// state is its own ThreadState; the mutexes here are taken when a thread, a name or a node is seen for the
// first time, and by report()/reset().
//
// It also defines the scope backend (scope_state.hpp), the out-of-line half
// of every scope, and installs it before main(): whichever translation unit
// includes this header brings the backend into the program.
#pragma once
#include <atomic>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <mutex>
#include <new>
#include <shared_mutex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "../config.hpp"
#include "../diagnostics.hpp"
#include "../cuda_events.hpp"
#include "device_probe.hpp"
#include "graph_intervals.hpp"
#include "graph_timing.hpp"
#include "names.hpp"
#include "record_log.hpp"
#include "../scope_observer.hpp"
#include "scope_state.hpp"
#include "thread_ops.hpp"
#include "tick_clock.hpp"

GPUPROF_NAMESPACE_BEGIN
namespace detail {

// The maps behind a ThreadState's caches, out of scope.hpp's sight.
struct ThreadTables {
  std::unordered_map<std::uint64_t, std::uint32_t> children;     // (parent, name) -> child node
  std::unordered_map<std::string_view, const NameEntry*> names;  // run-time names seen here
};

const ScopeBackend& scope_backend_functions() noexcept;

// A thread's log that is full and holds at least this many records folds
// them itself: it fills at 1024 * (2^k - 1) records, so at 15,360 (about
// 1.4 MB), which then stays its size. Small, because a page touched for the
// first time costs more than a fold's fixed cost (a lock, a clock copy).
inline constexpr std::uint64_t fold_threshold = std::uint64_t{1} << 13;
// Profiler::fold_from_owner once profiler.hpp is in the program; null: logs only grow.
using RecordsFolder = void (*)(ThreadState& thread);
inline std::atomic<RecordsFolder> records_folder{nullptr};
inline bool install_scope_backend() noexcept;

struct GlobalNode {
  std::uint32_t parent;
  std::uint32_t name;
};

// A stretch of host time whose scopes report() leaves out of the statistics
// (bench()'s cold call and warm-up): recorded scopes by their host ticks,
// replays of stamped graph scopes by the order they were read in
// (GraphTimings::replays_read(): [begin_replay, end_replay)), and replays
// derived by kernel capture by their steady_clock ns. Replays are not placed
// by time: their %globaltimer stamps reach the host clock through an offset
// measured to tens of microseconds, as close as a replay launched right after
// the warm-up begins, which then read as warm-up now and then.
struct LeftOutSpan {
  std::int64_t begin_ticks, end_ticks;
  std::int64_t begin_ns, end_ns;
  std::size_t begin_replay = 0, end_replay = 0;
};

class Recorder {
 public:
  static constexpr int max_observers = 8;

  Recorder() : device_(probe_device()) {
    install_scope_backend();
    if (const std::uint64_t missed = scopes_without_backend.load(std::memory_order_relaxed))
      diagnose(Severity::note, std::to_string(missed) +
                                   " scope(s) ran before the recorder was installed and were not recorded "
                                   "(GPUPROF_RECORDER_IN_ONE_UNIT without <gpuprof/recorder_unit.hpp>, or a "
                                   "scope in a static initializer; docs/compile-cost.md)");
    if (!device_.usable) diagnose(Severity::note, device_.reason + "; timing with the host clock");
    update_mode(mode_gpu, device_.usable);
    update_mode(mode_tsc, ticks_are_tsc());
    update_mode(mode_unready, false);
  }
  Recorder(const Recorder&) = delete;
  Recorder& operator=(const Recorder&) = delete;

  // --- timing mode -----------------------------------------------------------
  const DeviceStatus& device() const noexcept { return device_; }
  bool gpu_timing() const noexcept { return device_.usable && gpu_enabled_.load(std::memory_order_relaxed); }
  void set_gpu_timing(bool enabled) {
    const std::lock_guard<std::mutex> lock(mode_mutex_);
    gpu_enabled_.store(enabled, std::memory_order_relaxed);
    update_mode(mode_gpu, enabled && device_.usable);
  }
  bool gpu_timing_requested() const noexcept { return gpu_enabled_.load(std::memory_order_relaxed); }
  void set_nvtx_only(bool enabled) { update_mode(mode_nvtx_only, enabled); }
  // Scopes opened from now on are left out of reports (Profiler::step()).
  void set_step_left_out(bool left_out) { update_mode(mode_step_left_out, left_out); }

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
  std::uint64_t fresh_instance_id() noexcept {
    return next_instance_.fetch_add(1, std::memory_order_relaxed);
  }

  // --- bench() warm-up: scope instances that begin inside these spans, on
  // any thread, are counted apart by report(), not in the statistics. Scopes
  // pay nothing for this: report() compares their begin times.
  void leave_out(const LeftOutSpan& span) {
    const std::lock_guard<std::mutex> lock(left_out_mutex_);
    left_out_.push_back(span);
  }
  // reset() discards every record a span could cover: the spans go with them.
  void forget_left_out() {
    const std::lock_guard<std::mutex> lock(left_out_mutex_);
    left_out_.clear();
  }
  std::vector<LeftOutSpan> left_out_spans() const {
    const std::lock_guard<std::mutex> lock(left_out_mutex_);
    return left_out_;
  }

  // --- errors a destructor could not throw ---------------------------------------
  void note_lost_gpu_time(const char* what) noexcept;
  // True the first time for the name `name_id`: scopes ended out of order say so once per name.
  bool first_out_of_order_end(std::uint32_t name_id) {
    const std::lock_guard<std::mutex> lock(errors_mutex_);
    return out_of_order_names_.insert(name_id).second;
  }
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
    if (on) scope_mode.fetch_or(bits, std::memory_order_release);
    else scope_mode.fetch_and(~bits, std::memory_order_release);
  }
  friend ThreadState& register_this_thread();
  ThreadState& register_thread() {
    const std::lock_guard<std::mutex> lock(threads_mutex_);
    thread_tables_.push_back(std::make_unique<ThreadTables>());
    threads_.push_back(std::make_unique<ThreadState>(static_cast<std::uint32_t>(threads_.size())));
    threads_.back()->tables = thread_tables_.back().get();
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
  std::vector<std::unique_ptr<ThreadTables>> thread_tables_;  // what each ThreadState::tables points to

  std::mutex observers_mutex_;
  std::shared_mutex observer_calls_;  // shared while report()/reset() call observers or the source
  std::atomic<GraphIntervalSource*> graph_interval_source_{nullptr};
  std::atomic<ScopeObserver*> observers_[max_observers]{};
  int observer_count_ = 0;  // under observers_mutex_; mode_observers says whether it is > 0

  mutable std::mutex left_out_mutex_;
  std::vector<LeftOutSpan> left_out_;

  mutable std::mutex errors_mutex_;
  std::uint64_t lost_gpu_time_ = 0;
  std::string first_lost_gpu_time_reason_;
  std::unordered_set<std::uint32_t> out_of_order_names_;
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
// first scope. A scope reaches its thread through scope_thread(), not through
// recorder().
GPUPROF_DETAIL_NOINLINE inline ThreadState& register_this_thread() {
  this_thread_state = &recorder().register_thread();
  return *this_thread_state;
}
inline ThreadState& this_thread() {
  if (ThreadState* state = this_thread_state) return *state;
  return register_this_thread();
}
inline ThreadState& Recorder::this_thread() { return detail::this_thread(); }

inline const NameEntry& thread_cached_name(ThreadState& thread, std::string_view text) {
  auto& names = thread.tables->names;
  const auto found = names.find(text);
  if (found != names.end()) return *found->second;
  const NameEntry& entry = recorder().names().intern(text);
  names.emplace(entry.text, &entry);
  return entry;
}

// The global node id of the innermost scope open on the calling thread
// (root_node when none is): what a graph node created now belongs to.
inline std::uint32_t innermost_scope_node() { return this_thread().current.load(std::memory_order_relaxed); }

// The instance id of the innermost scope open on the calling thread (0 when
// none is): the captured scope a graph node created now belongs to.
inline std::uint64_t innermost_scope_instance() { return this_thread().current_instance; }

// --- the scope backend (scope_state.hpp) -----------------------------------------
namespace scope_backend_impl {

// The name's entry when the call site is not bound to it (its first use, or
// a call site whose name changes): looked up by text, and bound if unbound.
inline const NameEntry& resolve_unbound_name(ThreadState& thread, CallSite& site, std::string_view text,
                                             const char* literal) {
  const NameEntry& entry = thread_cached_name(thread, text);
  if (!site_binding(site)) bind_site(site, literal, entry);
  return entry;
}

// A child node not in the thread's direct-mapped cache: its map of every
// pair it has seen, then the Recorder's shared table.
inline std::uint32_t child_node_slow(ThreadState& thread, std::uint64_t key) {
  auto& children = thread.tables->children;
  const auto found = children.find(key);
  if (found != children.end()) return found->second;
  const std::uint32_t child =
      recorder().global_node(static_cast<std::uint32_t>(key >> 32), static_cast<std::uint32_t>(key));
  children.emplace(key, child);
  return child;
}

inline void take_instance_ids(ThreadState& thread) noexcept { recorder().take_instance_ids(thread); }

// Room for a scope's record and every enclosing one's, at scope entry when
// the log is full. A log past fold_threshold records is folded into the
// profiler's aggregates first (records_folder) and compacted, so a run that
// never reports keeps its logs bounded; only then does it grow.
inline void make_room(ThreadState& thread) {
  RecordLog& records = thread.records;
  if (records.size() >= fold_threshold) {
    if (RecordsFolder fold = records_folder.load(std::memory_order_acquire)) {
      fold(thread);
      reclaim_discarded(thread);
    }
  }
  const std::uint64_t needed = records.size() + thread.open_scopes + 1;
  if (needed > records.capacity()) records.reserve(needed);
}

inline void notify_begin(ScopeState& s) {
  const Recorder& recorder = detail::recorder();
  for (int slot = 0; slot < Recorder::max_observers; ++slot) {
    if (ScopeObserver* observer = recorder.observer(slot)) {
      observer->on_scope_begin(s.id);
      s.observed |= static_cast<std::uint8_t>(1u << slot);
    }
  }
}
inline void notify_end(ScopeState& s) noexcept {
  const Recorder& recorder = detail::recorder();
  for (int slot = 0; slot < Recorder::max_observers; ++slot)
    if ((s.observed >> slot) & 1u)
      if (ScopeObserver* observer = recorder.observer(slot)) observer->on_scope_end(s.id);
}

// A scope ended before the scopes opened inside it: kept on its thread's list
// until they have left (Scope::close_deferred), said once per name.
inline bool defer_close(const DeferredClose& ended) noexcept {
  auto* kept = new (std::nothrow) DeferredClose(ended);
  if (!kept) return false;
  ThreadState& thread = *ended.state.thread;
  kept->next = thread.deferred;
  thread.deferred = kept;
  thread.exit_work.fetch_or(exit_deferred, std::memory_order_relaxed);
  try {
    Recorder& recorder = detail::recorder();
    const std::uint32_t name = recorder.node_name(ended.state.node);
    if (recorder.first_out_of_order_end(name)) {
      const std::uint32_t inner = recorder.node_name(thread.current.load(std::memory_order_relaxed));
      diagnose(Severity::note, "scope \"" + recorder.names().text(name) + "\" ended while \"" +
                                   recorder.names().text(inner) +
                                   "\", opened inside it, was still open: its time stops now and it leaves "
                                   "the call tree after the scopes inside it (scopes end innermost first; "
                                   "docs/headers.md#scopes-without-a-block)");
    }
  } catch (...) {  // the message could not be made: the scope is kept all the same
  }
  return true;
}

#if GPUPROF_WITH_CUDA
// An eager stream gets an event pair. A capturing stream gets stamp nodes
// in the graph (graph_timing.hpp), or with kernel capture on, only a note
// (graph_intervals.hpp): every replay is timed later.
inline void begin_gpu_timing(ScopeState& s) {
  s.graph_site = nullptr;
  s.captured = false;
  cudaStreamCaptureStatus capture = cudaStreamCaptureStatusNone;
  GPUPROF_CUDA_CHECK(cudaStreamIsCapturing(s.stream, &capture));
  if (capture == cudaStreamCaptureStatusActive) {
    Recorder& recorder = detail::recorder();
    if (recorder.graph_intervals_derived()) {
      unsigned long long capture_id = 0;
      GPUPROF_CUDA_CHECK(cudaStreamGetCaptureInfo(s.stream, &capture, &capture_id));
      recorder.graph_timings().note_unstamped(
          {s.id, s.parent_instance, capture_id, s.node, s.thread->thread_id});
    } else {
      s.graph_site = recorder.graph_timings().begin(s.stream, s.node, s.thread->thread_id);
    }
    s.captured = true;
    return;
  }
  if (capture != cudaStreamCaptureStatusNone) return;  // an invalidated capture: host time only
  s.events = acquire_event_pair(*s.thread);
  try {
    s.events.record_begin(s.stream);
  } catch (...) {
    s.thread->events.release(s.events);
    throw;
  }
  s.timed = true;
}

// The end event, or the end stamp of a captured scope. True: the pair is in
// flight and the record waits for it.
inline bool finish_gpu_timing(ScopeState& s) noexcept {
  if (s.timed) {
    const cudaError_t status = cudaEventRecord(s.events.end, s.stream);
    if (status == cudaSuccess) {
      s.thread->readback.note_end(s.stream);
      return true;
    }
    s.thread->events.release(s.events);
    recorder().note_lost_gpu_time(cudaGetErrorName(status));
    return false;
  }
  if (s.captured && s.graph_site) {
    if (const char* failure = recorder().graph_timings().end(s.graph_site, s.stream))
      recorder().note_lost_gpu_time(failure);
  } else if (s.captured) {
    try {
      recorder().with_graph_interval_source(
          [&s](GraphIntervalSource& source) { source.captured_scope_closed(s.stream); });
    } catch (...) {  // the lock could not be taken: the graph stays whole, which is only slower
    }
  }
  return false;
}
#endif

// Observers, GPU timing and a due clock calibration, which a plain
// host-clock scope skips. A throwing observer, event record or calibration
// must not leave the NVTX range open and this node as the thread's current
// one: no destructor will run.
inline void open_rest(ScopeState& s, std::uint32_t mode) {
  s.observed = 0;
#if GPUPROF_WITH_CUDA
  s.timed = false;
#endif
  try {
    if (mode & mode_observers) notify_begin(s);
#if GPUPROF_WITH_CUDA
    if (mode & mode_gpu) begin_gpu_timing(s);
#endif
    if (s.thread->last_exit_ticks >= s.thread->calibration_due) {
      TickClock& clock = recorder().tick_clock();
      clock.calibrate_if_due(s.thread->last_exit_ticks);
      s.thread->calibration_due = clock.next_due();
    }
  } catch (...) {
#if GPUPROF_WITH_CUDA
    if (s.timed) s.thread->events.release(s.events);
#endif
    close_scope(s, mode);
    throw;
  }
}

inline ThreadState& register_thread() { return register_this_thread(); }

}  // namespace scope_backend_impl

inline const ScopeBackend& scope_backend_functions() noexcept {
  static constexpr ScopeBackend functions {
    scope_backend_impl::register_thread, scope_backend_impl::take_instance_ids,
        scope_backend_impl::resolve_unbound_name, scope_backend_impl::child_node_slow,
        scope_backend_impl::open_rest, scope_backend_impl::notify_end, scope_backend_impl::defer_close,
        scope_backend_impl::make_room,
#if GPUPROF_WITH_CUDA
        scope_backend_impl::finish_gpu_timing,
#endif
  };
  return functions;
}

inline bool install_scope_backend() noexcept {
  scope_backend.store(&scope_backend_functions(), std::memory_order_release);
  return true;
}

// Before main(), so that a translation unit that only includes scope.hpp
// finds the backend when its first scope creates the Recorder. It makes every
// translation unit that includes this header compile the Recorder (about
// 0.7-0.8 s at -O2): a program defines GPUPROF_RECORDER_IN_ONE_UNIT everywhere
// and includes <gpuprof/recorder_unit.hpp> in one file instead
// (docs/compile-cost.md).
#ifndef GPUPROF_RECORDER_IN_ONE_UNIT
inline const bool scope_backend_installed = install_scope_backend();
#endif

}  // namespace detail
GPUPROF_NAMESPACE_END
