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
// KernelCapture is capturing it adds nothing to the graph: its replays are
// timed from the captured kernels (detail/graph_intervals.hpp).
// Profiler::set_nvtx_only(true): scopes push and pop their NVTX range and do
// nothing else (no clock, no record), for runs under Nsight.
//
// With GPUPROF_DISABLE defined every macro here compiles to nothing and its
// arguments are not evaluated. Works from plain C++17 translation units.
#pragma once
#include <cstdint>

#include "config.hpp"

#ifndef GPUPROF_DISABLE

#include "cuda_events.hpp"
#include "detail/names.hpp"
#include "detail/recorder.hpp"
#include "detail/tick_clock.hpp"
#include "detail/thread_ops.hpp"
#include "work.hpp"

GPUPROF_NAMESPACE_BEGIN

class Scope {
 public:
  // `name`: a string literal (identified by address after the first use) or
  // anything convertible to std::string_view (looked up by text).
  template <class Name>
  Scope(detail::CallSite& site, const Name& name, Stream stream = nullptr, const Work& work = {}) {
    if (detail::nvtx_only_mode.load(std::memory_order_relaxed)) {  // the range and nothing else
      thread_ = nullptr;
      detail::nvtx_only_name(site, name).nvtx.push();
      return;
    }
    open(detail::recorder(), site, name, stream, work);
  }
  template <class Name>
  Scope(detail::CallSite& site, const Name& name, const Work& work) : Scope(site, name, nullptr, work) {}

  ~Scope() {
    if (thread_) {
      finish();
    } else {
      nvtx_pop();
    }
  }

  Scope(const Scope&) = delete;
  Scope& operator=(const Scope&) = delete;
  Scope(Scope&&) = delete;
  Scope& operator=(Scope&&) = delete;

  std::uint64_t instance_id() const noexcept { return thread_ ? id_ : 0; }  // 0 in NVTX-only mode

 private:
  // Out of line, so the NVTX-only path stays a few instructions.
  template <class Name>
  GPUPROF_DETAIL_NOINLINE void open(detail::Recorder& recorder, detail::CallSite& site, const Name& name,
                                    Stream stream, const Work& work) {
    stream_ = stream;
    work_ = work;
    observed_ = 0;
#if GPUPROF_WITH_CUDA
    graph_site_ = nullptr;
    timed_ = false;
    captured_ = false;
#endif
    thread_ = &recorder.this_thread();
    const detail::NameEntry& entry = detail::resolve_name(recorder, *thread_, site, name);
    parent_ = thread_->current;
    node_ = detail::enter_child(recorder, *thread_, parent_, entry);
    // Room for this scope's record and every enclosing one's: taken here, where
    // a failed allocation may throw, so that no destructor allocates.
    detail::RecordLog& records = thread_->records;
    const std::uint64_t needed = records.size() + thread_->open_scopes + 1;
    if (needed > records.capacity()) records.reserve(needed);
    ++thread_->open_scopes;
    id_ = recorder.next_instance_id(*thread_);
    entry.nvtx.push();
    thread_->current = node_;
    parent_instance_ = thread_->current_instance;
    thread_->current_instance = id_;
    // A throwing observer, event record or calibration must not leave the NVTX
    // range open and this node as the thread's current one: no destructor will run.
    try {
      if (recorder.has_observers()) notify_begin(recorder);
#if GPUPROF_WITH_CUDA
      if (recorder.gpu_timing()) begin_gpu_timing(recorder);
#endif
      recorder.tick_clock().calibrate_if_due(thread_->last_exit_ticks);
    } catch (...) {
#if GPUPROF_WITH_CUDA
      if (timed_) thread_->events.release(events_);
#endif
      close();
      throw;
    }
    begin_ticks_ = detail::host_ticks();
  }

