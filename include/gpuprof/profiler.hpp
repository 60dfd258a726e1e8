// gpuprof/profiler.hpp: the process-wide profiler that scopes record into.
//
// ```cpp
// #include <gpuprof/profiler.hpp>
// #include <gpuprof/report.hpp>
// #include <iostream>
// int main() {
//   { GPUPROF_SCOPE("work"); }
//   gpuprof::Report r = gpuprof::profiler().report();  // call tree + statistics
//   gpuprof::print_table(r, std::cout);                // writers: report.hpp
// }
// ```
//
// report() reads back every pending CUDA-event pair (one device
// synchronization, and only if some pair is still pending), then builds the
// call tree, depth-first, with host and GPU Summary per node. Scopes may keep
// running on other threads meanwhile: the report is a snapshot of what had
// finished, and a pair such a scope published after that synchronization is
// waited for by itself (report() may run on a monitoring thread). Scopes
// still open are listed with their open instances (ScopeNode::open_instances),
// not counted. Instances that began in a bench() cold call or warm-up, and
// the first set_warmup(n) instances of each root scope with everything inside
// them, are left out and counted apart (Report::warmup_instances_left_out).
// ScopeObserver (scope_observer.hpp) lets kernel capture, memory tracking
// and hardware counters follow scopes and add to the report.
#pragma once
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "clock.hpp"
#include "config.hpp"
#include "detail/build_report.hpp"
#include "detail/recorder.hpp"
#include "detail/root_warmup.hpp"
#include "detail/time_spans.hpp"
#include "report_model.hpp"
#include "scope.hpp"
#include "scope_observer.hpp"
#include "step_schedule.hpp"

GPUPROF_NAMESPACE_BEGIN

class Profiler {
 public:
  // Resolves pending GPU times and returns a snapshot of everything recorded
  // since the start (or the last reset()). Incremental: the instances read
  // are folded into per-node aggregates (online_summary.hpp) and given back
  // to their threads, so a report costs what happened since the last one
  // plus the size of the tree, not the length of the run.
  Report report();
  // Forgets every finished instance. Scopes open at the time are recorded
  // when they close. The step count and the schedule go on (a report and a
  // reset() at each record_and_save step give one report per cycle, as
  // torch.profiler's on_trace_ready does); set_schedule() starts them again.
  void reset();

  // Marks a step boundary: the step that was running ends, the next begins.
  // Without a schedule it only counts. With one (step_schedule.hpp), scope
  // instances that begin in a step whose action is not active (skip_first,
  // wait, warmup, past the last cycle) are recorded as ever but left out of
  // report(): statistics, trace window and kernel capture cover the active
  // steps only, as torch.profiler records only those. They are counted
  // (instances_outside_active_steps(), and the report's timing_note). An
  // instance belongs to the step it began in. Observers hear each step's
  // action (ScopeObserver::on_step); kernel capture captures in active steps
  // only. bench() warm-up calls and set_warmup(n) still leave their instances
  // out: set_warmup(n) counts the first n root instances the schedule keeps.
  void step();
  // Starts `schedule` at step 0 now. gpuprof::Error if active < 1.
  void set_schedule(const StepSchedule& schedule);
  // Every step active again (the step count goes on).
  void clear_schedule();
  std::optional<StepSchedule> schedule() const;
  // Steps begun since the start or set_schedule(): 0 until the first step().
  std::uint64_t step_number() const;
  // The current step's action (record without a schedule).
  StepAction step_action() const;
  // Scope instances left out because they began outside the active steps,
  // since the start or the last reset() (those read by a report so far).
  std::uint64_t instances_outside_active_steps() const {
    const std::lock_guard<std::mutex> folding(fold_mutex_);
    return step_left_out_folded_;
  }

