// gpuprof/report/chrome_trace.hpp: to_chrome_trace and write_chrome_trace, a timeline in
// the Chrome trace-event JSON format (opens in ui.perfetto.dev and
// chrome://tracing).
//
// Tracks: process "Host" (pid 1) with one thread per host thread, holding the
// scope instances as complete events; one process per GPU ("GPU <device>",
// pid 1000 + device) with one thread per stream, holding kernels, copies and
// memsets. A flow arrow runs from the launching scope, at the launch call, to
// the start of each kernel whose launch time and scope are known (not graph
// work charged to the scope it was captured in: no instance launched it).
// Timestamps are microseconds since the earliest event, which is recorded in
// otherData.origin_ns (steady_clock nanoseconds) so they can be mapped back.
#pragma once
#include <algorithm>
#include <cstdlib>
#include <cstdint>
#include <limits>
#include <set>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "../atomic_file.hpp"
#include "../json_writer.hpp"
#include "json.hpp"
#include "../report_model.hpp"

GPUPROF_NAMESPACE_BEGIN

namespace detail {
constexpr std::uint32_t trace_host_pid = 1;
constexpr std::uint32_t trace_first_gpu_pid = 1000;

// A scope's name or path as events repeat it (once per instance, once per
// kernel launched in it): cut at 1 KiB, on a UTF-8 boundary, with "...". A
// report names each scope once, so without the cut a long name times many
// instances would make a trace far larger than the report it comes from.
inline constexpr std::size_t max_trace_scope_text = 1024;
inline std::string trace_scope_text(const std::string& text) {
  if (text.size() <= max_trace_scope_text) return text;
  std::size_t cut = max_trace_scope_text;
  while (cut > 0 && (static_cast<unsigned char>(text[cut]) & 0xC0) == 0x80) --cut;
  return text.substr(0, cut) + "...";
}

// The earliest time in the report, so timestamps start near zero (small
// numbers keep nanosecond resolution in a double of microseconds).
inline std::int64_t trace_origin_ns(const Report& report) {
  std::int64_t origin = std::numeric_limits<std::int64_t>::max();
  for (const ScopeInstance& instance : report.instances) origin = std::min(origin, instance.host_begin_ns);
  for (const KernelRecord& kernel : report.kernels) {
    origin = std::min(origin, kernel.start_ns);
    if (kernel.launch_ns != 0) origin = std::min(origin, kernel.launch_ns);
  }
  for (const MemoryUsePoint& point : report.memory_timeline.in_use) origin = std::min(origin, point.time_ns);
  for (const TimelineAllocation& allocation : report.memory_timeline.allocations)
    origin = std::min(origin, allocation.alloc_ns);
  return origin == std::numeric_limits<std::int64_t>::max() ? 0 : origin;
}

class TraceEvents {
 public:
  // pid_offset moves every process of this report (the merged trace gives
  // each rank its own range of pids).
  TraceEvents(JsonWriter& json, std::int64_t origin_ns, std::uint32_t pid_offset = 0)
      : json_(json), origin_ns_(origin_ns), pid_offset_(pid_offset) {}

  // Opens an event object with the fields every event has; the caller adds
  // the rest and closes it.
  JsonWriter& begin(const char* phase, const std::string& name, std::uint32_t pid, std::uint32_t tid) {
    return json_.begin_object(JsonWriter::one_line)
        .member("ph", phase)
        .member("name", name)
        .member("pid", pid_offset_ + pid)
        .member("tid", tid);
  }
  JsonWriter& begin_at(const char* phase, const std::string& name, std::uint32_t pid, std::uint32_t tid,
                       std::int64_t time_ns) {
    // origin_ns_ is the earliest time stamp and every time stamp lies in
    // 0 .. 2^62 (read_json.hpp refuses others), so this cannot overflow.
    return begin(phase, name, pid, tid).member("ts", microseconds(time_ns - origin_ns_));
  }
  void metadata(const char* what, std::uint32_t pid, std::uint32_t tid, const char* arg_key,
                const std::string& arg) {
    begin("M", what, pid, tid).key("args").begin_object().member(arg_key, arg).end_object();
    json_.end_object();
  }
  void metadata(const char* what, std::uint32_t pid, std::uint32_t tid, const char* arg_key,
                std::uint32_t arg) {
    begin("M", what, pid, tid).key("args").begin_object().member(arg_key, arg).end_object();
    json_.end_object();
  }
  static double microseconds(std::int64_t nanoseconds) { return static_cast<double>(nanoseconds) / 1e3; }