  // Allocates nothing and throws nothing: what could fail (room for the
  // record, an event pair, a graph site) was taken at entry.
  GPUPROF_DETAIL_NOINLINE void finish() noexcept {
    const std::int64_t end_ticks = detail::host_ticks();
    thread_->last_exit_ticks = end_ticks;
    bool gpu_pending = false;
#if GPUPROF_WITH_CUDA
    if (timed_) {
      const cudaError_t status = cudaEventRecord(events_.end, stream_);
      gpu_pending = status == cudaSuccess;
      if (!gpu_pending) {
        thread_->events.release(events_);
        detail::recorder().note_lost_gpu_time(cudaGetErrorName(status));
      }
    }
    if (captured_) {
      // Captured, not executed: the graph's replays are the instances.
      if (graph_site_)
        if (const char* failure = detail::recorder().graph_timings().end(graph_site_, stream_))
          detail::recorder().note_lost_gpu_time(failure);
      close();
      return;
    }
#endif
    close();
    // Taken only now: an observer's on_scope_end may itself have used scopes.
    detail::InstanceRecord& record = thread_->records.next_slot();
    record.id = id_;
    record.node = thread_->local_nodes[node_].global;
    record.host_begin_ticks = begin_ticks_;
    record.host_end_ticks = end_ticks;
    record.work = work_;
    record.gpu_ms = -1;
    record.gpu_pending = gpu_pending;
#if GPUPROF_WITH_CUDA
    if (gpu_pending) record.events = events_;
#endif
    thread_->records.publish_next();
    detail::reclaim_after_reset(*thread_);
  }

  void notify_begin(detail::Recorder& recorder) {
    for (int slot = 0; slot < detail::Recorder::max_observers; ++slot) {
      if (ScopeObserver* observer = recorder.observer(slot)) {
        observer->on_scope_begin(id_);
        observed_ |= static_cast<std::uint8_t>(1u << slot);
      }
    }
  }
  // Everything after the events, in reverse order of opening.
  void close() noexcept {
    if (observed_) {
      detail::Recorder& recorder = detail::recorder();
      for (int slot = 0; slot < detail::Recorder::max_observers; ++slot)
        if ((observed_ >> slot) & 1u)
          if (ScopeObserver* observer = recorder.observer(slot)) observer->on_scope_end(id_);
    }
    nvtx_pop();
    thread_->current = parent_;
    thread_->current_instance = parent_instance_;
    --thread_->open_scopes;
  }
#if GPUPROF_WITH_CUDA
  // An eager stream gets an event pair. A capturing stream gets stamp nodes
  // in the graph (detail/graph_timing.hpp), or with kernel capture on, only a
  // note (detail/graph_intervals.hpp): every replay is timed later.
  void begin_gpu_timing(detail::Recorder& recorder) {
    cudaStreamCaptureStatus capture = cudaStreamCaptureStatusNone;
    GPUPROF_CUDA_CHECK(cudaStreamIsCapturing(stream_, &capture));
    if (capture == cudaStreamCaptureStatusActive) {
      const std::uint32_t node = thread_->local_nodes[node_].global;
      if (recorder.graph_intervals_derived()) {
        unsigned long long capture_id = 0;
        GPUPROF_CUDA_CHECK(cudaStreamGetCaptureInfo(stream_, &capture, &capture_id));
        recorder.graph_timings().note_unstamped({id_, parent_instance_, capture_id, node, thread_->thread_id});
      } else {
        graph_site_ = recorder.graph_timings().begin(stream_, node, thread_->thread_id);
      }
      captured_ = true;
      return;
    }
    if (capture != cudaStreamCaptureStatusNone) return;  // an invalidated capture: host time only
    events_ = detail::acquire_event_pair(*thread_);
    try {
      events_.record_begin(stream_);
    } catch (...) {
      thread_->events.release(events_);
      throw;
    }
    timed_ = true;
  }
  // Set by open(); left uninitialised in NVTX-only mode, which reads none of them.
  EventPair events_;
  detail::GraphSite* graph_site_;  // stamped
  bool timed_;
  bool captured_;  // entered on a capturing stream: not an instance itself
#endif

  detail::ThreadState* thread_;  // null: NVTX-only mode
  Stream stream_;
  Work work_;
  std::uint64_t id_;
  std::uint64_t parent_instance_;
  std::int64_t begin_ticks_;
  std::uint32_t parent_;
  std::uint32_t node_;
  std::uint8_t observed_;  // bit i: observer slot i saw on_scope_begin
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