  // cuda_events when a device is usable and GPU timing is on; host_clock
  // otherwise, with timing_note() saying why.
  TimingSource timing_source() const;
  std::string timing_note() const;
  const std::string& device_name() const { return detail::recorder().device().name; }
  // false: scopes and bench use the host clock only (NVTX ranges stay).
  void set_gpu_timing(bool enabled) { detail::recorder().set_gpu_timing(enabled); }
  // What set_gpu_timing last asked for (true by default), device or not.
  bool gpu_timing_requested() const { return detail::recorder().gpu_timing_requested(); }
  // true: scopes only push and pop their NVTX range (no clock, no record, no
  // report), the cheapest way to name ranges for Nsight Systems.
  void set_nvtx_only(bool enabled) { detail::recorder().set_nvtx_only(enabled); }
  // Whether a scope opened now records CUDA events (a usable device, GPU
  // timing on, not NVTX-only): for a caller that looks up the stream only
  // when it will be used (the Python binding asks torch for it).
  bool scopes_record_events() const noexcept {
    const std::uint32_t mode = detail::scope_mode.load(std::memory_order_relaxed);
    return (mode & detail::mode_gpu) && !(mode & detail::mode_nvtx_only);
  }
  // The first n instances of each root scope (a training loop's cold first
  // steps), with everything inside them, are left out of report()'s
  // statistics and counted in warmup_instances_left_out; each node's first
  // left-out time stays as ScopeNode::cold_ms. Wins over GPUPROF_WARMUP=n
  // (read at start). gpuprof::Error for n < 0. See detail/root_warmup.hpp.
  void set_warmup(long n) { warmup_.set(n); }
  long warmup() const { return warmup_.count(); }
  // This process's place in a multi-process run, written into every report
  // (merge.hpp combines them). Unset (or set to a negative rank), reports read
  // RANK, WORLD_SIZE and LOCAL_RANK from the environment at report time.
  void set_rank(int rank, int world_size, int local_rank = -1) {
    rank_ = rank >= 0 ? std::optional<RankInfo>(RankInfo{rank, world_size, local_rank}) : std::nullopt;
  }
  // Scope instances kept for the timeline and the traces: the newest n
  // (default 20,000, detail::default_trace_window); 0 keeps every one (the
  // full trace). Statistics cover every instance either way. At start
  // GPUPROF_FULL_TRACE=1 sets 0 and GPUPROF_TRACE_WINDOW=n sets n.
  void set_trace_window(std::size_t instances) {
    const std::lock_guard<std::mutex> folding(fold_mutex_);
    folded_.set_window(instances);
  }
  std::size_t trace_window() const {
    const std::lock_guard<std::mutex> folding(fold_mutex_);
    return folded_.window();
  }

#if GPUPROF_WITH_CUDA
  // Replays of captured scopes whose time stamps were lost (overwritten
  // before being read, from overlapping launches of one graph, or longer
  // than 18 minutes).
  std::uint64_t lost_graph_replays() const {
    const auto losses = detail::recorder().graph_timings().losses();
    return losses.overwritten + losses.overlapped + losses.too_long;
  }
#endif

  // Observers are called from every thread that opens a scope; keep them
  // alive (and thread-safe) until remove_observer returns and no scope that
  // began while they were registered is still open. remove_observer waits for
  // report() and reset() calls in progress to finish with the observer, so
  // those never call one that was removed; an observer's contribute() and
  // on_reset() must therefore not add or remove observers. At most 8 at once.
  void add_observer(ScopeObserver* observer) { detail::recorder().add_observer(observer); }
  void remove_observer(ScopeObserver* observer) { detail::recorder().remove_observer(observer); }

