// gpuprof/scope.hpp: GPUPROF_SCOPE, the RAII measurement of a block of code.
//
//   GPUPROF_SCOPE("forward");                          // host clock (+ events on stream 0)
//   GPUPROF_SCOPE("forward", stream);                  // CUDA events on `stream`
//   GPUPROF_SCOPE("attention", stream, gpuprof::Work{flops, bytes, tokens});
//
// A scope opens an NVTX range (domain "gpuprof"), records a pair of CUDA
// events on the stream (pooled: nothing is created or synchronized per scope;
// the pair is read back later, at report() or when the pool runs dry) and the
// host clock (detail::host_ticks(): the TSC where it is invariant, converted
// to steady_clock ns by report()). Scopes nest per thread into a call tree
// ("step/forward/attention"); threads share the tree by path. Without a
// usable GPU, events are skipped and the host clock is the time (said once on
// stderr).
//
// Inside a CUDA stream capture a scope puts two time-stamp kernels into the
// graph instead, and every replay of the graph becomes an instance of it
// (detail/graph_timing.hpp); the capture itself is not an instance. While a
// KernelCapture is capturing it adds no stamps: its replays are timed from
// the captured kernels (detail/graph_intervals.hpp), and the capture may add
// a split node at its close (KernelCapture::captured_scope_closed).
// Profiler::set_nvtx_only(true): scopes push and pop their NVTX range and do
// nothing else (no clock, no record), for runs under Nsight.
//
// With GPUPROF_DISABLE defined every macro here compiles to nothing and its
// arguments are not evaluated. Works from plain C++17 translation units.
#pragma once
#include <cstdint>
#include <new>

#include "config.hpp"

#ifndef GPUPROF_DISABLE

#include "cuda_events.hpp"
#include "detail/names.hpp"
#include "detail/recorder.hpp"
#include "detail/thread_ops.hpp"
#include "detail/tick_clock.hpp"
#include "work.hpp"

GPUPROF_NAMESPACE_BEGIN

class Scope {
 public:
  // `name`: a string literal (identified by address after the first use) or
  // anything convertible to std::string_view (looked up by text).
  template <class Name>
  Scope(detail::CallSite& site, const Name& name, Stream stream = nullptr) {
    begin(site, name, stream, nullptr);
  }
  template <class Name>
  Scope(detail::CallSite& site, const Name& name, Stream stream, const Work& work) {
    begin(site, name, stream, &work);
  }
  template <class Name>
  Scope(detail::CallSite& site, const Name& name, const Work& work) {
    begin(site, name, nullptr, &work);
  }

  ~Scope() {
    if (mode_ & detail::mode_nvtx_only)
      nvtx_pop();
    else
      finish();
  }

  Scope(const Scope&) = delete;
  Scope& operator=(const Scope&) = delete;
  Scope(Scope&&) = delete;
  Scope& operator=(Scope&&) = delete;

  // 0 in NVTX-only mode
  std::uint64_t instance_id() const noexcept { return (mode_ & detail::mode_nvtx_only) ? 0 : s_.id; }

 private:
  // One relaxed load of the mode word decides everything; NVTX-only mode is
  // then the call site's cached range name and the push, inline.
  template <class Name>
  void begin(detail::CallSite& site, const Name& name, Stream stream, const Work* work) {
    mode_ = detail::scope_mode.load(std::memory_order_relaxed);
    if (mode_ & detail::mode_nvtx_only) {
      detail::nvtx_only_name(site, name).push();
      return;
    }
    open(site, name, stream, work);
  }

