// gpuprof/scope.hpp: GPUPROF_SCOPE, the RAII measurement of a block of code.
//
// ```cpp
// #include <gpuprof/scope.hpp>
// void forward(gpuprof::Stream stream, double flops, double bytes, double tokens) {
//   GPUPROF_SCOPE("forward");  // host clock (+ events on stream 0)
//   {
//     GPUPROF_SCOPE("embed", stream);  // CUDA events on `stream`
//   }
//   GPUPROF_SCOPE("attention", stream, gpuprof::Work{flops, bytes, tokens});
// }
// ```
//
// A scope opens an NVTX range (domain "gpuprof"), records a pooled pair of
// CUDA events on the stream (read back at report() or when the pool runs dry)
// and the host clock. Scopes nest per thread into a call tree
// ("step/forward/attention"); threads share it by path. Without a usable GPU
// the host clock is the time (said once). Recording needs profiler.hpp in some
// source file; scopes in stream capture are timed per replay:
// docs/internals.md#scopes-in-cuda-stream-capture-and-the-recorder-behind-scopehpp.
// With GPUPROF_DISABLE every macro here compiles to nothing.
#pragma once
#include <cstdint>
#include <new>

#include "config.hpp"

#ifndef GPUPROF_DISABLE

#include "call_site.hpp"
#include "cuda_events.hpp"
#include "detail/scope_state.hpp"
#include "detail/thread_ops.hpp"
#include "work.hpp"

GPUPROF_NAMESPACE_BEGIN

class Scope {
 public:
  // `name`: a string literal (identified by address after the first use) or
  // anything convertible to std::string_view (looked up by text).
  template <class Name>
  Scope(CallSite& site, const Name& name, Stream stream = nullptr) {
    begin(site, name, stream, nullptr);
  }
  template <class Name>
  Scope(CallSite& site, const Name& name, Stream stream, const Work& work) {
    begin(site, name, stream, &work);
  }
  template <class Name>
  Scope(CallSite& site, const Name& name, const Work& work) {
    begin(site, name, nullptr, &work);
  }

  ~Scope() { end(); }

  Scope(const Scope&) = delete;
  Scope& operator=(const Scope&) = delete;
  Scope(Scope&&) = delete;
  Scope& operator=(Scope&&) = delete;

  // 0 in NVTX-only mode and in a program with no recorder
  std::uint64_t instance_id() const noexcept { return timed() ? s_.id : 0; }

 private:
  friend class ScopeHandle;  // scope_handle.hpp: the same scope, ended by a call
  // A handle's scope that has ended (or was moved from): it ends nothing.
  Scope() noexcept : mode_(detail::mode_ended) {}
  // Takes over `other`'s open scope (its state is plain data), leaving it ended.
  void take(Scope& other) noexcept {
    mode_ = other.mode_;
    if (other.timed()) new (&s_) detail::ScopeState(other.s_);
    other.mode_ = detail::mode_ended;
  }
  bool timed() const noexcept {
    return !(mode_ & (detail::mode_nvtx_only | detail::mode_unrecorded | detail::mode_ended));
  }
  void end() noexcept {
    if (mode_ & (detail::mode_nvtx_only | detail::mode_unrecorded | detail::mode_ended)) {
      if (mode_ & (detail::mode_nvtx_only | detail::mode_unrecorded)) nvtx_pop();
    } else {
      finish();
    }
  }