 private:
#if GPUPROF_WITH_CUDA
  static float read_pending_pair(const EventPair& pair, bool& synchronized);
#endif
  struct WarmupSpans {
    detail::TimeSpans ticks, ns, replays;
  };
  struct ReadContext {
    detail::TickConverter ticks;
    detail::TimeSpans in_warmup_ticks;
    std::vector<detail::GlobalNode> nodes;  // taken before the records: holds each record's node
    bool hold_back_open_roots;
  };
  static WarmupSpans warmup_spans();
  // Records read for one report only (not folded) and left out.
  struct PendingLeftOut {
    std::uint64_t warmup = 0, outside_active_steps = 0;
  };
  void read_records(detail::ThreadState& thread, const ReadContext& context,
                    std::vector<detail::InstanceSnapshot>& to_fold,
                    std::vector<detail::InstanceSnapshot>* pending, PendingLeftOut& pending_left_out,
                    bool& synchronized);
  static void fold_from_owner(detail::ThreadState& thread);
  friend bool install_records_folder() noexcept;
#if GPUPROF_WITH_CUDA
  std::string graph_replays_lost_note() const;
#endif
  friend Profiler& profiler();
  std::optional<RankInfo> rank_;
  detail::RootWarmup warmup_;
  // What report() has read so far (incremental reports), under fold_mutex_.
  mutable std::mutex fold_mutex_;
  detail::ScopeAggregates folded_{detail::trace_window_from_environment()};
  std::uint64_t warmup_folded_ = 0;         // warm-up instances among the folded records
  std::uint64_t step_left_out_folded_ = 0;  // folded records that began outside the active steps
  // The schedule and the step count, under step_mutex_.
  mutable std::mutex step_mutex_;
  std::optional<StepSchedule> schedule_;
  std::uint64_t step_ = 0;
  void begin_step(StepAction action);  // under step_mutex_
  // The records being folded; kept so that its capacity (a fold's worth,
  // bounded by detail::fold_threshold per thread) is not allocated and
  // faulted in again by every report.
  std::vector<detail::InstanceSnapshot> fold_batch_;
  // Probes the device (and says so) up front; the clocks at start go into reports.
  Profiler() {
    detail::recorder();
    clocks_at_start();
  }
};

inline Profiler& profiler() {
  static Profiler instance;
  return instance;
}

// Lets a thread whose log grows past detail::fold_threshold fold its records
// (Profiler::fold_from_owner) whether or not profiler() was called yet: a
// program that reports only at the end still records in bounded memory.
inline bool install_records_folder() noexcept {
  detail::records_folder.store(&Profiler::fold_from_owner, std::memory_order_release);
  return true;
}
inline const bool records_folder_installed = install_records_folder();

inline TimingSource Profiler::timing_source() const {
  return detail::recorder().gpu_timing() ? TimingSource::cuda_events : TimingSource::host_clock;
}

inline std::string Profiler::timing_note() const {
  const detail::Recorder& recorder = detail::recorder();
  if (!recorder.device().usable) return recorder.device().reason;
  if (!recorder.gpu_timing_requested()) return "GPU timing turned off with set_gpu_timing(false)";
  return "";
}

// bench() warm-up spans: recorded scopes are tested on their host ticks,
// replays of captured scopes on their ns and their read order.
inline Profiler::WarmupSpans Profiler::warmup_spans() {
  std::vector<TimeInterval> ticks, ns;  // the first in host ticks, despite the fields' names
  std::vector<TimeInterval> replays;    // indices into graph_timings().samples()
  for (const detail::LeftOutSpan& span : detail::recorder().left_out_spans()) {
    ticks.push_back({span.begin_ticks, span.end_ticks});
    ns.push_back({span.begin_ns, span.end_ns});
    replays.push_back(
        {static_cast<std::int64_t>(span.begin_replay), static_cast<std::int64_t>(span.end_replay)});
  }
  return {detail::TimeSpans(std::move(ticks)), detail::TimeSpans(std::move(ns)),
          detail::TimeSpans(std::move(replays))};
}