  // Out of line, so that the NVTX-only path stays a few instructions. The
  // host clock's path reads and writes the thread's state only, plus the call
  // site's binding: no recorder(), no atomic read-modify-write, no string work.
  template <class Name>
  GPUPROF_DETAIL_NOINLINE void open(detail::CallSite& site, const Name& name, Stream stream, const Work* work) {
    detail::ThreadState& thread = detail::this_thread();  // creates the Recorder on the first scope
    // Read before the Recorder existed: read again. NVTX-only was not set
    // when this scope began, so it is timed even if that changed meanwhile.
    if (mode_ & detail::mode_unready)
      mode_ = detail::scope_mode.load(std::memory_order_relaxed) & ~std::uint32_t{detail::mode_nvtx_only};
    new (&s_) State;
    s_.thread = &thread;
    s_.stream = stream;
    s_.work = work ? *work : Work{};
    const detail::NameEntry& entry = detail::resolve_name(thread, site, name);
    s_.parent = thread.current.load(std::memory_order_relaxed);
    s_.node = detail::child_node(thread, s_.parent, entry.id);
    // Room for this scope's record and every enclosing one's: taken here, where
    // a failed allocation may throw, so that no destructor allocates.
    detail::RecordLog& records = thread.records;
    const std::uint64_t needed = records.size() + thread.open_scopes + 1;
    if (needed > records.capacity()) records.reserve(needed);
    ++thread.open_scopes;
    s_.id = detail::next_instance_id(thread);
    entry.nvtx.push();
    thread.current.store(s_.node, std::memory_order_relaxed);
    // Kept on every timed scope, not only in GPU mode: a graph node captured
    // now is attributed to this instance (detail::innermost_scope_instance()).
    s_.parent_instance = thread.current_instance;
    thread.current_instance = s_.id;
    if ((mode_ & (detail::mode_observers | detail::mode_gpu)) || thread.last_exit_ticks >= thread.calibration_due)
      open_rest();
    s_.begin_ticks = detail::scope_ticks(mode_);
  }

  // Observers, GPU timing and a due clock calibration, which a plain
  // host-clock scope skips. A throwing observer, event record or calibration
  // must not leave the NVTX range open and this node as the thread's current
  // one: no destructor will run.
  GPUPROF_DETAIL_NOINLINE void open_rest() {
    s_.observed = 0;
#if GPUPROF_WITH_CUDA
    s_.timed = false;
#endif
    try {
      if (mode_ & detail::mode_observers) notify_begin();
#if GPUPROF_WITH_CUDA
      if (mode_ & detail::mode_gpu) begin_gpu_timing();
#endif
      if (s_.thread->last_exit_ticks >= s_.thread->calibration_due) {
        detail::TickClock& clock = detail::recorder().tick_clock();
        clock.calibrate_if_due(s_.thread->last_exit_ticks);
        s_.thread->calibration_due = clock.next_due();
      }
    } catch (...) {
#if GPUPROF_WITH_CUDA
      if (s_.timed) s_.thread->events.release(s_.events);
#endif
      close();
      throw;
    }
  }

  // Allocates nothing and throws nothing: what could fail (room for the
  // record, an event pair, a graph site) was taken at entry.
  GPUPROF_DETAIL_NOINLINE void finish() noexcept {
    const std::int64_t end_ticks = detail::scope_ticks(mode_);
    detail::ThreadState& thread = *s_.thread;
    thread.last_exit_ticks = end_ticks;
    bool gpu_pending = false;
#if GPUPROF_WITH_CUDA
    if (mode_ & detail::mode_gpu) {
      gpu_pending = finish_gpu_timing();
      if (s_.captured) {
        // Captured, not executed: the graph's replays are the instances.
        close();
        return;
      }
    }
#endif
    close();
    // Taken only now: an observer's on_scope_end may itself have used scopes.
    detail::InstanceRecord& record = thread.records.next_slot();
    record.id = s_.id;
    record.node = s_.node;
    record.host_begin_ticks = s_.begin_ticks;
    record.host_end_ticks = end_ticks;
    record.work = s_.work;
    record.gpu_ms = -1;
    record.gpu_pending = gpu_pending;
#if GPUPROF_WITH_CUDA
    if (gpu_pending) record.events = s_.events;
#endif
    thread.records.publish_next();
    detail::reclaim_after_reset(thread);
  }

