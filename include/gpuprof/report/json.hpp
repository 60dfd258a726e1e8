// gpuprof/report/json.hpp: to_json and write_json, the machine-readable report.
//
// Schema "gpuprof.report", version 2 (a summary's samples may be a uniform
// sample of n, with a quantile sketch; the instances may be the newest of
// recorded_instances, the kernels the newest of recorded_kernels with
// kernel_aggregates over all of them); every field is documented in docs/report-schema.md. Within a version
// fields are only ever added, so a reader may ignore keys it does not know. Values JSON cannot express (an
// infinite cv) and unknown values (a root's share of its parent, an unmeasured peak) are null.
#pragma once
#include <algorithm>
#include <cstdint>
#include <string>

#include "../atomic_file.hpp"
#include "../json_writer.hpp"
#include "counters_json.hpp"
#include "environment_json.hpp"
#include "../report_model.hpp"
#include "schema_versions.hpp"

GPUPROF_NAMESPACE_BEGIN

namespace detail {
inline void write_sketch_json(JsonWriter& json, const QuantileSketch& sketch) {
  json.begin_object(JsonWriter::one_line);
  json.member("relative_error", sketch.relative_error()).member("zero_count", sketch.zero_count());
  json.key("buckets").begin_array(JsonWriter::one_line);
  for (const auto& [index, count] : sketch.buckets())
    json.begin_array(JsonWriter::one_line).value(index).value(count).end_array();
  json.end_array().end_object();
}
}  // namespace detail

// A Summary as a JSON object (all fields; the samples as "samples_ms",
// ascending). Public so that benchmarks write their summaries the same way.
inline void write_summary_json(JsonWriter& json, const Summary& s) {
  json.begin_object()
      .member("n", s.n)
      .member("mean", s.mean)
      .member("stddev", s.stddev)
      .member("min", s.min)
      .member("max", s.max)
      .member("median", s.median)
      .member("q1", s.q1)
      .member("q3", s.q3)
      .member("iqr", s.iqr)
      .member("p10", s.percentile(10))
      .member("p90", s.percentile(90))
      .member("cv", s.cv)
      .member("ci95_low", s.ci95_low)
      .member("ci95_high", s.ci95_high)
      .member("outliers", s.outliers)
      .member("unstable", s.unstable)
      .member("unstable_reason", s.unstable_reason)
      .member("note", s.note)
      .member("discarded", s.discarded)
      .key("samples_ms")
      .begin_array(JsonWriter::one_line);
  for (double sample : s.sorted) json.value(sample);
  json.end_array();
  if (!s.exact()) {  // samples_ms is a uniform sample of n: the sketch holds the quantiles
    json.member("estimated", s.estimated).key("sketch");
    detail::write_sketch_json(json, s.sketch);
  }
  json.end_object();
}

namespace detail {
// One kernel aggregate (Report::kernel_aggregates): exact figures in integer
// nanoseconds, the durations' sketch for the median.
inline void write_kernel_aggregate_json(JsonWriter& json, const KernelAggregate& a) {
  const Summary durations = a.durations_ns.summary();
  json.begin_object(JsonWriter::one_line)
      .member("scope_path", a.scope_path)
      .member("kind", activity_kind_name(a.kind))
      .member("name", a.name)
      .member("base_name", a.base_name)
      .member("category", a.category)
      .member("count", a.count)
      .member("total_ns", a.total_ns)
      .member("min_ns", a.min_ns)
      .member("max_ns", a.max_ns)
      .member("mean_ns", durations.mean)
      .member("stddev_ns", durations.stddev)
      .key("sketch");
  write_sketch_json(json, a.durations_ns.sketch());
  json.end_object();
}

// null for the "not known" sentinels (negative or zero), the value otherwise.
template <class Number>
void write_known(JsonWriter& json, const char* key, Number value, bool known) {
  json.key(key);
  if (known) json.value(value);
  else json.value(nullptr);
}

inline void write_node_json(JsonWriter& json, const Report& report, std::size_t index) {
  const ScopeNode& node = report.nodes[index];
  const double share = report.percent_of_parent(index);
  json.begin_object()
      .member("index", index)
      .member("path", node.path)
      .member("name", node.name)
      .member("parent", node.parent)
      .member("depth", node.depth)
      .member("count", node.count)
      .member("open_instances", node.open_instances)
      .member("timing",
              timing_source_name(node.gpu_timed() ? TimingSource::cuda_events : TimingSource::host_clock))
      .member("total_ms", node.total_ms());
  write_known(json, "percent_of_parent", share, share >= 0);
  json.key("host_ms");
  write_summary_json(json, node.host_ms);
  json.key("gpu_ms");
  if (node.gpu_timed()) write_summary_json(json, node.gpu_ms);
  else json.value(nullptr);
  json.key("work")
      .begin_object(JsonWriter::one_line)
      .member("flops", node.work.flops)
      .member("bytes", node.work.bytes)
      .member("tokens", node.work.tokens)
      .end_object();
  json.key("rates").begin_object(JsonWriter::one_line);
  write_known(json, "tflop_per_s", node.tflop_per_s(), node.tflop_per_s() > 0);
  write_known(json, "gb_per_s", node.gb_per_s(), node.gb_per_s() > 0);
  write_known(json, "tokens_per_s", node.tokens_per_s(), node.tokens_per_s() > 0);
  write_known(json, "flops_per_byte", node.flops_per_byte(), node.flops_per_byte() > 0);
  json.end_object();
  write_known(json, "peak_device_bytes", node.peak_device_bytes, node.peak_device_bytes >= 0);
  write_known(json, "peak_allocated_bytes", node.peak_allocated_bytes, node.peak_allocated_bytes >= 0);
  write_known(json, "reserved_bytes", node.reserved_bytes, node.reserved_bytes >= 0);
  write_known(json, "cold_ms", node.cold_ms, node.cold_ms >= 0);
  json.key("counters");
  write_scope_counters_json(json, report, index);
  json.end_object();
}

inline void write_kernel_json(JsonWriter& json, const KernelRecord& k) {
  json.begin_object(JsonWriter::one_line)
      .member("kind", activity_kind_name(k.kind))
      .member("name", k.name)
      .member("base_name", k.base_name)
      .member("category", k.category)
      .member("start_ns", k.start_ns)
      .member("end_ns", k.end_ns)
      .member("duration_ns", k.duration_ns())
      .member("launch_ns", k.launch_ns)
      .member("device", k.device)
      .member("stream", k.stream)
      .member("correlation_id", k.correlation_id)
      .member("scope_instance", k.scope_instance)
      .member("scope_node", k.scope_node)
      .member("graph_node_id", k.graph_node_id)
      .member("graph_launch", k.graph_launch);
  json.key("grid").begin_array();
  for (std::uint32_t extent : k.grid) json.value(extent);
  json.end_array().key("block").begin_array();
  for (std::uint32_t extent : k.block) json.value(extent);
  json.end_array()
      .member("registers_per_thread", k.registers_per_thread)
      .member("shared_bytes", k.shared_bytes)
      .member("bytes", k.bytes)
      .end_object();
}

inline void write_memory_timeline_json(JsonWriter& json, const MemoryTimeline& timeline) {
  json.begin_object().key("in_use").begin_array();
  for (const MemoryUsePoint& point : timeline.in_use)
    json.begin_array(JsonWriter::one_line).value(point.time_ns).value(point.bytes_in_use).end_array();
  json.end_array().key("allocations").begin_array();
  for (const TimelineAllocation& allocation : timeline.allocations) {
    json.begin_object(JsonWriter::one_line)
        .member("address", allocation.address)
        .member("bytes", allocation.bytes)
        .member("alloc_ns", allocation.alloc_ns);
    write_known(json, "free_ns", allocation.free_ns, allocation.free_ns >= 0);
    json.member("scope_instance", allocation.scope_instance)
        .member("scope", allocation.scope_path)
        .member("from_pool", allocation.from_pool)
        .end_object();
  }
  json.end_array().end_object();
}
}  // namespace detail

