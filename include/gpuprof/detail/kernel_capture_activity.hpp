// gpuprof/detail/kernel_capture_activity.hpp: a KernelCapture's side facing
// CUPTI. Subscribes, registers the clock and the buffer, graph-node and
// launch callbacks, switches the activity kinds on and off (start, stop, the
// step schedule's pauses), reads each completed buffer into plain records
// and hands them to detail/kernel_capture_join.hpp, and counts what was lost.
//
// CUPTI has one subscriber per process and its buffer callbacks carry no
// user pointer: they find the one live capture through a static, under the
// buffer mutex that also guards what the capture joins and reports.
#pragma once
#include <cuda_runtime_api.h>
#include <cupti.h>

#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "../allocation_record.hpp"
#include "../clock.hpp"
#include "../config.hpp"
#include "../diagnostics.hpp"
#include "../error.hpp"
#include "../kernel_capture_options.hpp"
#include "../kernel_names.hpp"
#include "../kernel_record.hpp"
#include "cupti_check.hpp"
#include "cupti_join.hpp"
#include "cupti_launch_apis.hpp"
#include "cupti_records.hpp"
#include "kernel_capture_join.hpp"
#include "recorder.hpp"

GPUPROF_NAMESPACE_BEGIN
namespace detail {

class KernelCaptureActivity {
 public:
  // `options` and `join` outlive this (members of the same KernelCapture).
  KernelCaptureActivity(const KernelCaptureOptions& options, KernelCaptureJoin& join)
      : options_(options), join_(join) {}
  KernelCaptureActivity(const KernelCaptureActivity&) = delete;
  KernelCaptureActivity& operator=(const KernelCaptureActivity&) = delete;

  // Guards the capture's records, correlations, aggregates, allocations,
  // drop count and problems (CUPTI delivers buffers on its own thread).
  static std::mutex& buffer_mutex() { return shared().mutex; }

  // Whether launches are tied to scopes by callbacks (options.launch_callbacks,
  // and this CUPTI names its launching functions) rather than activity records.
  bool uses_launch_callbacks() const { return !launch_callback_ids_.empty(); }

  // Subscribes and registers callbacks, or says why not (undoing what it did).
  std::string open() {
    {
      const std::lock_guard<std::mutex> lock(shared().mutex);
      if (shared().activity) return "another gpuprof::KernelCapture is already active";
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
    const std::lock_guard<std::mutex> lock(shared().mutex);
    shared().activity = this;
    return {};
  }

  // Undoes open(): buffers completed from now on find no capture.
  void close() {
    {
      const std::lock_guard<std::mutex> lock(shared().mutex);
      shared().activity = nullptr;
    }
    note(GPUPROF_CUPTI_FAILURE(cuptiUnsubscribe(subscriber_)));
  }

  // CUPTI's activity kinds and launch callbacks, on or off together.
  void switch_recording(bool on) {
    for (const CUpti_ActivityKind kind : activity_kinds())
      GPUPROF_CUPTI_CHECK(on ? cuptiActivityEnable(kind) : cuptiActivityDisable(kind));
    GPUPROF_CUPTI_CHECK(enable_launch_callbacks(on ? 1 : 0));
  }

  // Waits for the current device's work, then has CUPTI hand over every buffer.
  void flush() {
    GPUPROF_CUDA_CHECK(cudaDeviceSynchronize());
    GPUPROF_CUPTI_CHECK(cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED));
    count_dropped();
  }

  // Without launch callbacks, a scope's instance id becomes the external
  // correlation id of the launches inside it.
  void push_scope(std::uint64_t instance_id) {
    note(GPUPROF_CUPTI_FAILURE(
        cuptiActivityPushExternalCorrelationId(CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0, instance_id)));
  }
  void pop_scope(std::uint64_t instance_id) {
    std::uint64_t popped = 0;
    note(GPUPROF_CUPTI_FAILURE(
        cuptiActivityPopExternalCorrelationId(CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0, &popped)));
    if (popped != instance_id)
      note("external correlation stack out of order: popped " + std::to_string(popped) + " for scope " +
           std::to_string(instance_id));
  }

