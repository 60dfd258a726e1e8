// gpuprof/detail/scope_state.hpp: what a scope touches on its hot path (the
// mode word, its thread's state, its own state) and the narrow interface to
// the rest (ScopeBackend).
//
// This is all scope.hpp compiles: the Recorder, graph timing and the name
// table are reached through ScopeBackend, a table of function pointers that
// detail/recorder.hpp installs before main(). A scope that finds no backend
// still pushes and pops its NVTX range, records nothing, is counted, and the
// first one says so on stderr. Why, and which headers install it:
// docs/internals.md#scopes-in-cuda-stream-capture-and-the-recorder-behind-scopehpp.
#pragma once
#include <atomic>
#include <cstdint>
#include <cstdio>
#include <string>
#include <string_view>
#include <type_traits>

#include "../config.hpp"
#include "../cuda_events.hpp"
#include "../work.hpp"
#include "../call_site.hpp"
#include "record_log.hpp"
#include "tsc.hpp"

GPUPROF_NAMESPACE_BEGIN
namespace detail {

struct ThreadTables;   // recorder.hpp: the maps behind a thread's caches
struct GraphSite;      // graph_timing.hpp
struct DeferredClose;  // below: a scope ended before the scopes opened inside it

#if GPUPROF_WITH_CUDA
// What resolve_completed() (thread_ops.hpp) remembers between its passes.
// Asking about a pair still in flight (cudaEventQuery's NotReady) makes the
// driver submit the stream's queued work, which costs microseconds; so a pass
// asks only about records published before the previous pass, waits
// `retry_ns` after meeting one in flight, and, while every end event went to
// one stream, asks about the newest of them only: stream order completes the
// rest. docs/headers.md#event-pairs explains the figures.
struct PairReadback {
  static constexpr std::int64_t retry_ns = 100'000;
  std::uint64_t asked_below = 0;  // records published at the previous pass
  std::int64_t next_pass_ns = 0;  // no pass before this after one met work in flight
  Stream end_stream = nullptr;
  bool end_stream_known = false;  // an end was recorded since nothing was pending
  bool end_streams_mixed = false;
  void note_end(Stream stream) noexcept {
    if (!end_stream_known) {
      end_stream = stream;
      end_stream_known = true;
    } else if (stream != end_stream) {
      end_streams_mixed = true;
    }
  }
};
#endif

// ThreadState::exit_work: what a scope's exit has to do besides recording itself.
enum ExitWork : std::uint8_t {
  exit_reclaim = 1u,   // reset() discarded records: compact the log (reclaim_discarded())
  exit_deferred = 2u,  // scopes ended out of order wait to leave the tree (close_deferred())
};

inline constexpr std::uint32_t root_node = 0;  // global and local id of the virtual root
inline constexpr std::uint32_t no_node = 0xFFFFFFFFu;

// What a scope does, in one word that it loads once (relaxed) at entry:
// settings change rarely, and a scope that starts just before a change
// finishes in the mode it started in. Written by the Recorder's setters.
enum ScopeMode : std::uint32_t {
  mode_nvtx_only = 1u,  // Profiler::set_nvtx_only(true): the range and nothing else
  mode_gpu = 2u,        // record CUDA events: a usable device and set_gpu_timing(true)
  mode_observers = 4u,  // at least one ScopeObserver is registered
  mode_unready = 8u,    // no Recorder yet: the first scope creates it, then reads the word again
  mode_tsc = 16u,       // ticks_are_tsc(): scope_ticks() reads the TSC without asking again
  // Never in scope_mode: a scope's own note that no backend was installed
  // (no translation unit includes detail/recorder.hpp), so it pushed its
  // NVTX range and records nothing.
  mode_unrecorded = 32u,
  // Never in scope_mode either: a ScopeHandle that has ended or was moved
  // from, so it ends nothing more.
  mode_ended = 64u,
  // Profiler::step()'s schedule has the current step outside its active
  // steps: scopes record as ever, and report() leaves them out.
  mode_step_left_out = 128u,
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

  // Global node of the innermost open scope. Atomic (relaxed: plain loads and
  // stores) only so that report() may read it to mark scopes still open.
  std::atomic<std::uint32_t> current{root_node};
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
  // ExitWork bits, read by every scope's exit with one load: reset() sets
  // exit_reclaim from any thread, the owner sets exit_deferred.
  std::atomic<std::uint8_t> exit_work{0};
  const std::uint32_t thread_id;
  RecordLog records;