// Reads `thread`'s records from its first unread one. Those up to the fold
// point go to `to_fold` and are handed back to the thread (it drops them, and
// returns their event pairs, at its next scope's exit); later ones go to
// `pending` (read for one report, null: left for later). The fold point is
// the end, or, with a warm-up count, just after the thread's last finished
// root instance: an instance inside a root still running may yet be warm-up.
// From the owner (`synchronized` true and no device synchronization wanted)
// it also stops at the first pair still in flight. Under fold_mutex_.
inline void Profiler::read_records(detail::ThreadState& thread, const ReadContext& context,
                                   std::vector<detail::InstanceSnapshot>& to_fold,
                                   std::vector<detail::InstanceSnapshot>* pending,
                                   PendingLeftOut& pending_left_out, bool& synchronized) {
  const detail::ReadingGuard guard(thread.records);
  const std::uint64_t begin = thread.discard_before.load(std::memory_order_relaxed);
  const std::uint64_t end = thread.records.published();
  const auto is_root = [&](std::uint32_t node) {
    return node < context.nodes.size() && context.nodes[node].parent == detail::root_node;
  };
  std::uint64_t fold_end = end;
  if (context.hold_back_open_roots)
    while (fold_end > begin && !is_root(thread.records.at(fold_end - 1).node)) --fold_end;
#if GPUPROF_WITH_CUDA
  if (!pending)  // the owner folding: no synchronization, so only pairs already done
    for (std::uint64_t i = begin; i < fold_end; ++i) {
      const detail::InstanceRecord& record = thread.records.at(i);
      if (record.gpu_pending && !record.events.completed()) fold_end = i;
    }
#endif
  const std::uint64_t read_end = pending ? end : fold_end;
  for (std::uint64_t i = begin; i < read_end; ++i) {
    const detail::InstanceRecord& record = thread.records.at(i);
    if (record.step_left_out) {
      if (i < fold_end) ++step_left_out_folded_;
      else ++pending_left_out.outside_active_steps;
      continue;
    }
    if (context.in_warmup_ticks.contains(record.host_begin_ticks)) {
      if (i < fold_end) ++warmup_folded_;
      else ++pending_left_out.warmup;
      continue;
    }
    detail::InstanceSnapshot snapshot;
    snapshot.id = record.id;
    snapshot.node = record.node;
    snapshot.thread = thread.thread_id;
    snapshot.host_begin_ns = context.ticks.to_ns(record.host_begin_ticks);
    snapshot.host_end_ns = context.ticks.to_ns(record.host_end_ticks);
    snapshot.work = record.work;
    snapshot.gpu_ms = record.gpu_ms;
#if GPUPROF_WITH_CUDA
    // The pair stays with its thread, which returns it to its pool later.
    if (record.gpu_pending) snapshot.gpu_ms = read_pending_pair(record.events, synchronized);
#else
    (void)synchronized;
#endif
    (i < fold_end ? to_fold : *pending).push_back(snapshot);
  }
  if (fold_end > begin) {
    thread.discard_before.store(fold_end, std::memory_order_relaxed);
    thread.exit_work.fetch_or(detail::exit_reclaim, std::memory_order_release);
  }
}

// A thread's log has grown past detail::fold_threshold records: it folds
// them itself (scope entry, detail::make_room), unless a report is folding
// now (the log then grows, and the report folds them).
inline void Profiler::fold_from_owner(detail::ThreadState& thread) {
  Profiler& self = profiler();
  const std::unique_lock<std::mutex> folding(self.fold_mutex_, std::try_to_lock);
  if (!folding.owns_lock()) return;
  detail::Recorder& recorder = detail::recorder();
  const ReadContext context{recorder.tick_clock().converter(), warmup_spans().ticks,
                            recorder.nodes_snapshot(), self.warmup_.count() > 0};
  std::vector<detail::InstanceSnapshot>& batch = self.fold_batch_;
  batch.clear();
  PendingLeftOut unused;
  bool synchronized = true;
  self.read_records(thread, context, batch, nullptr, unused, synchronized);
  std::vector<double> cold_ms;
  self.warmup_folded_ += self.warmup_.leave_out(batch, context.nodes, cold_ms);
  for (const detail::InstanceSnapshot& instance : batch) self.folded_.add(instance);
}

