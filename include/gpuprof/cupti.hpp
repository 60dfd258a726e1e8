// gpuprof/cupti.hpp: kernel capture. Every kernel, copy and memset the
// process runs, with its GPU start/end on gpuprof's host clock, attributed to
// the innermost gpuprof scope that launched it. Needs the gpuprof::cupti CMake
// target (links CUPTI, defines GPUPROF_WITH_CUPTI=1).
//
// ```cpp
// #include <gpuprof/cupti.hpp>
// #include <gpuprof/report/kernel_summary_writers.hpp>
// void profile(cudaStream_t stream, void (*forward)(cudaStream_t)) {
//   gpuprof::KernelCapture capture;  // subscribe, enable, observe scopes
//   {
//     GPUPROF_SCOPE("forward", stream);
//     forward(stream);
//   }
//   auto report = gpuprof::profiler().report();  // report.kernels filled by capture
//   gpuprof::write(gpuprof::kern_sum(report, "forward"), "forward.csv");
// }
// ```
//
// Its parts (detail/kernel_capture_*.hpp), how they join records to scopes
// and time captured graphs: docs/internals.md#how-kernel-capture-works-cuptihpp
//
// When CUPTI cannot start (no device or driver, another CUPTI client such as
// Nsight Systems attached), capture is off: stderr says why once, active() is
// false, why_inactive() has the reason, and scopes keep their CUDA events.
//
// One KernelCapture at a time per process (CUPTI has one subscriber). Records
// CUPTI could not store are counted in dropped(), never silently lost.
#pragma once
#if !GPUPROF_WITH_CUPTI
#error "gpuprof/cupti.hpp needs the gpuprof::cupti CMake target (GPUPROF_WITH_CUPTI=1)"
#endif
#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstdint>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "allocation_record.hpp"
#include "config.hpp"
#include "diagnostics.hpp"
#include "detail/graph_intervals.hpp"
#include "detail/kernel_capture_activity.hpp"
#include "detail/kernel_capture_graph_split.hpp"
#include "detail/kernel_capture_join.hpp"
#include "detail/kernel_capture_report.hpp"
#include "detail/recorder.hpp"
#include "error.hpp"
#include "kernel_capture_options.hpp"
#include "kernel_record.hpp"
#include "profiler.hpp"
#include "report_model.hpp"

GPUPROF_NAMESPACE_BEGIN

class KernelCapture final : public ScopeObserver, private detail::GraphIntervalSource {
 public:
  explicit KernelCapture(KernelCaptureOptions options = {}) : options_(std::move(options)) {
    options_.buffer_bytes = (std::max<std::size_t>(options_.buffer_bytes, 1024) + 7) / 8 * 8;
    const std::string failure = open_session();
    if (!failure.empty()) {
      why_inactive_ = failure;
      // Says how scopes time now, as the recorder's own notice does: without
      // a device that is the host clock, never CUDA events.
      diagnose(Severity::note, "kernel capture is off: " + failure + "; scopes " +
                                   (detail::recorder().gpu_timing() ? "still time with CUDA events"
                                                                    : "time with the host clock"));
      return;
    }
    if (!options_.start) return;
    try {
      start();
    } catch (...) {
      // No destructor runs for a half-built object: undo the registrations
      // (CUPTI's current capture, the profiler observer) before they dangle.
      close_session();
      throw;
    }
  }

  ~KernelCapture() override {
    if (!active()) return;
    try {
      flush();
    } catch (const std::exception& error) {
      diagnose(Severity::note, std::string("kernel capture could not flush at exit: ") + error.what());
    }
    close_session();
    activity_.diagnose_problems();
    if (const std::uint64_t lost = join_.lost_graph_nodes())
      diagnose(Severity::note,
               "kernel capture: no memory to record the capture scope of " + std::to_string(lost) +
                   " graph node(s); their work was charged to the scope around the graph launch");
  }

  KernelCapture(const KernelCapture&) = delete;
  KernelCapture& operator=(const KernelCapture&) = delete;

  bool active() const { return why_inactive_.empty(); }
  const std::string& why_inactive() const { return why_inactive_; }
  // Started, and not paused by Profiler::step()'s schedule.
  bool capturing() const { return capturing_ && !paused_by_schedule_; }
  // Whether launches are tied to scopes by callbacks (options.launch_callbacks,
  // and this CUPTI names its launching functions) rather than activity records.
  bool uses_launch_callbacks() const { return activity_.uses_launch_callbacks(); }