  // Adds the records CUPTI dropped since the last call to the drop count.
  void count_dropped() {
    std::size_t newly_dropped = 0;
    const std::string failure =
        GPUPROF_CUPTI_FAILURE(cuptiActivityGetNumDroppedRecords(nullptr, 0, &newly_dropped));
    const std::lock_guard<std::mutex> lock(shared().mutex);
    if (!failure.empty()) note_locked(failure);
    dropped_ += newly_dropped;
  }

  // Device allocations and releases (options.allocations) delivered so far.
  std::vector<AllocationRecord> allocations() {
    const std::lock_guard<std::mutex> lock(shared().mutex);
    return allocations_;
  }
  // Records CUPTI dropped or delivered without timestamps, and buffers lost.
  std::uint64_t dropped() {
    const std::lock_guard<std::mutex> lock(shared().mutex);
    return dropped_;
  }

  // --- Caller holds buffer_mutex().
  std::uint64_t dropped_locked() const { return dropped_; }
  void add_dropped_locked(std::uint64_t records) { dropped_ += records; }
  // Forgets the allocations and the drop count (KernelCapture::clear()).
  void clear_locked() {
    allocations_.clear();
    dropped_ = 0;
  }

  // A problem met on a path that must not throw: the first is kept, all are
  // counted, and diagnose_problems() tells them at the end.
  void note(const std::string& problem) {
    if (problem.empty()) return;
    const std::lock_guard<std::mutex> lock(shared().mutex);
    note_locked(problem);
  }
  void diagnose_problems() const {
    if (!problems_.empty())
      diagnose(Severity::note,
               "kernel capture: " + std::to_string(problems_count_) + " problem(s), first: " + problems_);
  }

 private:
  // CUPTI's buffer callbacks find the one live capture here, under a mutex
  // that also guards its record vectors. The buffer size is read without it:
  // CUPTI may ask for a buffer on a launching thread while another buffer is
  // being read.
  struct Shared {
    std::mutex mutex;
    KernelCaptureActivity* activity = nullptr;
    std::atomic<std::size_t> buffer_bytes{KernelCaptureOptions{}.buffer_bytes};
  };
  static Shared& shared() {
    static Shared state;
    return state;
  }

  static std::uint64_t CUPTIAPI host_clock() { return static_cast<std::uint64_t>(host_now_ns()); }

  // CUPTI's callbacks on the subscriber (`self`): launching calls (launch
  // callbacks), and the resource callbacks for graph nodes, on the thread
  // that creates (captures) or clones (instantiates) them: a created node
  // belongs to the recorder's innermost open scope node of that thread.
  // Must not throw into CUPTI.
  static void CUPTIAPI graph_node_callback(void* self, CUpti_CallbackDomain domain, CUpti_CallbackId id,
                                           const void* data) {
    auto& activity = *static_cast<KernelCaptureActivity*>(self);
    if (domain == CUPTI_CB_DOMAIN_RUNTIME_API || domain == CUPTI_CB_DOMAIN_DRIVER_API) {
      const auto& call = *static_cast<const CUpti_CallbackData*>(data);
      if (call.callbackSite == CUPTI_API_ENTER)
        activity.join_.launch_entered(call.correlationId, innermost_scope_instance(), host_now_ns());
      return;
    }
    if (domain != CUPTI_CB_DOMAIN_RESOURCE) return;
    const bool cloned = id == CUPTI_CBID_RESOURCE_GRAPHNODE_CLONED;
    if (!cloned && id != CUPTI_CBID_RESOURCE_GRAPHNODE_CREATED) return;
    const auto* resource = static_cast<const CUpti_ResourceData*>(data);
    const auto& graph = *static_cast<const CUpti_GraphData*>(resource->resourceDescriptor);
    std::uint64_t node_id = 0, original_id = 0;
    CUptiResult status = cuptiGetGraphNodeId(graph.node, &node_id);
    if (status == CUPTI_SUCCESS && cloned) status = cuptiGetGraphNodeId(graph.originalNode, &original_id);
    try {
      if (status != CUPTI_SUCCESS) {  // the node's work falls back to the scope around its launch
        activity.note(cupti_failure(status, "cuptiGetGraphNodeId", __FILE__, __LINE__));
        return;
      }
      if (cloned) activity.join_.graph_node_cloned(node_id, original_id);
      else activity.join_.graph_node_created(node_id, innermost_scope_node(), innermost_scope_instance());
    } catch (...) {  // out of memory: this node falls back likewise
      activity.join_.graph_node_lost();
    }
  }