  // (parent node, name) -> child node, for the node a scope enters: a
  // direct-mapped cache in front of `tables->children`, which holds every pair this
  // thread has seen (the Recorder's table behind both is shared and locked).
  struct ChildSlot {
    std::uint64_t key = ~std::uint64_t{0};  // no pair: the root has no parent
    std::uint32_t child = 0;
  };
  static constexpr int child_cache_bits = 8;
  ChildSlot child_cache[1u << child_cache_bits];
  ThreadTables* tables = nullptr;  // the maps behind the caches (recorder.hpp), set at registration
  std::uint64_t resolve_from = 0;  // first record that may still hold a pending event pair
  // reset(): records before this index are gone; the owner compacts the log
  // when it next can (see reclaim_after_reset() in thread_ops.hpp).
  std::atomic<std::uint64_t> discard_before{0};
  DeferredClose* deferred = nullptr;  // scopes ended out of order, still in the tree (owner only)
#if GPUPROF_WITH_CUDA
  EventPool events;
  PairReadback readback;
#endif
};

// The calling thread's state; null until it opens its first scope. One
// trivially initialized thread_local: no guard, no TLS wrapper call.
inline thread_local ThreadState* this_thread_state = nullptr;

// What open() sets, in a union inside Scope so that NVTX-only mode constructs
// none of it (not even its members' default initializers: stores on every
// scope).
struct ScopeState {
  ThreadState* thread;
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
  GraphSite* graph_site;  // stamped
  bool timed;
  bool captured;  // entered on a capturing stream: not an instance itself
#endif
};

// A scope that ended while scopes opened inside it were still open (a
// ScopeHandle ended early, or a block around a handle that outlives it).
// Its time was taken when it ended; it leaves the call tree, and is
// recorded, when the scopes inside it have left: NVTX push/pop ranges and
// CUPTI's ranges are stacks, and the tree's parent links must stay whole.
struct DeferredClose {
  ScopeState state;
  std::uint32_t mode;
  std::int64_t end_ticks;
  bool gpu_pending;
  DeferredClose* next;
};

// The out-of-line half of a scope (defined in recorder.hpp): first sights
// (a thread, a name, a node, a block of instance ids) and whatever a plain
// host-clock scope skips (observers, GPU timing, clock calibration).
struct ScopeBackend {
  ThreadState& (*register_thread)();
  void (*take_instance_ids)(ThreadState& thread) noexcept;
  const NameEntry& (*resolve_unbound_name)(ThreadState& thread, CallSite& site, std::string_view text,
                                           const char* literal);
  std::uint32_t (*child_node_slow)(ThreadState& thread, std::uint64_t key);
  void (*open_rest)(ScopeState& scope, std::uint32_t mode);  // may throw, leaving the scope closed
  void (*notify_end)(ScopeState& scope) noexcept;
  // Keeps an out-of-order end (DeferredClose) on the thread's list and says so
  // once per scope name; false if it could not be kept (out of memory).
  bool (*defer_close)(const DeferredClose& ended) noexcept;
  // Room in the thread's log for the scope being opened and every open one
  // (folding a long log first); may throw.
  void (*make_room)(ThreadState& thread);
#if GPUPROF_WITH_CUDA
  bool (*finish_gpu_timing)(ScopeState& scope) noexcept;  // true: the event pair is in flight
#endif
};
inline std::atomic<const ScopeBackend*> scope_backend{nullptr};
// Scopes that found no backend and did nothing; the Recorder says so when it starts.
inline std::atomic<std::uint64_t> scopes_without_backend{0};

// Must be installed: only code that runs after a scope registered its thread calls it.
inline const ScopeBackend& installed_backend() noexcept {
  return *scope_backend.load(std::memory_order_acquire);
}

// Said once per process, by the first scope that finds no backend.
GPUPROF_DETAIL_NOINLINE inline void say_scopes_unrecorded() noexcept {
#ifdef GPUPROF_RECORDER_IN_ONE_UNIT
  const char* const header = "<gpuprof/recorder_unit.hpp> (GPUPROF_RECORDER_IN_ONE_UNIT is defined)";
#else
  const char* const header = "<gpuprof/profiler.hpp> (or gpuprof.hpp)";
#endif
  std::fprintf(
      stderr,
      "gpuprof: no recorder is installed, so %s; to record their timings, #include %s in one "
      "source file of the program\n",
      GPUPROF_WITH_NVTX ? "scopes only push their NVTX ranges" : "scopes do nothing (a build without NVTX)",
      header);
}

// The calling thread's state, registered (and the Recorder created) on its
// first scope; null without a backend (and the scope is counted).
GPUPROF_DETAIL_NOINLINE inline ThreadState* register_scope_thread() {
  const ScopeBackend* backend = scope_backend.load(std::memory_order_acquire);
  if (backend) return &backend->register_thread();
  if (scopes_without_backend.fetch_add(1, std::memory_order_relaxed) == 0) say_scopes_unrecorded();
  return nullptr;
}

inline ThreadState* scope_thread() {
  if (ThreadState* state = this_thread_state) return state;
  return register_scope_thread();
}

// A scope without a backend: its NVTX range, named by its text (nothing
// interns names in such a program). A string literal or C string is passed
// as it is; anything else is copied to end it with a NUL. Out of line:
// Scope::open() stays as short on its usual path as it was.
template <class Name>
GPUPROF_DETAIL_NOINLINE void push_unrecorded_range(const Name& name) {
  if constexpr (std::is_convertible_v<const Name&, const char*>) {
    nvtx_push_text(name);
  } else {
    const std::string text{std::string_view(name)};
    nvtx_push_text(text.c_str());
  }
}

// The scope's instance id: from the thread's block, a new block when it is used up.
inline std::uint64_t next_instance_id(ThreadState& thread) noexcept {
  if (thread.next_instance_id == thread.instance_id_end) installed_backend().take_instance_ids(thread);
  return thread.next_instance_id++;
}

// Everything after a scope's events, in reverse order of opening.
inline void close_scope(ScopeState& scope, std::uint32_t mode) noexcept {
  if ((mode & mode_observers) && scope.observed) installed_backend().notify_end(scope);
  nvtx_pop();
  scope.thread->current.store(scope.parent, std::memory_order_relaxed);
  scope.thread->current_instance = scope.parent_instance;
  --scope.thread->open_scopes;
}

}  // namespace detail
GPUPROF_NAMESPACE_END
