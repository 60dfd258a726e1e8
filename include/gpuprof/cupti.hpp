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
// How the CUPTI records are joined to scopes, graphs included, and how
// captured scopes in graphs are timed: docs/internals.md#how-kernel-capture-works-cuptihpp
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
#include <cupti.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <cstdio>
#include <mutex>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "allocation_record.hpp"
#include "clock.hpp"
#include "config.hpp"
#include "diagnostics.hpp"
#include "detail/cupti_check.hpp"
#include "detail/cupti_join.hpp"
#include "detail/cupti_launch_apis.hpp"
#include "detail/cupti_records.hpp"
#include "detail/kernel_aggregates.hpp"
#include "detail/recorder.hpp"
#include "detail/thread_ops.hpp"
#include "error.hpp"
#include "kernel_names.hpp"
#include "kernel_record.hpp"
#include "profiler.hpp"
#include "report_model.hpp"

GPUPROF_NAMESPACE_BEGIN

struct KernelCaptureOptions {
  bool copies = true;  // MEMCPY and MEMSET records, category "memory"
  // DRIVER activity as well as RUNTIME: kernels that libraries launch through
  // the driver API (cuLaunchKernelEx) still find their scope. Costs one more
  // record per API call.
  bool driver_api = true;
  // Ties each launch to its scope in a CUPTI callback on the functions that
  // launch work (detail/cupti_launch_apis.hpp): the innermost scope open on
  // the launching thread and the call's start, read as the call enters. No
  // RUNTIME, DRIVER or EXTERNAL_CORRELATION records then: with those, CUPTI
  // handles every runtime and driver call, and eager PyTorch makes several
  // per kernel (cudaGetDevice, cudaGetLastError, ...), which made its small
  // model's train step about twice as slow on the H200; with the callbacks it
  // took +19 % instead of +47 %, every kernel still in its scope
  // (docs/kernel-capture.md). A CUPTI that refuses the callbacks gets the records.
  bool launch_callbacks = true;
  bool allocations = false;  // MEMORY2 records, for MemoryWatch (memory.hpp)
  // Size of each activity buffer handed to CUPTI. Bigger buffers mean fewer
  // hand-overs; records that find no buffer are dropped (and counted).
  std::size_t buffer_bytes = std::size_t{8} << 20;
  bool start = true;  // capture from construction (else call start())
  // Scopes captured into a graph while capturing add an event-record node at
  // their close once this many nodes were captured since the last one (0:
  // never), so that CUPTI's work at each launch overlaps the graph's
  // execution instead of preceding it (see captured_scope_closed()). Set 0
  // for graphs instantiated for device launch, which take no event nodes.
  std::size_t graph_piece_nodes = 16;
  CategoryRules categories = CategoryRules::defaults();
};

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
    if (!problems_.empty())
      diagnose(Severity::note,
               "kernel capture: " + std::to_string(problems_count_) + " problem(s), first: " + problems_);
    if (const std::uint64_t lost = lost_graph_nodes_.load())
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
  bool uses_launch_callbacks() const { return !launch_callback_ids_.empty(); }

  // Enables the activity kinds. Throws gpuprof::Error if CUPTI refuses.
  void start() {
    if (!active() || capturing_) return;
    if (!paused_by_schedule_) switch_recording(true);
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
    if (!paused_by_schedule_) switch_recording(false);
    if (!keep_failure.empty())
      throw Error("gpuprof: kernel capture stopped without timing the graph replays it saw: " + keep_failure);
  }

  // Waits for the current device's work, then has CUPTI hand over every buffer.
  void flush() {
    if (!active()) return;
    GPUPROF_CUDA_CHECK(cudaDeviceSynchronize());
    GPUPROF_CUPTI_CHECK(cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED));
    count_dropped();
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
    const std::lock_guard<std::mutex> lock(shared().mutex);
    return allocations_;
  }
  // Records CUPTI dropped for lack of buffer space, plus records delivered
  // without timestamps (CUPTI lacked device memory to time them), plus
  // launches whose scope a launch callback had no memory to note.
  std::uint64_t dropped() {
    if (active()) count_dropped();
    const std::lock_guard<std::mutex> lock(shared().mutex);
    return dropped_;
  }
  // Forgets everything captured so far (e.g. after warm-up). Which scope each
  // graph node was captured in is kept: graphs are replayed after warm-up.
  // Graph replays an earlier stop() left with the recorder stay until
  // Profiler::reset(), which also calls this.
  void clear() {
    flush();
    const std::lock_guard<std::mutex> lock(shared().mutex);
    records_.clear();
    kernel_aggregates_.clear();
    folded_graph_records_.clear();
    allocations_.clear();
    correlations_.clear();
    dropped_ = 0;
    const std::lock_guard<std::mutex> launches_lock(launches_mutex_);
    launches_.clear();
  }

  // --- ScopeObserver: scope ids become external correlation ids ----------------
  void on_scope_begin(std::uint64_t instance_id) override {
    if (!active() || uses_launch_callbacks()) return;
    note(GPUPROF_CUPTI_FAILURE(
        cuptiActivityPushExternalCorrelationId(CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0, instance_id)));
  }
  void on_scope_end(std::uint64_t instance_id) override {
    if (!active() || uses_launch_callbacks()) return;
    std::uint64_t popped = 0;
    note(GPUPROF_CUPTI_FAILURE(
        cuptiActivityPopExternalCorrelationId(CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0, &popped)));
    if (popped != instance_id)
      note("external correlation stack out of order: popped " + std::to_string(popped) + " for scope " +
           std::to_string(instance_id));
  }
  void on_reset() override { clear(); }

  // Records kept raw for the traces and per-record views: the newest n
  // (default 20,000, as the scope trace window); 0 keeps every one. Older
  // records are folded into per (scope, kernel) aggregates at each report
  // (Report::kernel_aggregates), which the kernel summaries read. At start
  // GPUPROF_FULL_TRACE=1 sets 0 and GPUPROF_TRACE_WINDOW=n sets n.
  void set_window(std::size_t records) {
    const std::lock_guard<std::mutex> lock(shared().mutex);
    kernel_aggregates_.set_window(records);
  }
  std::size_t window() {
    const std::lock_guard<std::mutex> lock(shared().mutex);
    return kernel_aggregates_.window();
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
    if (active() && capturing_) switch_recording(!pause);
  }

  // Graph work whose capture-time scope node is not in `report` (none of its
  // replays was read since the last reset) is charged to the scope around
  // its launch instead.
  void contribute(Report& report) override {
    if (!active()) return;
    std::vector<KernelRecord> joined = joined_records(report_nodes_by_scope_node(report));
    const std::lock_guard<std::mutex> lock(shared().mutex);
    // A clear() on another thread since the join leaves nothing to drop.
    const std::size_t folded =
        std::min(kernel_aggregates_.contribute(report, std::move(joined)), records_.size());
    forget_folded(folded);
    report.dropped_kernel_records = dropped_;
  }

 private:
  // --- detail::GraphIntervalSource: replays of scopes captured without stamps.
  // Private: only the recorder calls it, through its base.
  std::vector<detail::GraphInterval> graph_intervals(
      const std::vector<detail::CapturedScope>& scopes) override {
    flush();
    const std::lock_guard<std::mutex> lock(shared().mutex);
    const std::lock_guard<std::mutex> nodes_lock(graph_nodes_mutex_);
    if (folded_graph_records_.empty()) return detail::graph_scope_intervals(records_, graph_nodes_, scopes);
    std::vector<KernelRecord> graph_work = folded_graph_records_;
    graph_work.insert(graph_work.end(), records_.begin(), records_.end());
    return detail::graph_scope_intervals(graph_work, graph_nodes_, scopes);
  }

  // CUPTI's buffer callbacks carry no user pointer: they find the one live
  // capture here, under a mutex that also guards its record vectors. The
  // buffer size is read without it: CUPTI may ask for a buffer on a launching
  // thread while another buffer is being read.
  struct Shared {
    std::mutex mutex;
    KernelCapture* capture = nullptr;
    std::atomic<std::size_t> buffer_bytes{KernelCaptureOptions{}.buffer_bytes};
  };
  static Shared& shared() {
    static Shared state;
    return state;
  }

  // The replays derived so far, left with the recorder (see stop()).
  void keep_graph_intervals() {
    detail::Recorder& recorder = detail::recorder();
    const std::vector<detail::CapturedScope> captured = recorder.graph_timings().unstamped();
    if (!captured.empty()) recorder.graph_timings().keep_derived(graph_intervals(captured));
  }

  static std::uint64_t CUPTIAPI host_clock() { return static_cast<std::uint64_t>(host_now_ns()); }

  // Global scope node id -> index into report.nodes, through the paths.
  static std::vector<int> report_nodes_by_scope_node(const Report& report) {
    detail::Recorder& recorder = detail::recorder();
    const std::vector<detail::GlobalNode> nodes = recorder.nodes_snapshot();
    std::vector<std::string> global_paths(nodes.size());
    // A parent's id is below its children's (it existed first).
    for (std::size_t node = 1; node < nodes.size(); ++node) {
      const std::uint32_t parent = nodes[node].parent;
      const std::string name = recorder.names().text(nodes[node].name);
      global_paths[node] = parent == detail::root_node ? name : global_paths[parent] + "/" + name;
    }
    std::vector<std::string> report_paths;
    report_paths.reserve(report.nodes.size());
    for (const ScopeNode& node : report.nodes) report_paths.push_back(node.path);
    return detail::report_nodes_by_path(global_paths, report_paths);
  }

  // CUPTI's work at a graph launch, on the launching thread, grows with the
  // graph's nodes (about 1 to 1.5 us per node on the H100), and when the
  // graph is one chain of kernel nodes the GPU starts on none of it before
  // all of it is done: a step launched, then waited for, pays it whole
  // (+10 to +27 % on the small Transformer's train step, 338 kernels). A
  // node of another kind makes the driver submit the graph in pieces, and
  // the GPU runs the first while CUPTI handles the rest (+2 to +4 %;
  // docs/experiments/2026-11-26-capture-overhead-long-graphs.md). So once
  // graph_piece_nodes nodes were captured since the last split, the next
  // captured scope to close adds one: an event record that nothing waits
  // for, put *before* the stream's last node (between that node and its
  // predecessors), so it is never a loose end of the capture (a side stream
  // already joined back stays joined) and the stream's own dependencies do
  // not change. Only at closes of scopes timed on the GPU, only while
  // capturing, and only where the stream's capture ends in one node reached
  // by plain edges; graphs captured without kernel capture are left as they
  // are. The split points follow the graph's node count, so capturing the
  // same code again on one thread gives the same topology, as
  // cudaGraphExecUpdate needs.
  void captured_scope_closed(Stream stream) noexcept override {
    if (options_.graph_piece_nodes == 0) return;
    // A CUDA error the caller has not collected yet stays theirs to find.
    if (cudaPeekAtLastError() != cudaSuccess) return;
    try {
      if (const char* failed_call = split_if_due(stream)) {
        static_cast<void>(cudaGetLastError());  // ours, and no error of the caller's was pending
        note(std::string("could not split a captured graph (") + failed_call +
             " failed); its launches cost more under capture");
      }
    } catch (const std::exception& error) {  // the split event could not be made
      static_cast<void>(cudaGetLastError());
      try {
        note(std::string("could not split a captured graph: ") + error.what());
      } catch (...) {
      }
    }
  }

  // The split itself; returns the CUDA call that failed, or nullptr.
  const char* split_if_due(Stream stream) {
    cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
    unsigned long long capture_id = 0;
    cudaGraph_t graph = nullptr;
    const cudaGraphNode_t* frontier = nullptr;
    std::size_t frontier_size = 0;
    if (cudaStreamGetCaptureInfo(stream, &status, &capture_id, &graph, &frontier, nullptr, &frontier_size) !=
        cudaSuccess)
      return "cudaStreamGetCaptureInfo";
    if (status != cudaStreamCaptureStatusActive || frontier_size != 1) return nullptr;
    std::size_t nodes = 0;
    if (cudaGraphGetNodes(graph, nullptr, &nodes) != cudaSuccess) return "cudaGraphGetNodes";
    {
      const std::lock_guard<std::mutex> lock(split_mutex_);
      if (nodes < split_point(capture_id) + options_.graph_piece_nodes)
        return nullptr;  // most closes end here
    }
    const cudaGraphNode_t last = frontier[0];
    std::size_t before_count = 0;
    if (cudaGraphNodeGetDependencies(last, nullptr, nullptr, &before_count) != cudaSuccess)
      return "cudaGraphNodeGetDependencies";
    std::vector<cudaGraphNode_t> before(before_count);
    std::vector<cudaGraphEdgeData> edges(before_count);
    if (before_count > 0 &&
        cudaGraphNodeGetDependencies(last, before.data(), edges.data(), &before_count) != cudaSuccess)
      return "cudaGraphNodeGetDependencies";
    for (const cudaGraphEdgeData& edge : edges)  // a programmatic edge keeps its overlap
      if (edge.type != cudaGraphDependencyTypeDefault || edge.from_port != 0 || edge.to_port != 0)
        return nullptr;
    {
      const std::lock_guard<std::mutex> lock(split_mutex_);
      split_point(capture_id) = nodes + 1;  // the split node itself
    }
    // The current device: work captured from this thread goes to it
    // (cudaStreamGetDevice would end the capture: it may not run inside one).
    int device = 0;
    if (cudaGetDevice(&device) != cudaSuccess) return "cudaGetDevice";
    cudaGraphNode_t split = nullptr;
    if (cudaGraphAddEventRecordNode(&split, graph, before.data(), before.size(), split_event(device)) !=
        cudaSuccess)
      return "cudaGraphAddEventRecordNode";
    if (cudaGraphAddDependencies(graph, &split, &last, nullptr, 1) != cudaSuccess)
      return "cudaGraphAddDependencies";
    return nullptr;
  }

  // The node count at the last split of a capture, for the most recent
  // captures (a process may capture any number of graphs; a few are open at once).
  std::size_t& split_point(unsigned long long capture_id) {
    for (auto& [id, nodes] : split_points_)
      if (id == capture_id) return nodes;
    if (split_points_.size() == max_split_captures) split_points_.erase(split_points_.begin());
    split_points_.emplace_back(capture_id, 0);
    return split_points_.back().second;
  }

  // One event per device, created on first use and never destroyed (nor is
  // the map, as the recorder is not): graphs holding a node that records it
  // may outlive this capture, and scopes may close during static
  // destruction. (After cudaDeviceReset the handle is stale; so are the
  // graphs that hold it.) Throws gpuprof::Error if CUDA refuses.
  static cudaEvent_t split_event(int device) {
    static auto* const mutex = new std::mutex;
    static auto* const events = new std::unordered_map<int, cudaEvent_t>;
    const std::lock_guard<std::mutex> lock(*mutex);
    cudaEvent_t& event = (*events)[device];
    if (!event) {  // `device` is the current one
      cudaEvent_t created = nullptr;
      GPUPROF_CUDA_CHECK(cudaEventCreateWithFlags(&created, cudaEventDisableTiming));
      event = created;
    }
    return event;
  }

  // CUPTI's resource callbacks for graph nodes, on the thread that creates
  // (captures) or clones (instantiates) them: a created node belongs to the
  // recorder's innermost open scope node of that thread; `self` is the subscribing
  // capture. Takes only graph_nodes_mutex_, never the buffer mutex, so node
  // creation does not wait for a buffer being read. Must not throw into CUPTI.
  static void CUPTIAPI graph_node_callback(void* self, CUpti_CallbackDomain domain, CUpti_CallbackId id,
                                           const void* data) {
    if (domain == CUPTI_CB_DOMAIN_RUNTIME_API || domain == CUPTI_CB_DOMAIN_DRIVER_API)
      return static_cast<KernelCapture*>(self)->launch_entered(*static_cast<const CUpti_CallbackData*>(data));
    if (domain != CUPTI_CB_DOMAIN_RESOURCE) return;
    const bool cloned = id == CUPTI_CBID_RESOURCE_GRAPHNODE_CLONED;
    if (!cloned && id != CUPTI_CBID_RESOURCE_GRAPHNODE_CREATED) return;
    auto& capture = *static_cast<KernelCapture*>(self);
    const auto* resource = static_cast<const CUpti_ResourceData*>(data);
    const auto& graph = *static_cast<const CUpti_GraphData*>(resource->resourceDescriptor);
    std::uint64_t node_id = 0, original_id = 0;
    CUptiResult status = cuptiGetGraphNodeId(graph.node, &node_id);
    if (status == CUPTI_SUCCESS && cloned) status = cuptiGetGraphNodeId(graph.originalNode, &original_id);
    try {
      if (status != CUPTI_SUCCESS) {  // the node's work falls back to the scope around its launch
        capture.note(detail::cupti_failure(status, "cuptiGetGraphNodeId", __FILE__, __LINE__));
        return;
      }
      const std::uint32_t scope_node = cloned ? 0 : detail::innermost_scope_node();
      const std::uint64_t scope_instance = cloned ? 0 : detail::innermost_scope_instance();
      const std::lock_guard<std::mutex> lock(capture.graph_nodes_mutex_);
      if (cloned) capture.graph_nodes_.add_clone(node_id, original_id);
      else capture.graph_nodes_.add_created(node_id, scope_node, scope_instance);
    } catch (...) {  // out of memory: this node falls back likewise
      capture.lost_graph_nodes_.fetch_add(1, std::memory_order_relaxed);
    }
  }

  // A launching call entered (launch callbacks, on the launching thread): its
  // correlation id, which the work it launches repeats, the innermost scope
  // open on this thread and the call's start. A runtime call and the driver
  // call inside it share the id (the join keeps the earlier start). Takes only
  // launches_mutex_, so a launch never waits for a buffer being read.
  void launch_entered(const CUpti_CallbackData& call) noexcept {
    if (call.callbackSite != CUPTI_API_ENTER) return;
    const Launch launch{call.correlationId, detail::innermost_scope_instance(), host_now_ns()};
    try {
      const std::lock_guard<std::mutex> lock(launches_mutex_);
      launches_.push_back(launch);
    } catch (...) {  // no memory: that launch's work finds no scope
      lost_launches_.fetch_add(1, std::memory_order_relaxed);
    }
  }

  static void CUPTIAPI buffer_requested(std::uint8_t** buffer, std::size_t* size, std::size_t* max_records) {
    const std::size_t bytes = shared().buffer_bytes.load(std::memory_order_relaxed);
    // Zeroed (fresh pages from calloc cost nothing to zero) so that CUPTI,
    // told so in open_session(), does not zero it on the launching thread.
    // calloc's alignment covers CUPTI's 8 bytes; a null buffer makes CUPTI
    // drop (and count) records.
    *buffer = static_cast<std::uint8_t*>(std::calloc(1, bytes));
    *size = *buffer ? bytes : 0;
    *max_records = 0;
  }

  static void CUPTIAPI buffer_completed(CUcontext, std::uint32_t, std::uint8_t* buffer, std::size_t,
                                        std::size_t valid_bytes) {
    {
      const std::lock_guard<std::mutex> lock(shared().mutex);
      // An exception must not unwind through CUPTI's C frames: a buffer we
      // cannot take in counts as dropped, and the reason is kept.
      if (KernelCapture* capture = shared().capture) {
        try {
          capture->consume(buffer, valid_bytes);
        } catch (const std::exception& error) {
          lost_buffer(*capture, error.what());
        } catch (...) {
          lost_buffer(*capture, "unknown exception");
        }
      }
    }
    std::free(buffer);
  }

  // Caller holds shared().mutex. Noting the reason may itself fail to
  // allocate; the count still says records were lost.
  static void lost_buffer(KernelCapture& capture, const char* why) noexcept {
    ++capture.dropped_;
    try {
      capture.note_locked(std::string("a completed buffer was lost: ") + why);
    } catch (...) {
    }
  }

  std::vector<CUpti_ActivityKind> activity_kinds() const {
    std::vector<CUpti_ActivityKind> kinds = {CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL};
    if (!uses_launch_callbacks()) {
      kinds.push_back(CUPTI_ACTIVITY_KIND_RUNTIME);
      kinds.push_back(CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION);
      if (options_.driver_api) kinds.push_back(CUPTI_ACTIVITY_KIND_DRIVER);
    }
    if (options_.copies) {
      kinds.push_back(CUPTI_ACTIVITY_KIND_MEMCPY);
      kinds.push_back(CUPTI_ACTIVITY_KIND_MEMSET);
    }
    if (options_.allocations) kinds.push_back(CUPTI_ACTIVITY_KIND_MEMORY2);
    return kinds;
  }

  // The launching functions of this CUPTI (runtime, and driver with
  // options.driver_api), by its names for the callback ids. Ids past the
  // headers' count are tried too: a newer CUPTI of the same major version
  // may know more functions.
  std::vector<std::pair<CUpti_CallbackDomain, CUpti_CallbackId>> find_launch_functions() const {
    std::vector<std::pair<CUpti_CallbackDomain, CUpti_CallbackId>> found;
    const auto add = [&](CUpti_CallbackDomain domain, std::uint32_t known_ids) {
      for (CUpti_CallbackId id = 1; id < 2 * known_ids; ++id) {
        const char* name = nullptr;
        if (cuptiGetCallbackName(domain, id, &name) == CUPTI_SUCCESS && name &&
            detail::api_launches_work(name))
          found.emplace_back(domain, id);
      }
    };
    add(CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_SIZE);
    if (options_.driver_api) add(CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_SIZE);
    return found;
  }

  // CUPTI's activity kinds and launch callbacks, on or off together.
  void switch_recording(bool on) {
    for (const CUpti_ActivityKind kind : activity_kinds())
      GPUPROF_CUPTI_CHECK(on ? cuptiActivityEnable(kind) : cuptiActivityDisable(kind));
    GPUPROF_CUPTI_CHECK(enable_launch_callbacks(on ? 1 : 0));
  }
  // Switches the launch callbacks on (1) or off (0); none without them.
  CUptiResult enable_launch_callbacks(std::uint32_t enable) const {
    for (const auto& [domain, id] : launch_callback_ids_) {
      const CUptiResult status = cuptiEnableCallback(enable, subscriber_, domain, id);
      if (status != CUPTI_SUCCESS) return status;
    }
    return CUPTI_SUCCESS;
  }

  // Subscribes and registers callbacks, or says why not (undoing what it did).
  std::string open_session() {
    {
      const std::lock_guard<std::mutex> lock(shared().mutex);
      if (shared().capture) return "another gpuprof::KernelCapture is already active";
    }
    int devices = 0;
    const cudaError_t device_status = cudaGetDeviceCount(&devices);
    if (device_status != cudaSuccess) {
      // Clear the runtime's sticky last error so the user's next
      // cudaGetLastError() does not report our probe (as detail/device_probe.hpp does).
      static_cast<void>(cudaGetLastError());
      return std::string("no usable CUDA device (") + cudaGetErrorString(device_status) + ")";
    }
    if (devices == 0) return "no CUDA device";

    char other_client[CUPTI_OLD_SUBSCRIBER_NAME_MIN_LEN] = {};
    CUpti_SubscriberParams params{};
    params.structSize = CUpti_SubscriberParams_STRUCT_SIZE;
    params.subscriberName = "gpuprof";
    params.oldSubscriberName = other_client;
    params.oldSubscriberSize = sizeof other_client;
    const CUptiResult subscribed = cuptiSubscribe_v2(&subscriber_, graph_node_callback, this, &params);
    if (subscribed == CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED)
      return std::string("another CUPTI client is attached (") +
             (other_client[0] ? other_client : "a profiler") +
             "); run without Nsight Systems/Compute or use its kernel tables";
    if (subscribed != CUPTI_SUCCESS) return GPUPROF_CUPTI_FAILURE(subscribed);

    // The clock before any kind is enabled: CUPTI reads it for every timestamp after.
    std::string failure = GPUPROF_CUPTI_FAILURE(cuptiActivityRegisterTimestampCallback(host_clock));
    shared().buffer_bytes.store(options_.buffer_bytes, std::memory_order_relaxed);
    std::uint8_t buffers_come_zeroed = 1;
    std::size_t flag_size = sizeof buffers_come_zeroed;
    if (failure.empty())
      failure = GPUPROF_CUPTI_FAILURE(cuptiActivitySetAttribute(
          CUPTI_ACTIVITY_ATTR_ZEROED_OUT_ACTIVITY_BUFFER, &flag_size, &buffers_come_zeroed));
    if (failure.empty())
      failure = GPUPROF_CUPTI_FAILURE(cuptiActivityRegisterCallbacks(buffer_requested, buffer_completed));
    for (const CUpti_CallbackId graph_event :
         {CUPTI_CBID_RESOURCE_GRAPHNODE_CREATED, CUPTI_CBID_RESOURCE_GRAPHNODE_CLONED})
      if (failure.empty())
        failure =
            GPUPROF_CUPTI_FAILURE(cuptiEnableCallback(1, subscriber_, CUPTI_CB_DOMAIN_RESOURCE, graph_event));
    if (failure.empty() && options_.launch_callbacks) {
      // A CUPTI that names no launching function, or refuses their
      // callbacks, ties launches by activity records instead.
      launch_callback_ids_ = find_launch_functions();
      if (enable_launch_callbacks(1) != CUPTI_SUCCESS) launch_callback_ids_.clear();
      enable_launch_callbacks(0);  // undo; result irrelevant
    }
    if (failure.empty()) {
      // Probe every kind once, so an unsupported one turns capture off here
      // rather than failing in start().
      for (const CUpti_ActivityKind kind : activity_kinds()) {
        failure = GPUPROF_CUPTI_FAILURE(cuptiActivityEnable(kind));
        if (!failure.empty()) break;
      }
      for (const CUpti_ActivityKind kind : activity_kinds())
        cuptiActivityDisable(kind);  // undo; result irrelevant
    }
    if (!failure.empty()) {
      note(GPUPROF_CUPTI_FAILURE(cuptiUnsubscribe(subscriber_)));
      return failure;
    }
    {
      const std::lock_guard<std::mutex> lock(shared().mutex);
      shared().capture = this;
    }
    profiler().add_observer(this);
    return {};
  }

  void close_session() {
    profiler().remove_observer(this);
    try {
      stop();
    } catch (const std::exception& error) {
      note(error.what());
    }
    {
      const std::lock_guard<std::mutex> lock(shared().mutex);
      shared().capture = nullptr;
    }
    note(GPUPROF_CUPTI_FAILURE(cuptiUnsubscribe(subscriber_)));
  }

  // Flushes, then joins every record to its scope (detail/cupti_join.hpp).
  std::vector<KernelRecord> joined_records(const std::vector<int>& report_node_of_scope) {
    flush();
    const std::lock_guard<std::mutex> lock(shared().mutex);
    take_launches();
    std::vector<KernelRecord> joined = records_;
    const std::lock_guard<std::mutex> nodes_lock(graph_nodes_mutex_);
    detail::join_correlations(joined, correlations_, graph_nodes_, report_node_of_scope);
    return joined;
  }

  // Drops the `folded` oldest records, now in the aggregates, with their
  // correlations unless a record still kept shares them. Folded graph work
  // stays raw apart: replays of scopes captured without stamps are timed
  // from it (graph_intervals()). Caller holds shared().mutex.
  void forget_folded(std::size_t folded) {
    if (folded == 0) return;
    std::unordered_set<std::uint32_t> still_used;
    for (std::size_t k = folded; k < records_.size(); ++k) still_used.insert(records_[k].correlation_id);
    for (std::size_t k = 0; k < folded; ++k) {
      if (records_[k].graph_node_id != 0) folded_graph_records_.push_back(records_[k]);
      else if (still_used.count(records_[k].correlation_id) == 0)
        correlations_.forget(records_[k].correlation_id);
    }
    records_.erase(records_.begin(), records_.begin() + static_cast<std::ptrdiff_t>(folded));
  }

  // The launches the callbacks noted so far join the correlation tables.
  // Caller holds shared().mutex.
  void take_launches() {
    std::vector<Launch> noted;
    {
      const std::lock_guard<std::mutex> lock(launches_mutex_);
      noted.swap(launches_);
    }
    for (const Launch& launch : noted) {
      if (launch.scope_instance != 0)
        correlations_.add_external(launch.correlation_id, launch.scope_instance);
      correlations_.add_api_call(launch.correlation_id, launch.start_ns);
    }
    dropped_ += lost_launches_.exchange(0, std::memory_order_relaxed);
  }

  // Called with shared().mutex held, on whichever thread CUPTI delivers on.
  void consume(std::uint8_t* buffer, std::size_t valid_bytes) {
    CUpti_Activity* activity = nullptr;
    for (;;) {
      const CUptiResult status = cuptiActivityGetNextRecord(buffer, valid_bytes, &activity);
      if (status == CUPTI_ERROR_MAX_LIMIT_REACHED) break;
      if (status != CUPTI_SUCCESS) {
        note_locked(GPUPROF_CUPTI_FAILURE(status) + " while reading an activity buffer");
        break;
      }
      switch (activity->kind) {
        case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL: {
          const auto& kernel = *reinterpret_cast<const detail::CuptiKernel*>(activity);
          if (detail::is_graph_stamp(kernel.name)) break;  // gpuprof's own graph timing
          keep(detail::kernel_record(kernel), kernel.name ? kernel.name : "<unnamed kernel>");
          break;
        }
        case CUPTI_ACTIVITY_KIND_MEMCPY: {
          const auto& copy = *reinterpret_cast<const detail::CuptiMemcpy*>(activity);
          keep(detail::memcpy_record(copy), detail::memcpy_name(copy.copyKind));
          break;
        }
        case CUPTI_ACTIVITY_KIND_MEMSET:
          keep(detail::memset_record(*reinterpret_cast<const detail::CuptiMemset*>(activity)),
               "[CUDA memset]");
          break;
        case CUPTI_ACTIVITY_KIND_RUNTIME:
        case CUPTI_ACTIVITY_KIND_DRIVER: {
          const auto& call = *reinterpret_cast<const detail::CuptiApiCall*>(activity);
          correlations_.add_api_call(call.correlationId, static_cast<std::int64_t>(call.start));
          break;
        }
        case CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION: {
          const auto& link = *reinterpret_cast<const CUpti_ActivityExternalCorrelation*>(activity);
          if (link.externalKind == CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0)
            correlations_.add_external(link.correlationId, link.externalId);
          break;
        }
        case CUPTI_ACTIVITY_KIND_MEMORY2: {
          AllocationRecord allocation;
          if (detail::allocation_record(*reinterpret_cast<const detail::CuptiMemory*>(activity), allocation))
            allocations_.push_back(allocation);
          break;
        }
        default: break;
      }
    }
  }

  // Names the record (each distinct raw name demangled and categorised once)
  // and keeps it; a record CUPTI could not time counts as dropped.
  void keep(KernelRecord record, const char* raw_name) {
    if (record.start_ns == 0 && record.end_ns == 0) {
      ++dropped_;
      return;
    }
    const KernelRecord& named = named_like(raw_name, record.kind);
    record.name = named.name;
    record.base_name = named.base_name;
    record.category = named.category;
    records_.push_back(std::move(record));
  }
  // CUPTI shares one name string among the records of a kernel, so the
  // pointer finds the name without hashing the text (checked, in case the
  // memory was reused for another name).
  const KernelRecord& named_like(const char* raw_name, ActivityKind kind) {
    const auto cached = names_by_pointer_.find(raw_name);
    if (cached != names_by_pointer_.end() && std::strcmp(cached->second->first.c_str(), raw_name) == 0)
      return cached->second->second;
    auto named = names_.find(raw_name);
    if (named == names_.end()) {
      KernelRecord naming;
      naming.kind = kind;
      name_record(naming, raw_name, options_.categories);
      named = names_.emplace(raw_name, std::move(naming)).first;
    }
    if (names_by_pointer_.size() >= max_cached_name_pointers) names_by_pointer_.clear();
    names_by_pointer_[raw_name] = &*named;
    return named->second;
  }
  void keep(KernelRecord record, const std::string& raw_name) { keep(std::move(record), raw_name.c_str()); }

  void count_dropped() {
    std::size_t newly_dropped = 0;
    const std::string failure =
        GPUPROF_CUPTI_FAILURE(cuptiActivityGetNumDroppedRecords(nullptr, 0, &newly_dropped));
    const std::lock_guard<std::mutex> lock(shared().mutex);
    if (!failure.empty()) note_locked(failure);
    dropped_ += newly_dropped;
  }

  void note(const std::string& problem) {
    if (problem.empty()) return;
    const std::lock_guard<std::mutex> lock(shared().mutex);
    note_locked(problem);
  }
  void note_locked(const std::string& problem) {
    if (problem.empty()) return;
    if (problems_count_++ == 0) problems_ = problem;
  }

  KernelCaptureOptions options_;
  std::string why_inactive_;
  bool capturing_ = false;           // between start() and stop()
  bool paused_by_schedule_ = false;  // in a step the schedule does not record
  CUpti_SubscriberHandle subscriber_ = nullptr;
  // The launching functions whose callbacks tie launches to scopes; empty:
  // activity records do (the default).
  std::vector<std::pair<CUpti_CallbackDomain, CUpti_CallbackId>> launch_callback_ids_;

  // Guarded by shared().mutex (CUPTI delivers on its own thread).
  std::vector<KernelRecord> records_;  // not folded yet
  detail::KernelAggregates kernel_aggregates_;
  std::vector<KernelRecord> folded_graph_records_;  // graph work among the folded records
  std::vector<AllocationRecord> allocations_;
  detail::CorrelationTables correlations_;
  // Guarded by launches_mutex_ instead: the launch callbacks write it on
  // launching threads.
  struct Launch {
    std::uint32_t correlation_id = 0;
    std::uint64_t scope_instance = 0;
    std::int64_t start_ns = 0;
  };
  std::mutex launches_mutex_;
  std::vector<Launch> launches_;
  std::atomic<std::uint64_t> lost_launches_{0};
  // Guarded by graph_nodes_mutex_ instead: CUPTI's resource callbacks write
  // it on capturing threads.
  std::mutex graph_nodes_mutex_;
  detail::GraphNodeScopes graph_nodes_;
  std::atomic<std::uint64_t> lost_graph_nodes_{0};
  std::mutex split_mutex_;  // captures may run on several threads
  static constexpr std::size_t max_split_captures = 64;
  std::vector<std::pair<unsigned long long, std::size_t>>
      split_points_;                                     // (capture id, nodes at its last split)
  std::unordered_map<std::string, KernelRecord> names_;  // raw name -> named record
  static constexpr std::size_t max_cached_name_pointers = 4096;
  std::unordered_map<const char*, const std::pair<const std::string, KernelRecord>*> names_by_pointer_;
  std::uint64_t dropped_ = 0;
  std::uint64_t problems_count_ = 0;
  std::string problems_;  // the first problem a noexcept path met
};

GPUPROF_NAMESPACE_END