inline Report Profiler::report() {
  detail::Recorder& recorder = detail::recorder();
  WarmupSpans spans = warmup_spans();
#if GPUPROF_WITH_CUDA
  const detail::TimeSpans &in_warmup_ns = spans.ns, &in_warmup_replays = spans.replays;
#endif
  PendingLeftOut pending_left_out;
  std::uint64_t left_out = 0;
  std::vector<std::uint32_t> innermost_open;
#if GPUPROF_WITH_CUDA
  bool synchronized = false;  // one device synchronization covers every pending pair
#else
  bool synchronized = true;
#endif
  // Records are folded into the aggregates up to each thread's fold point
  // (read_records); later ones are read for this report only.
  const std::lock_guard<std::mutex> folding(fold_mutex_);
  const ReadContext context{recorder.tick_clock().converter(), std::move(spans.ticks),
                            recorder.nodes_snapshot(), warmup_.count() > 0};
  std::vector<detail::InstanceSnapshot>& instances = fold_batch_;
  instances.clear();
  std::vector<detail::InstanceSnapshot> pending;  // read, not folded
  recorder.for_each_thread([&](detail::ThreadState& thread) {
    innermost_open.push_back(thread.current.load(std::memory_order_relaxed));
    read_records(thread, context, instances, &pending, pending_left_out, synchronized);
  });
#if GPUPROF_WITH_CUDA
  // Keeps a replay unless it began in a warm-up span.
  const auto keep_unless_warmup = [&](const detail::InstanceSnapshot& snapshot) {
    if (in_warmup_ns.contains(snapshot.host_begin_ns)) ++left_out;
    else pending.push_back(snapshot);
  };
  // Replays of captured scopes: GPU time stamps, placed on the host clock
  // for the trace (host_ms of such an instance is its GPU span). The graph
  // timings keep them all until reset(), so they are read anew by every
  // report, never folded.
  const std::vector<detail::GraphSample> replays = recorder.graph_timings().samples();
  if (!replays.empty()) {
    const std::int64_t host_minus_gpu = recorder.graph_timings().host_minus_gpu_ns();
    for (std::size_t i = 0; i < replays.size(); ++i) {
      const detail::GraphSample& replay = replays[i];
      if (in_warmup_replays.contains(static_cast<std::int64_t>(i))) {
        ++left_out;
        continue;
      }
      detail::InstanceSnapshot snapshot;
      snapshot.id = replay.id;
      snapshot.node = replay.node;
      snapshot.thread = replay.thread;
      snapshot.host_begin_ns = replay.begin_gpu_ns + host_minus_gpu;
      snapshot.host_end_ns = replay.end_gpu_ns + host_minus_gpu;
      snapshot.gpu_ms = static_cast<double>(replay.end_gpu_ns - replay.begin_gpu_ns) / 1e6;
      pending.push_back(snapshot);
    }
  }
  // Replays of scopes captured under kernel capture: their intervals come
  // from the captured activities, already on the host clock.
  std::size_t captured_without_work = 0;
  const std::vector<detail::CapturedScope> captured = recorder.graph_timings().unstamped();
  if (!captured.empty()) {
    // The live source first: KernelCapture::stop() keeps its intervals before
    // it unregisters, so a stop() between these two reads loses nothing, and
    // where both hold a replay the live one (derived last) wins.
    std::vector<detail::GraphInterval> intervals;
    recorder.with_graph_interval_source(
        [&](detail::GraphIntervalSource& source) { intervals = source.graph_intervals(captured); });
    const std::vector<detail::GraphInterval> kept = recorder.graph_timings().kept_derived();
    if (!kept.empty()) detail::add_new_intervals(intervals, kept);
    std::unordered_map<std::uint64_t, const detail::CapturedScope*> scope_of;
    for (const detail::CapturedScope& scope : captured) scope_of.emplace(scope.id, &scope);
    for (const detail::GraphInterval& interval : intervals) {
      const auto scope = scope_of.find(interval.scope);
      if (scope == scope_of.end()) continue;  // not one of ours: nothing to place it in
      detail::InstanceSnapshot snapshot;
      snapshot.id = recorder.fresh_instance_id();
      snapshot.node = scope->second->node;
      snapshot.thread = scope->second->thread;
      snapshot.host_begin_ns = interval.begin_ns;
      snapshot.host_end_ns = interval.end_ns;
      snapshot.gpu_ms = ns_to_ms(interval.end_ns - interval.begin_ns);
      keep_unless_warmup(snapshot);
    }
    captured_without_work = detail::scopes_without_work(captured, intervals);
  }
#endif

  // Taken after the threads' innermost nodes were read, so it holds them.
  const std::vector<detail::GlobalNode> nodes = recorder.nodes_snapshot();
  std::vector<double> cold_ms;  // by global node
  warmup_folded_ += warmup_.leave_out(instances, nodes, cold_ms);
  for (const detail::InstanceSnapshot& instance : instances) folded_.add(instance);
  left_out += pending_left_out.warmup + warmup_folded_ + warmup_.leave_out(pending, nodes, cold_ms);

  Report report;
  report.timing_source = timing_source();
  report.device_name = recorder.device().name;
  report.timing_note = timing_note();
  report.environment = capture_environment();
  report.rank = rank_ ? *rank_ : rank_from_environment();
  report.warmup_instances_left_out = left_out;
  report.warmup_root_instances = static_cast<std::uint64_t>(warmup_.count());
  const std::uint64_t host_only =
      folded_.host_only() +
      static_cast<std::uint64_t>(std::count_if(
          pending.begin(), pending.end(), [](const detail::InstanceSnapshot& i) { return i.gpu_ms < 0; }));
  if (report.timing_source == TimingSource::cuda_events && host_only > 0) {
    report.timing_note = std::to_string(host_only) + " of " +
                         std::to_string(folded_.instances() + pending.size()) +
                         " scope instance(s) have host time only (recorded while GPU timing was off, "
                         "or their end event was lost)";
  }
  const std::uint64_t outside_steps = step_left_out_folded_ + pending_left_out.outside_active_steps;
  if (outside_steps > 0)
    report.timing_note += (report.timing_note.empty() ? "" : "; ") + std::to_string(outside_steps) +
                          " scope instance(s) began in steps outside the schedule's active steps and are "
                          "left out";
  // Event records and graph stamps that failed in a scope's destructor.
  const auto [lost, reason] = recorder.lost_gpu_time();
  if (lost > 0)
    report.timing_note += (report.timing_note.empty() ? "" : "; ") + std::to_string(lost) +
                          " scope(s) lost their GPU time: " + reason;
#if GPUPROF_WITH_CUDA
  const std::string lost_replays = graph_replays_lost_note();
  if (!lost_replays.empty()) report.timing_note += (report.timing_note.empty() ? "" : "; ") + lost_replays;
  if (captured_without_work > 0)
    report.timing_note +=
        (report.timing_note.empty() ? "" : "; ") + std::to_string(captured_without_work) +
        " scope instance(s) captured into a replayed CUDA graph ran no kernel, copy or memset: "
        "with kernel capture on, such a scope has no GPU time (none is made up)";
#endif
  detail::build_scope_tree(
      nodes, [&](std::uint32_t id) { return recorder.names().text(id); }, folded_, pending, report,
      detail::open_instance_counts(nodes, innermost_open), cold_ms);

  recorder.for_each_observer([&report](ScopeObserver& observer) { observer.contribute(report); });
  return report;
}