  // Enables the activity kinds. Throws gpuprof::Error if CUPTI refuses.
  void start() {
    if (!active() || capturing_) return;
    if (!paused_by_schedule_) activity_.switch_recording(true);
    capturing_ = true;
    detail::recorder().set_graph_interval_source(this);
  }
  // Disables them; what ran before stays and is delivered by flush(). It also
  // ends the derived timing of graph scopes: the replays of scopes captured
  // without stamps that ran so far are timed now (after waiting for the
  // device, if any such scope exists) and left with the recorder, so reports
  // taken later still have them (until Profiler::reset()); replays launched
  // after stop() are not timed (no records). Waiting for the device is not
  // allowed while another thread captures a stream in global mode: stop the
  // capture outside stream captures. Throws gpuprof::Error if CUPTI or CUDA
  // fails; the capture is stopped either way.
  void stop() {
    if (!active() || !capturing_) return;
    std::string keep_failure;
    try {
      keep_graph_intervals();
    } catch (const std::exception& error) {
      keep_failure = error.what();
    }
    // Scopes captured from now on get stamps: no records would time them.
    detail::recorder().set_graph_interval_source(nullptr);
    capturing_ = false;
    if (!paused_by_schedule_) activity_.switch_recording(false);
    if (!keep_failure.empty())
      throw Error("gpuprof: kernel capture stopped without timing the graph replays it saw: " + keep_failure);
  }

  // Waits for the current device's work, then has CUPTI hand over every buffer.
  void flush() {
    if (!active()) return;
    activity_.flush();
  }

  // Every kernel, copy and memset captured and not yet folded into the
  // report's aggregates (see set_window()) (flushes first), attributed
  // to the scope instance around its launch, in delivery order. Graph work is
  // charged to the scope node it was captured in only in a report (nodes are
  // the report's): here it keeps that fallback (and its graph_node_id).
  std::vector<KernelRecord> records() { return joined_records({}); }
  // Device allocations and releases (options.allocations), flushed first.
  std::vector<AllocationRecord> allocations() {
    flush();
    return activity_.allocations();
  }
  // Records CUPTI dropped for lack of buffer space, plus records delivered
  // without timestamps (CUPTI lacked device memory to time them), plus
  // launches whose scope a launch callback had no memory to note.
  std::uint64_t dropped() {
    if (active()) activity_.count_dropped();
    return activity_.dropped();
  }
  // Forgets everything captured so far (e.g. after warm-up). Which scope each
  // graph node was captured in is kept: graphs are replayed after warm-up.
  // Graph replays an earlier stop() left with the recorder stay until
  // Profiler::reset(), which also calls this.
  void clear() {
    flush();
    const std::lock_guard<std::mutex> lock(detail::KernelCaptureActivity::buffer_mutex());
    join_.clear();
    report_.clear();
    activity_.clear_locked();
  }

  // --- ScopeObserver: scope ids become external correlation ids ----------------
  void on_scope_begin(std::uint64_t instance_id) override {
    if (!active() || uses_launch_callbacks()) return;
    activity_.push_scope(instance_id);
  }
  void on_scope_end(std::uint64_t instance_id) override {
    if (!active() || uses_launch_callbacks()) return;
    activity_.pop_scope(instance_id);
  }
  void on_reset() override { clear(); }

  // Records kept raw for the traces and per-record views: the newest n
  // (default 20,000, as the scope trace window); 0 keeps every one. Older
  // records are folded into per (scope, kernel) aggregates at each report
  // (Report::kernel_aggregates), which the kernel summaries read. At start
  // GPUPROF_FULL_TRACE=1 sets 0 and GPUPROF_TRACE_WINDOW=n sets n.
  void set_window(std::size_t records) {
    const std::lock_guard<std::mutex> lock(detail::KernelCaptureActivity::buffer_mutex());
    report_.set_window(records);
  }
  std::size_t window() {
    const std::lock_guard<std::mutex> lock(detail::KernelCaptureActivity::buffer_mutex());
    return report_.window();
  }
  // Profiler::step()'s schedule: records in its active steps only. It pauses
  // CUPTI's recording and leaves the rest as it is: stop() swaps the
  // recorder's graph-interval source, which waits for observer calls such as
  // this one to end. Graph replays in paused steps go untimed, as their
  // steps' scopes leave the report. CUPTI's errors end step().
  void on_step(StepAction action) override {
    const bool pause = !is_active(action);
    if (pause == paused_by_schedule_) return;
    paused_by_schedule_ = pause;
    if (active() && capturing_) activity_.switch_recording(!pause);
  }