// The whole report as JSON text (what write_json writes; the HTML page embeds it).
inline std::string to_json(const Report& report) {
  JsonWriter json;
  json.begin_object()
      .member("schema", "gpuprof.report")
      .member("version", report_json_version)
      .member("gpuprof_version", std::to_string(GPUPROF_VERSION_MAJOR) + "." +
                                     std::to_string(GPUPROF_VERSION_MINOR) + "." +
                                     std::to_string(GPUPROF_VERSION_PATCH))
      .member("timing_source", timing_source_name(report.timing_source))
      .member("timing_note", report.timing_note)
      .member("device", report.device_name);
  json.key("environment");
  write_environment_json(json, report.environment);
  json.key("rank");
  write_rank_json(json, report.rank);
  const auto& nodes = report.nodes;
  const auto& instances = report.instances;
  const auto& kernels = report.kernels;

  json.key("nodes").begin_array();
  for (std::size_t i = 0; i < nodes.size(); ++i) detail::write_node_json(json, report, i);
  json.end_array();

  json.key("instances").begin_array();
  for (const ScopeInstance& instance : instances) {
    json.begin_object(JsonWriter::one_line)
        .member("id", instance.id)
        .member("node", instance.node)
        .member("thread", instance.thread)
        .member("host_begin_ns", instance.host_begin_ns)
        .member("host_end_ns", instance.host_end_ns);
    detail::write_known(json, "gpu_ms", instance.gpu_ms, instance.gpu_ms >= 0);
    json.end_object();
  }
  json.end_array();
  // The instances above are the newest of recorded_instances (Report::trace_note).
  json.member("recorded_instances", std::max<std::uint64_t>(report.recorded_instances, instances.size()))
      .member("trace_note", report.trace_note());

  json.key("kernels").begin_array();
  for (const KernelRecord& kernel : kernels) detail::write_kernel_json(json, kernel);
  json.end_array();
  // The kernels above are the newest of recorded_kernels (Report::kernel_note);
  // where records left that window, the aggregates cover all of them.
  json.member("recorded_kernels", std::max<std::uint64_t>(report.recorded_kernels, kernels.size()))
      .member("kernel_note", report.kernel_note());
  if (report.kernels_cut()) {
    json.key("kernel_aggregates").begin_array();
    for (const KernelAggregate& aggregate : report.kernel_aggregates)
      detail::write_kernel_aggregate_json(json, aggregate);
    json.end_array();
  }
  json.member("dropped_kernel_records", report.dropped_kernel_records)
      .member("warmup_instances_left_out", report.warmup_instances_left_out)
      .member("warmup_root_instances", report.warmup_root_instances)
      .key("memory_timeline");
  detail::write_memory_timeline_json(json, report.memory_timeline);
  json.key("counters");
  write_counter_set_json(json, report.counters);
  json.key("ceilings");
  write_ceilings_json(json, report.ceilings);
  json.end_object();
  return json.str() + "\n";
}

inline void write_json(const Report& report, const std::string& path) {
  write_file_atomically(path, to_json(report));
}

GPUPROF_NAMESPACE_END