inline void Profiler::step() {
  const std::lock_guard<std::mutex> stepping(step_mutex_);
  ++step_;
  if (schedule_) begin_step(schedule_->action(step_));
}

inline void Profiler::set_schedule(const StepSchedule& schedule) {
  const StepSchedule checked =
      gpuprof::schedule(static_cast<long long>(schedule.wait), static_cast<long long>(schedule.warmup),
                        static_cast<long long>(schedule.active), static_cast<long long>(schedule.repeat),
                        static_cast<long long>(schedule.skip_first));
  const std::lock_guard<std::mutex> stepping(step_mutex_);
  schedule_ = checked;
  step_ = 0;
  begin_step(checked.action(0));
}

inline void Profiler::clear_schedule() {
  const std::lock_guard<std::mutex> stepping(step_mutex_);
  if (!schedule_) return;
  schedule_.reset();
  begin_step(StepAction::record);
}

inline std::optional<StepSchedule> Profiler::schedule() const {
  const std::lock_guard<std::mutex> stepping(step_mutex_);
  return schedule_;
}

inline std::uint64_t Profiler::step_number() const {
  const std::lock_guard<std::mutex> stepping(step_mutex_);
  return step_;
}

inline StepAction Profiler::step_action() const {
  const std::lock_guard<std::mutex> stepping(step_mutex_);
  return schedule_ ? schedule_->action(step_) : StepAction::record;
}

