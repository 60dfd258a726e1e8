// gpuprof/report/read_json.hpp: a Report back from the JSON write_json wrote,
// so tools (gpuprof-compare, gpuprof-report) work on files the same way the
// library works on reports in memory.
//
//   gpuprof::Report report = gpuprof::read_report_json("profile.json");
//
// Statistics are recomputed from each summary's samples (summarize() on
// samples_ms), so a report read back has the same numbers it was written
// with. Keys added in later writers (environment, rank, memory_timeline) are
// optional: older files read with those parts empty. A file that is not a
// gpuprof report, or of a newer major version, throws gpuprof::Error.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "../detail/json_reader.hpp"
#include "../error.hpp"
#include "json.hpp"
#include "model.hpp"

GPUPROF_NAMESPACE_BEGIN

namespace detail {

inline Summary summary_from_json(const Json& json) {
  if (json.is_null()) return {};
  std::vector<double> samples;
  for (const Json& sample : json["samples_ms"].elements()) samples.push_back(sample.as_number());
  return summarize(std::move(samples));
}

inline double number_or(const Json& object, const char* key, double fallback) {
  const Json* value = object.find(key);
  return value && value->is_number() ? value->as_number() : fallback;
}

template <class Integer>
Integer integer_of(const Json& object, const char* key) {
  return static_cast<Integer>(object[key].as_int64());
}

inline ActivityKind activity_kind_from_name(const std::string& name) {
  if (name == "memcpy") return ActivityKind::memcpy;
  if (name == "memset") return ActivityKind::memset;
  return ActivityKind::kernel;
}

inline KernelRecord kernel_from_json(const Json& json) {
  KernelRecord kernel;
  kernel.kind = activity_kind_from_name(json["kind"].as_string());
  kernel.name = json["name"].as_string();
  kernel.base_name = json["base_name"].as_string();
  kernel.category = json["category"].as_string();
  kernel.start_ns = json["start_ns"].as_int64();
  kernel.end_ns = json["end_ns"].as_int64();
  kernel.launch_ns = json["launch_ns"].as_int64();
  kernel.device = integer_of<std::uint32_t>(json, "device");
  kernel.stream = integer_of<std::uint32_t>(json, "stream");
  kernel.correlation_id = integer_of<std::uint32_t>(json, "correlation_id");
  kernel.scope_instance = integer_of<std::uint64_t>(json, "scope_instance");
  kernel.scope_node = static_cast<int>(number_or(json, "scope_node", -1));
  kernel.graph_node_id = static_cast<std::uint64_t>(number_or(json, "graph_node_id", 0));
  kernel.graph_launch = static_cast<std::uint32_t>(number_or(json, "graph_launch", 0));
  for (int i = 0; i < 3; ++i) {
    kernel.grid[i] = static_cast<std::uint32_t>(json["grid"][i].as_int64());
    kernel.block[i] = static_cast<std::uint32_t>(json["block"][i].as_int64());
  }
  kernel.registers_per_thread = integer_of<std::uint32_t>(json, "registers_per_thread");
  kernel.shared_bytes = integer_of<std::uint32_t>(json, "shared_bytes");
  kernel.bytes = integer_of<std::uint64_t>(json, "bytes");
  return kernel;
}

inline MemoryTimeline memory_timeline_from_json(const Json& json) {
  MemoryTimeline timeline;
  for (const Json& point : json["in_use"].elements())
    timeline.in_use.push_back({point[0].as_int64(), point[1].as_int64()});
  for (const Json& entry : json["allocations"].elements()) {
    TimelineAllocation allocation;
    allocation.address = integer_of<std::uint64_t>(entry, "address");
    allocation.bytes = entry["bytes"].as_int64();
    allocation.alloc_ns = entry["alloc_ns"].as_int64();
    allocation.free_ns = entry["free_ns"].is_null() ? -1 : entry["free_ns"].as_int64();
    allocation.scope_instance = integer_of<std::uint64_t>(entry, "scope_instance");
    allocation.scope_path = entry["scope"].as_string();
    allocation.from_pool = entry["from_pool"].as_bool();
    timeline.allocations.push_back(std::move(allocation));
  }
  return timeline;
}

}  // namespace detail

inline Report report_from_json(const detail::Json& json) {
  if (!json.is_object() || !json.contains("schema") || json["schema"].as_string() != "gpuprof.report")
    throw Error("not a gpuprof report (no \"schema\": \"gpuprof.report\")");
  const std::int64_t version = json["version"].as_int64();
  if (version > report_json_version)
    throw Error("gpuprof report version " + std::to_string(version) + " is newer than this reader (" +
                std::to_string(report_json_version) + ")");
  Report report;
  report.timing_source =
      json["timing_source"].as_string() == "cuda_events" ? TimingSource::cuda_events : TimingSource::host_clock;
  report.timing_note = json["timing_note"].as_string();
  report.device_name = json["device"].as_string();
  if (const detail::Json* env = json.find("environment")) report.environment = environment_from_json(*env);
  if (const detail::Json* rank = json.find("rank"); rank && rank->is_object()) report.rank = rank_from_json(*rank);

  for (const detail::Json& entry : json["nodes"].elements()) {
    ScopeNode node;
    node.path = entry["path"].as_string();
    node.name = entry["name"].as_string();
    node.parent = static_cast<int>(entry["parent"].as_int64());
    node.depth = static_cast<int>(entry["depth"].as_int64());
    node.count = detail::integer_of<std::uint64_t>(entry, "count");
    if (entry.contains("open_instances")) node.open_instances = detail::integer_of<std::uint64_t>(entry, "open_instances");
    node.host_ms = detail::summary_from_json(entry["host_ms"]);
    node.gpu_ms = detail::summary_from_json(entry["gpu_ms"]);
    const detail::Json& work = entry["work"];
    node.work = {work["flops"].as_number(), work["bytes"].as_number(), work["tokens"].as_number()};
    const detail::Json& peak = entry["peak_device_bytes"];
    node.peak_device_bytes = peak.is_null() ? -1 : peak.as_int64();
    if (node.parent >= static_cast<int>(report.nodes.size()))
      throw Error("node " + node.path + " names a parent that does not come before it");
    report.nodes.push_back(std::move(node));
  }
  for (const detail::Json& entry : json["instances"].elements()) {
    ScopeInstance instance;
    instance.id = detail::integer_of<std::uint64_t>(entry, "id");
    instance.node = static_cast<int>(entry["node"].as_int64());
    instance.thread = detail::integer_of<std::uint32_t>(entry, "thread");
    instance.host_begin_ns = entry["host_begin_ns"].as_int64();
    instance.host_end_ns = entry["host_end_ns"].as_int64();
    instance.gpu_ms = detail::number_or(entry, "gpu_ms", -1);
    report.instances.push_back(instance);
  }
  for (const detail::Json& entry : json["kernels"].elements()) report.kernels.push_back(detail::kernel_from_json(entry));
  report.dropped_kernel_records = detail::integer_of<std::uint64_t>(json, "dropped_kernel_records");
  if (json.contains("warmup_instances_left_out"))
    report.warmup_instances_left_out = detail::integer_of<std::uint64_t>(json, "warmup_instances_left_out");
  if (const detail::Json* timeline = json.find("memory_timeline"))
    report.memory_timeline = detail::memory_timeline_from_json(*timeline);
  return report;
}

// Reads a report file; errors name the path.
inline Report read_report_json(const std::string& path) {
  const detail::Json json = detail::parse_json_file(path);
  try {
    return report_from_json(json);
  } catch (const Error& error) {
    throw Error(path + ": " + error.what());
  }
}

GPUPROF_NAMESPACE_END