  // Graph work whose capture-time scope node is not in `report` (none of its
  // replays was read since the last reset) is charged to the scope around
  // its launch instead.
  void contribute(Report& report) override {
    if (!active()) return;
    std::vector<KernelRecord> joined = joined_records(detail::report_nodes_by_scope_node(report));
    const std::lock_guard<std::mutex> lock(detail::KernelCaptureActivity::buffer_mutex());
    report_.add_to(report, std::move(joined), join_, activity_.dropped_locked());
  }

 private:
  // --- detail::GraphIntervalSource: replays of scopes captured without stamps.
  // Private: only the recorder calls it, through its base.
  std::vector<detail::GraphInterval> graph_intervals(
      const std::vector<detail::CapturedScope>& scopes) override {
    flush();
    const std::lock_guard<std::mutex> lock(detail::KernelCaptureActivity::buffer_mutex());
    return join_.graph_intervals(scopes);
  }

  // The replays derived so far, left with the recorder (see stop()).
  void keep_graph_intervals() {
    detail::Recorder& recorder = detail::recorder();
    const std::vector<detail::CapturedScope> captured = recorder.graph_timings().unstamped();
    if (!captured.empty()) recorder.graph_timings().keep_derived(graph_intervals(captured));
  }

  // A scope captured into a graph closed: maybe split the graph there
  // (detail/kernel_capture_graph_split.hpp). Only at closes of scopes timed
  // on the GPU and only while capturing (the recorder calls its
  // GraphIntervalSource); graphs captured without kernel capture are left
  // as they are.
  void captured_scope_closed(Stream stream) noexcept override {
    if (options_.graph_piece_nodes == 0) return;
    // A CUDA error the caller has not collected yet stays theirs to find.
    if (cudaPeekAtLastError() != cudaSuccess) return;
    try {
      if (const char* failed_call = graph_split_.split_if_due(stream, options_.graph_piece_nodes)) {
        static_cast<void>(cudaGetLastError());  // ours, and no error of the caller's was pending
        activity_.note(std::string("could not split a captured graph (") + failed_call +
                       " failed); its launches cost more under capture");
      }
    } catch (const std::exception& error) {  // the split event could not be made
      static_cast<void>(cudaGetLastError());
      try {
        activity_.note(std::string("could not split a captured graph: ") + error.what());
      } catch (...) {
      }
    }
  }

  // Subscribes and registers callbacks, then observes scopes; or says why not.
  std::string open_session() {
    std::string failure = activity_.open();
    if (failure.empty()) profiler().add_observer(this);
    return failure;
  }

  void close_session() {
    profiler().remove_observer(this);
    try {
      stop();
    } catch (const std::exception& error) {
      activity_.note(error.what());
    }
    activity_.close();
  }

  // Flushes, then joins every record to its scope (detail/cupti_join.hpp).
  std::vector<KernelRecord> joined_records(const std::vector<int>& report_node_of_scope) {
    flush();
    const std::lock_guard<std::mutex> lock(detail::KernelCaptureActivity::buffer_mutex());
    activity_.add_dropped_locked(join_.take_launches());
    return join_.joined(report_node_of_scope);
  }

  KernelCaptureOptions options_;
  std::string why_inactive_;
  bool capturing_ = false;           // between start() and stop()
  bool paused_by_schedule_ = false;  // in a step the schedule does not record
  // The parts (declared in this order: the activity side reads the options
  // and fills the join).
  detail::KernelCaptureJoin join_;
  detail::KernelCaptureActivity activity_{options_, join_};
  detail::KernelCaptureReport report_;
  detail::KernelCaptureGraphSplit graph_split_;
};

GPUPROF_NAMESPACE_END