// Scopes opened from here on read the mode word with the new step's verdict;
// observers hear the action (kernel capture pauses or resumes). Under
// step_mutex_, so that steps from two threads take effect in their order.
inline void Profiler::begin_step(StepAction action) {
  detail::Recorder& recorder = detail::recorder();
  recorder.set_step_left_out(!is_active(action));
  recorder.for_each_observer([action](ScopeObserver& observer) { observer.on_step(action); });
}

#if GPUPROF_WITH_CUDA
// The GPU time of a pair that report() found published and still pending.
// The first such pair synchronizes the device, which completes every pair
// published before it. Scopes on other threads keep closing while report()
// walks the threads' logs, so a later pair may have been recorded after that
// synchronization and still be in flight: reading it at once would fail with
// cudaErrorNotReady (thrown, it ended a monitoring thread with
// std::terminate). Such a pair is waited for alone, on its end event (its
// begin event precedes it on the same stream).
inline float Profiler::read_pending_pair(const EventPair& pair, bool& synchronized) {
  if (!synchronized) GPUPROF_CUDA_CHECK(cudaDeviceSynchronize());
  synchronized = true;
  if (!pair.completed()) GPUPROF_CUDA_CHECK(cudaEventSynchronize(pair.end));
  return pair.elapsed_ms();
}

inline std::string Profiler::graph_replays_lost_note() const {
  const auto losses = detail::recorder().graph_timings().losses();
  std::string note;
  if (losses.overwritten > 0)
    note = std::to_string(losses.overwritten) + " timing(s) of CUDA graph replays lost: overwritten before " +
           "they were read (more than " + std::to_string(detail::graph_replay_ring) +
           " replays between two reads; launch through gpuprof::launch_graph or call report() more often)";
  if (losses.overlapped > 0)
    note += std::string(note.empty() ? "" : "; ") + std::to_string(losses.overlapped) +
            " timing(s) of CUDA graph replays dropped: one graph ran concurrently with itself " +
            "(several instantiations launched at once); such replays cannot be timed";
  if (losses.too_long > 0)
    note += std::string(note.empty() ? "" : "; ") + std::to_string(losses.too_long) +
            " timing(s) of CUDA graph replays dropped: a captured scope lasted longer than 18 minutes";
  return note;
}
#endif

inline void Profiler::reset() {
  const std::lock_guard<std::mutex> folding(fold_mutex_);
  folded_.clear();
  warmup_folded_ = 0;
  step_left_out_folded_ = 0;
  detail::recorder().for_each_observer([](ScopeObserver& observer) { observer.on_reset(); });
  detail::recorder().for_each_thread([](detail::ThreadState& thread) {
    const detail::ReadingGuard guard(thread.records);
    thread.discard_before.store(thread.records.published(), std::memory_order_relaxed);
    thread.exit_work.fetch_or(detail::exit_reclaim, std::memory_order_release);
  });
  detail::recorder().forget_left_out();
  warmup_.forget_instances();
#if GPUPROF_WITH_CUDA
  detail::recorder().graph_timings().reset();
#endif
}

GPUPROF_NAMESPACE_END