  static void CUPTIAPI buffer_requested(std::uint8_t** buffer, std::size_t* size, std::size_t* max_records) {
    const std::size_t bytes = shared().buffer_bytes.load(std::memory_order_relaxed);
    // Zeroed (fresh pages from calloc cost nothing to zero) so that CUPTI,
    // told so in open(), does not zero it on the launching thread.
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
      if (KernelCaptureActivity* activity = shared().activity) {
        try {
          activity->consume(buffer, valid_bytes);
        } catch (const std::exception& error) {
          lost_buffer(*activity, error.what());
        } catch (...) {
          lost_buffer(*activity, "unknown exception");
        }
      }
    }
    std::free(buffer);
  }

  // Caller holds shared().mutex. Noting the reason may itself fail to
  // allocate; the count still says records were lost.
  static void lost_buffer(KernelCaptureActivity& activity, const char* why) noexcept {
    ++activity.dropped_;
    try {
      activity.note_locked(std::string("a completed buffer was lost: ") + why);
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
        if (cuptiGetCallbackName(domain, id, &name) == CUPTI_SUCCESS && name && api_launches_work(name))
          found.emplace_back(domain, id);
      }
    };
    add(CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_SIZE);
    if (options_.driver_api) add(CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_SIZE);
    return found;
  }

  // Switches the launch callbacks on (1) or off (0); none without them.
  CUptiResult enable_launch_callbacks(std::uint32_t enable) const {
    for (const auto& [domain, id] : launch_callback_ids_) {
      const CUptiResult status = cuptiEnableCallback(enable, subscriber_, domain, id);
      if (status != CUPTI_SUCCESS) return status;
    }
    return CUPTI_SUCCESS;
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
          const auto& kernel = *reinterpret_cast<const CuptiKernel*>(activity);
          if (is_graph_stamp(kernel.name)) break;  // gpuprof's own graph timing
          keep(kernel_record(kernel), kernel.name ? kernel.name : "<unnamed kernel>");
          break;
        }
        case CUPTI_ACTIVITY_KIND_MEMCPY: {
          const auto& copy = *reinterpret_cast<const CuptiMemcpy*>(activity);
          keep(memcpy_record(copy), memcpy_name(copy.copyKind));
          break;
        }
        case CUPTI_ACTIVITY_KIND_MEMSET:
          keep(memset_record(*reinterpret_cast<const CuptiMemset*>(activity)), "[CUDA memset]");
          break;
        case CUPTI_ACTIVITY_KIND_RUNTIME:
        case CUPTI_ACTIVITY_KIND_DRIVER: {
          const auto& call = *reinterpret_cast<const CuptiApiCall*>(activity);
          join_.add_api_call(call.correlationId, static_cast<std::int64_t>(call.start));
          break;
        }
        case CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION: {
          const auto& link = *reinterpret_cast<const CUpti_ActivityExternalCorrelation*>(activity);
          if (link.externalKind == CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0)
            join_.add_external(link.correlationId, link.externalId);
          break;
        }
        case CUPTI_ACTIVITY_KIND_MEMORY2: {
          AllocationRecord allocation;
          if (allocation_record(*reinterpret_cast<const CuptiMemory*>(activity), allocation))
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
    join_.add_record(std::move(record));
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

  void note_locked(const std::string& problem) {
    if (problem.empty()) return;
    if (problems_count_++ == 0) problems_ = problem;
  }

  const KernelCaptureOptions& options_;
  KernelCaptureJoin& join_;
  CUpti_SubscriberHandle subscriber_ = nullptr;
  // The launching functions whose callbacks tie launches to scopes; empty:
  // activity records do (the default).
  std::vector<std::pair<CUpti_CallbackDomain, CUpti_CallbackId>> launch_callback_ids_;

  // Guarded by shared().mutex.
  std::vector<AllocationRecord> allocations_;
  std::unordered_map<std::string, KernelRecord> names_;  // raw name -> named record
  static constexpr std::size_t max_cached_name_pointers = 4096;
  std::unordered_map<const char*, const std::pair<const std::string, KernelRecord>*> names_by_pointer_;
  std::uint64_t dropped_ = 0;
  std::uint64_t problems_count_ = 0;
  std::string problems_;  // the first problem a noexcept path met
};

}  // namespace detail
GPUPROF_NAMESPACE_END