  void notify_begin() {
    const detail::Recorder& recorder = detail::recorder();
    for (int slot = 0; slot < detail::Recorder::max_observers; ++slot) {
      if (ScopeObserver* observer = recorder.observer(slot)) {
        observer->on_scope_begin(s_.id);
        s_.observed |= static_cast<std::uint8_t>(1u << slot);
      }
    }
  }
  GPUPROF_DETAIL_NOINLINE void notify_end() noexcept {
    const detail::Recorder& recorder = detail::recorder();
    for (int slot = 0; slot < detail::Recorder::max_observers; ++slot)
      if ((s_.observed >> slot) & 1u)
        if (ScopeObserver* observer = recorder.observer(slot)) observer->on_scope_end(s_.id);
  }
  // Everything after the events, in reverse order of opening.
  void close() noexcept {
    if ((mode_ & detail::mode_observers) && s_.observed) notify_end();
    nvtx_pop();
    s_.thread->current.store(s_.parent, std::memory_order_relaxed);
    s_.thread->current_instance = s_.parent_instance;
    --s_.thread->open_scopes;
  }
#if GPUPROF_WITH_CUDA
  // The end event, or the end stamp of a captured scope. True: the pair is in
  // flight and the record waits for it.
  GPUPROF_DETAIL_NOINLINE bool finish_gpu_timing() noexcept {
    if (s_.timed) {
      const cudaError_t status = cudaEventRecord(s_.events.end, s_.stream);
      if (status == cudaSuccess) return true;
      s_.thread->events.release(s_.events);
      detail::recorder().note_lost_gpu_time(cudaGetErrorName(status));
      return false;
    }
    if (s_.captured && s_.graph_site) {
      if (const char* failure = detail::recorder().graph_timings().end(s_.graph_site, s_.stream))
        detail::recorder().note_lost_gpu_time(failure);
    } else if (s_.captured) {
      try {
        detail::recorder().with_graph_interval_source(
            [this](detail::GraphIntervalSource& source) { source.captured_scope_closed(s_.stream); });
      } catch (...) {  // the lock could not be taken: the graph stays whole, which is only slower
      }
    }
    return false;
  }
  // An eager stream gets an event pair. A capturing stream gets stamp nodes
  // in the graph (detail/graph_timing.hpp), or with kernel capture on, only a
  // note (detail/graph_intervals.hpp): every replay is timed later.
  void begin_gpu_timing() {
    s_.graph_site = nullptr;
    s_.captured = false;
    cudaStreamCaptureStatus capture = cudaStreamCaptureStatusNone;
    GPUPROF_CUDA_CHECK(cudaStreamIsCapturing(s_.stream, &capture));
    if (capture == cudaStreamCaptureStatusActive) {
      detail::Recorder& recorder = detail::recorder();
      if (recorder.graph_intervals_derived()) {
        unsigned long long capture_id = 0;
        GPUPROF_CUDA_CHECK(cudaStreamGetCaptureInfo(s_.stream, &capture, &capture_id));
        recorder.graph_timings().note_unstamped(
            {s_.id, s_.parent_instance, capture_id, s_.node, s_.thread->thread_id});
      } else {
        s_.graph_site = recorder.graph_timings().begin(s_.stream, s_.node, s_.thread->thread_id);
      }
      s_.captured = true;
      return;
    }
    if (capture != cudaStreamCaptureStatusNone) return;  // an invalidated capture: host time only
    s_.events = detail::acquire_event_pair(*s_.thread);
    try {
      s_.events.record_begin(s_.stream);
    } catch (...) {
      s_.thread->events.release(s_.events);
      throw;
    }
    s_.timed = true;
  }
#endif

  // What open() sets, in a union so that NVTX-only mode constructs none of
  // it (not even its members' default initializers: stores on every scope).
  struct State {
    detail::ThreadState* thread;
    Stream stream;
    Work work;
    std::uint64_t id;
    std::uint64_t parent_instance;  // the thread's current_instance before this scope
    std::int64_t begin_ticks;
    std::uint32_t parent;
    std::uint32_t node;
    std::uint8_t observed;  // set by open_rest() with observers: bit i, observer slot i saw on_scope_begin
#if GPUPROF_WITH_CUDA
    // Set by open_rest() in GPU mode; no other mode reads them.
    EventPair events;
    detail::GraphSite* graph_site;  // stamped
    bool timed;
    bool captured;  // entered on a capturing stream: not an instance itself
#endif
  };
  std::uint32_t mode_;  // detail::scope_mode as this scope read it
  union {
    State s_;  // constructed by open(); trivially destructible
  };
};

GPUPROF_NAMESPACE_END

#define GPUPROF_DETAIL_SCOPE(id, ...)                                           \
  static ::gpuprof::detail::CallSite GPUPROF_DETAIL_CONCAT(gpuprof_call_site_, id); \
  const ::gpuprof::Scope GPUPROF_DETAIL_CONCAT(gpuprof_scope_, id)(               \
      GPUPROF_DETAIL_CONCAT(gpuprof_call_site_, id), __VA_ARGS__)

// GPUPROF_SCOPE(name[, stream][, work]) or GPUPROF_SCOPE(name, work): see above.
#define GPUPROF_SCOPE(...) GPUPROF_DETAIL_SCOPE(__COUNTER__, __VA_ARGS__)

#else  // GPUPROF_DISABLE: nothing is compiled, nothing is evaluated

#define GPUPROF_SCOPE(...) static_assert(true, "")

#endif