  // One relaxed load of the mode word decides everything; NVTX-only mode is
  // then the call site's cached range name and the push, inline.
  template <class Name>
  void begin(CallSite& site, const Name& name, Stream stream, const Work* work) {
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
  GPUPROF_DETAIL_NOINLINE void open(CallSite& site, const Name& name, Stream stream, const Work* work) {
    detail::ThreadState* const state = detail::scope_thread();  // creates the Recorder on the first scope
    if (!state) {  // no backend in this program: the range alone (detail/scope_state.hpp)
      detail::push_unrecorded_range(name);
      mode_ = detail::mode_unrecorded;
      return;
    }
    detail::ThreadState& thread = *state;
    // Read before the Recorder existed: read again. NVTX-only was not set
    // when this scope began, so it is timed even if that changed meanwhile.
    if (mode_ & detail::mode_unready)
      mode_ = detail::scope_mode.load(std::memory_order_relaxed) & ~std::uint32_t{detail::mode_nvtx_only};
    new (&s_) detail::ScopeState;
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
    if (needed > records.capacity()) detail::installed_backend().make_room(thread);
    ++thread.open_scopes;
    s_.id = detail::next_instance_id(thread);
    entry.nvtx.push();
    thread.current.store(s_.node, std::memory_order_relaxed);
    // Kept on every timed scope, not only in GPU mode: a graph node captured
    // now is attributed to this instance (detail::innermost_scope_instance()).
    s_.parent_instance = thread.current_instance;
    thread.current_instance = s_.id;
    if ((mode_ & (detail::mode_observers | detail::mode_gpu)) ||
        thread.last_exit_ticks >= thread.calibration_due)
      detail::installed_backend().open_rest(s_, mode_);
    s_.begin_ticks = detail::scope_ticks(mode_);
  }

  // Allocates nothing and throws nothing: what could fail (room for the
  // record, an event pair, a graph site) was taken at entry. A scope that is
  // not its thread's innermost (scopes opened inside it are still open: only
  // a ScopeHandle makes that possible) stops its clocks now and leaves the
  // tree after them (detail::DeferredClose).
  GPUPROF_DETAIL_NOINLINE void finish() noexcept {
    detail::DeferredClose ended;
    ended.end_ticks = detail::scope_ticks(mode_);
    s_.thread->last_exit_ticks = ended.end_ticks;
    ended.gpu_pending = false;
#if GPUPROF_WITH_CUDA
    if (mode_ & detail::mode_gpu) ended.gpu_pending = detail::installed_backend().finish_gpu_timing(s_);
#endif
    if (s_.thread->current_instance != s_.id) {
      ended.state = s_;
      ended.mode = mode_;
      if (detail::installed_backend().defer_close(ended)) return;
      // Out of memory: leaving the tree now is all that is left to do.
    }
    close_and_record(s_, mode_, ended.end_ticks, ended.gpu_pending);
  }

  static void close_and_record(detail::ScopeState& s, std::uint32_t mode, std::int64_t end_ticks,
                               bool gpu_pending) noexcept {
    detail::ThreadState& thread = *s.thread;
    detail::close_scope(s, mode);
#if GPUPROF_WITH_CUDA
    if ((mode & detail::mode_gpu) && s.captured) {
      // Captured, not executed: the graph's replays are the instances.
      after_exit(thread);
      return;
    }
#endif
    // Taken only now: an observer's on_scope_end may itself have used scopes.
    detail::InstanceRecord& record = thread.records.next_slot();
    record.id = s.id;
    record.node = s.node;
    record.host_begin_ticks = s.begin_ticks;
    record.host_end_ticks = end_ticks;
    record.work = s.work;
    record.gpu_ms = -1;
    record.gpu_pending = gpu_pending;
    record.step_left_out = (mode & detail::mode_step_left_out) != 0;
#if GPUPROF_WITH_CUDA
    if (gpu_pending) record.events = s.events;
#endif
    thread.records.publish_next();
    after_exit(thread);
  }

  // What a scope's exit does besides itself: one load when there is nothing.
  static void after_exit(detail::ThreadState& thread) noexcept {
    const std::uint8_t work = thread.exit_work.load(std::memory_order_acquire);
    if (work == 0) return;
    if (work & detail::exit_reclaim) detail::reclaim_discarded(thread);
    if (work & detail::exit_deferred) close_deferred(thread);
  }

  // The out-of-order ended scope that is now the thread's innermost, if one
  // is: it leaves the tree and is recorded (and the next one after it).
  GPUPROF_DETAIL_NOINLINE static void close_deferred(detail::ThreadState& thread) noexcept {
    for (detail::DeferredClose** link = &thread.deferred; *link; link = &(*link)->next) {
      if ((*link)->state.id != thread.current_instance) continue;
      detail::DeferredClose* const ready = *link;
      *link = ready->next;
      if (!thread.deferred)
        thread.exit_work.fetch_and(static_cast<std::uint8_t>(~detail::exit_deferred),
                                   std::memory_order_relaxed);
      close_and_record(ready->state, ready->mode, ready->end_ticks, ready->gpu_pending);
      delete ready;
      return;
    }
  }

  std::uint32_t mode_;  // detail::scope_mode as this scope read it (or mode_unrecorded)
  // Constructed by open(), in a union so that NVTX-only mode constructs none
  // of it; trivially destructible.
  union {
    detail::ScopeState s_;
  };
};

GPUPROF_NAMESPACE_END

#define GPUPROF_DETAIL_SCOPE(id, ...)                                       \
  static ::gpuprof::CallSite GPUPROF_DETAIL_CONCAT(gpuprof_call_site_, id); \
  const ::gpuprof::Scope GPUPROF_DETAIL_CONCAT(gpuprof_scope_, id)(         \
      GPUPROF_DETAIL_CONCAT(gpuprof_call_site_, id), __VA_ARGS__)

// GPUPROF_SCOPE(name[, stream][, work]) or GPUPROF_SCOPE(name, work): see above.
#define GPUPROF_SCOPE(...) GPUPROF_DETAIL_SCOPE(__COUNTER__, __VA_ARGS__)

#else  // GPUPROF_DISABLE: nothing is compiled, nothing is evaluated

#define GPUPROF_SCOPE(...) static_assert(true, "")

#endif