 private:
  JsonWriter& json_;
  std::int64_t origin_ns_;
  std::uint32_t pid_offset_;
};

// Process names start with `process_prefix` ("rank 1 (host, GPU) " in a
// merged trace); sort indices with `first_sort_index`.
inline void write_trace_tracks(TraceEvents& events, const Report& report,
                               const std::string& process_prefix = "", std::uint32_t first_sort_index = 0) {
  std::set<std::uint32_t> threads;
  for (const ScopeInstance& instance : report.instances) threads.insert(instance.thread);
  std::set<std::pair<std::uint32_t, std::uint32_t>> streams;  // (device, stream)
  for (const KernelRecord& kernel : report.kernels) streams.insert({kernel.device, kernel.stream});

  events.metadata("process_name", trace_host_pid, 0, "name", process_prefix + "Host");
  events.metadata("process_sort_index", trace_host_pid, 0, "sort_index", first_sort_index);
  for (std::uint32_t thread : threads)
    events.metadata("thread_name", trace_host_pid, thread, "name", "host thread " + std::to_string(thread));
  std::set<std::uint32_t> devices;
  for (const auto& [device, stream] : streams) {
    const std::uint32_t pid = trace_first_gpu_pid + device;
    if (devices.insert(device).second) {
      std::string name = process_prefix + "GPU " + std::to_string(device);
      if (!report.device_name.empty()) name += " (" + report.device_name + ")";
      events.metadata("process_name", pid, 0, "name", name);
      events.metadata("process_sort_index", pid, 0, "sort_index", first_sort_index + 1 + device);
    }
    events.metadata("thread_name", pid, stream, "name", "stream " + std::to_string(stream));
  }
}

// Kineto's (PyTorch profiler's) category names, which Holistic Trace
// Analysis keys its breakdowns on.
inline const char* kineto_category(ActivityKind kind) {
  switch (kind) {
    case ActivityKind::kernel: return "kernel";
    case ActivityKind::memcpy: return "gpu_memcpy";
    case ActivityKind::memset: return "gpu_memset";
  }
  return "kernel";
}

inline void write_trace_kernel(JsonWriter& json, TraceEvents& events, const KernelRecord& kernel,
                               const std::string& scope_path) {
  const std::string& title = kernel.base_name.empty() ? kernel.name : kernel.base_name;
  events.begin_at("X", title, trace_first_gpu_pid + kernel.device, kernel.stream, kernel.start_ns)
      .member("dur", TraceEvents::microseconds(kernel.duration_ns()))
      .member("cat", kineto_category(kernel.kind))
      .key("args")
      .begin_object()
      .member("name", kernel.name)
      .member("kind", activity_kind_name(kernel.kind))
      .member("category", kernel.category)
      .member("scope", trace_scope_text(scope_path))
      .member("correlation_id", kernel.correlation_id)
      .member("device", kernel.device)
      .member("stream", kernel.stream)
      .member("correlation", kernel.correlation_id)
      .member("External id", kernel.scope_instance);
  if (kernel.graph_node_id != 0)
    json.member("graph_node_id", kernel.graph_node_id).member("graph_launch", kernel.graph_launch);
  if (kernel.kind == ActivityKind::kernel) {
    json.key("grid").begin_array();
    for (std::uint32_t extent : kernel.grid) json.value(extent);
    json.end_array().key("block").begin_array();
    for (std::uint32_t extent : kernel.block) json.value(extent);
    json.end_array()
        .member("registers_per_thread", kernel.registers_per_thread)
        .member("shared_bytes", kernel.shared_bytes);
  } else {
    json.member("bytes", kernel.bytes);
  }
  json.end_object().end_object();
}

// deviceProperties as Kineto writes it: one entry per device seen.
inline void write_trace_device_properties(JsonWriter& json, const Report& report) {
  std::set<std::uint32_t> devices;
  for (const KernelRecord& kernel : report.kernels) devices.insert(kernel.device);
  if (devices.empty() && !report.device_name.empty()) devices.insert(0);
  const std::string& capability = report.environment.compute_capability;
  const std::size_t dot = capability.find('.');
  const int major = dot == std::string::npos ? 0 : std::atoi(capability.substr(0, dot).c_str());
  const int minor = dot == std::string::npos ? 0 : std::atoi(capability.substr(dot + 1).c_str());
  json.key("deviceProperties").begin_array();
  for (std::uint32_t device : devices)
    json.begin_object(JsonWriter::one_line)
        .member("id", device)
        .member("name", report.device_name)
        .member("computeMajor", major)
        .member("computeMinor", minor)
        .end_object();
  json.end_array();
}

// Memory in use as counter tracks ("ph": "C") on the GPU process: device
// memory in use at scope boundaries, and the bytes live in allocations
// kernel capture saw.
inline void write_trace_memory_counters(TraceEvents& events, const MemoryTimeline& timeline) {
  const std::uint32_t pid = trace_first_gpu_pid;
  for (const MemoryUsePoint& point : timeline.in_use)
    events.begin_at("C", "Device memory in use", pid, 0, point.time_ns)
        .key("args")
        .begin_object()
        .member("MiB", static_cast<double>(point.bytes_in_use) / (1 << 20))
        .end_object()
        .end_object();
  std::vector<std::pair<std::int64_t, std::int64_t>> changes;  // (time, bytes)
  for (const TimelineAllocation& allocation : timeline.allocations) {
    changes.emplace_back(allocation.alloc_ns, allocation.bytes);
    if (allocation.free_ns >= 0) changes.emplace_back(allocation.free_ns, -allocation.bytes);
  }
  std::stable_sort(changes.begin(), changes.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  // A double running sum: exact to 8 PiB, and no overflow for any sizes a
  // file may claim.
  double live = 0;
  for (const auto& [time_ns, bytes] : changes)
    events.begin_at("C", "Allocated (kernel capture)", pid, 0, time_ns)
        .key("args")
        .begin_object()
        .member("MiB", (live += static_cast<double>(bytes)) / (1 << 20))
        .end_object()
        .end_object();
}
}  // namespace detail

// Options of the Chrome trace beyond its defaults.
struct ChromeTraceOptions {
  // Instances of the scope with this path become "ProfilerStep#N" (N from 0,
  // cat "user_annotation"), the step marker Kineto traces carry and Holistic
  // Trace Analysis splits its breakdowns by. "" keeps every scope's own name.
  std::string step_scope;
};

namespace detail {
// Every event of one report (tracks named by write_trace_tracks first):
// scope instances, kernels with their launch flows, memory counters. Flow ids
// continue from `flow_id`, so several reports can share one trace.
inline void write_trace_report_events(JsonWriter& json, TraceEvents& events, const Report& report,
                                      const ChromeTraceOptions& options, std::uint64_t& flow_id) {
  const auto& nodes = report.nodes;
  const auto& instances = report.instances;
  const auto& kernels = report.kernels;
  const auto node_of = [&nodes](const ScopeInstance& instance) -> const ScopeNode* {
    const bool valid = instance.node >= 0 && static_cast<std::size_t>(instance.node) < nodes.size();
    return valid ? &nodes[static_cast<std::size_t>(instance.node)] : nullptr;
  };
  std::unordered_map<std::uint64_t, const ScopeInstance*> instance_by_id;
  for (const ScopeInstance& instance : instances) instance_by_id[instance.id] = &instance;

  std::uint64_t step = 0;

  for (const ScopeInstance& instance : instances) {
    const ScopeNode* node = node_of(instance);
    const bool is_step = node && !options.step_scope.empty() && node->path == options.step_scope;
    events
        .begin_at("X",
                  is_step ? "ProfilerStep#" + std::to_string(step++)
                  : node  ? trace_scope_text(node->name)
                          : "(unknown scope)",
                  trace_host_pid, instance.thread, instance.host_begin_ns)
        .member("dur", TraceEvents::microseconds(instance.host_end_ns - instance.host_begin_ns))
        .member("cat", is_step ? "user_annotation" : "scope")
        .key("args")
        .begin_object()
        .member("path", node ? trace_scope_text(node->path) : "")
        .member("instance", instance.id);
    if (instance.gpu_ms >= 0) json.member("gpu_ms", instance.gpu_ms);
    json.end_object().end_object();
  }

  for (const KernelRecord& kernel : kernels) {
    const auto found = instance_by_id.find(kernel.scope_instance);
    const ScopeInstance* launcher =
        kernel.scope_instance != 0 && found != instance_by_id.end() ? found->second : nullptr;
    // Graph work names the scope it was captured in; it has no launching instance.
    const bool captured =
        kernel.scope_node >= 0 && static_cast<std::size_t>(kernel.scope_node) < nodes.size();
    const ScopeNode* scope = captured   ? &nodes[static_cast<std::size_t>(kernel.scope_node)]
                             : launcher ? node_of(*launcher)
                                        : nullptr;
    write_trace_kernel(json, events, kernel, scope ? scope->path : "");
    if (launcher == nullptr || kernel.launch_ns == 0) continue;
    // The start binds to the scope slice around the launch call; "bp":"e"
    // binds the end to the kernel slice that begins at that instant.
    ++flow_id;
    events.begin_at("s", "launch", trace_host_pid, launcher->thread, kernel.launch_ns)
        .member("cat", "launch")
        .member("id", flow_id)
        .end_object();
    events.begin_at("f", "launch", trace_first_gpu_pid + kernel.device, kernel.stream, kernel.start_ns)
        .member("cat", "launch")
        .member("id", flow_id)
        .member("bp", "e")
        .end_object();
  }
  write_trace_memory_counters(events, report.memory_timeline);
}
}  // namespace detail

inline std::string to_chrome_trace(const Report& report, const ChromeTraceOptions& options = {}) {
  const std::int64_t origin_ns = detail::trace_origin_ns(report);
  JsonWriter json;
  json.begin_object()
      .member("displayTimeUnit", "ms")
      .key("otherData")
      .begin_object()
      .member("generator", "gpuprof")
      .member("timing_source", timing_source_name(report.timing_source))
      .member("timing_note", report.timing_note)
      .member("device", report.device_name)
      .member("origin_ns", origin_ns)
      .member("dropped_kernel_records", report.dropped_kernel_records)
      .key("environment");
  write_environment_json(json, report.environment);
  json.end_object().member("schemaVersion", 1);
  detail::write_trace_device_properties(json, report);
  json.key("traceEvents").begin_array();
  detail::TraceEvents events(json, origin_ns);
  detail::write_trace_tracks(events, report);
  std::uint64_t flow_id = 0;
  detail::write_trace_report_events(json, events, report, options, flow_id);
  json.end_array().end_object();
  return json.str() + "\n";
}

inline void write_chrome_trace(const Report& report, const std::string& path,
                               const ChromeTraceOptions& options = {}) {
  write_file_atomically(path, to_chrome_trace(report, options));
}

GPUPROF_NAMESPACE_END
