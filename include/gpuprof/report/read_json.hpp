// gpuprof/report/read_json.hpp: a Report back from the JSON write_json wrote,
// so tools (gpuprof-compare, gpuprof-report) work on files the same way the
// library works on reports in memory.
//
// ```cpp
// #include <gpuprof/report/read_json.hpp>
// gpuprof::Report load() { return gpuprof::read_report_json("profile.json"); }  // gpuprof::InputError if bad
// ```
//
// Statistics are recomputed from each summary's samples (summarize() on
// samples_ms), so a report read back has the same numbers it was written
// with; a summary of more instances than its samples (version 2, with a
// "sketch") keeps its exact figures and reads its quantiles from the sketch. Keys added in later writers
// (environment, rank, memory_timeline, counters, ceilings) are optional: older files read with those parts
// empty. A file that is not a gpuprof report of a supported version, or whose values contradict each other (a
// parent after its child, a depth its place in the tree does not give, an index outside its array, an end
// before its begin, a negative count), throws gpuprof::InputError; so do the reader's limits
// (detail/json_reader.hpp, input_limits.hpp).
#pragma once
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include "../detail/json_reader.hpp"
#include "../error.hpp"
#include "environment_json.hpp"
#include "../online_summary.hpp"
#include "../report_model.hpp"
#include "schema_versions.hpp"

GPUPROF_NAMESPACE_BEGIN

namespace detail {

// Time stamps a report may hold: steady_clock nanoseconds, from 0 to 2^62
// (146 years), so that differences and sums of a few of them fit int64.
inline constexpr std::int64_t max_time_ns = std::int64_t{1} << 62;
// The longest activity record (kernel, copy, memset) a report may hold: an
// hour. Kernel summaries add record durations up in int64: about 1.2 million
// hour-long records would overflow it, and the default input limit (64 MiB)
// admits about 400,000 records. A limit raised past about 200 MiB needs
// durations that short.
inline constexpr std::int64_t max_activity_ns = std::int64_t{3'600'000'000'000};

// A value a reader refuses: `what` it is and why.
inline void require(bool valid, const std::string& what) {
  if (!valid) throw InputError(what);
}

// `read(value)` for the member `key`; a value of the wrong type or range is
// an error that names the member.
template <class Read>
auto read_member(const Json& value, const char* key, Read read) -> decltype(read(value)) {
  try {
    return read(value);
  } catch (const InputError& error) {
    throw InputError(std::string(key) + ": " + error.what());
  }
}

// An optional member: nullptr when absent or null, the value otherwise.
inline const Json* optional_member(const Json& object, const char* key) {
  const Json* value = object.find(key);
  return value && !value->is_null() ? value : nullptr;
}

inline const std::string& string_of(const Json& object, const char* key) {
  return read_member(object[key], key,
                     [](const Json& value) -> const std::string& { return value.as_string(); });
}

// An optional number: `fallback` when absent or null, an error when of another type.
inline double number_or(const Json& object, const char* key, double fallback) {
  const Json* value = optional_member(object, key);
  return value ? read_member(*value, key, [](const Json& v) { return v.as_number(); }) : fallback;
}

template <class Integer>
Integer integer_of(const Json& object, const char* key) {
  return read_member(object[key], key, [](const Json& value) { return value.as_integer<Integer>(); });
}

// An optional integer member: `fallback` when absent or null, an error when of another type.
template <class Integer>
Integer integer_or(const Json& object, const char* key, Integer fallback) {
  const Json* value = optional_member(object, key);
  return value ? read_member(*value, key, [](const Json& v) { return v.as_integer<Integer>(); }) : fallback;
}

// A quantile sketch of `n` values.
inline QuantileSketch sketch_from_json(const Json& buckets, std::uint64_t n, const std::string& key) {
  QuantileSketch read;
  try {  // the sketch's own checks: a relative error in (0, 0.5), indices in range
    read = QuantileSketch(buckets["relative_error"].as_number());
    read.add_zeros(integer_of<std::uint64_t>(buckets, "zero_count"));
    for (const Json& bucket : buckets["buckets"].elements()) {
      const std::vector<Json>& pair = bucket.elements();
      require(pair.size() == 2, key + ": a sketch bucket is [index, count]");
      const std::int64_t index = std::clamp<std::int64_t>(pair[0].as_int64(), QuantileSketch::min_index - 1,
                                                          QuantileSketch::max_index + 1);
      const std::int64_t count = pair[1].as_int64();
      require(count > 0 && static_cast<std::uint64_t>(count) <= n,
              key + ": a sketch bucket's count is not in 1..n");
      read.add_bucket(static_cast<int>(index), static_cast<std::uint64_t>(count));
    }
  } catch (const std::invalid_argument& error) {
    throw InputError(key + ": " + error.what());
  }
  require(read.count() == n, key + ": the sketch counts " + std::to_string(read.count()) + " samples, n is " +
                                 std::to_string(n));
  return read;
}

// Durations in milliseconds: finite and never negative.
inline Summary summary_from_json(const Json& json, const char* key) {
  if (json.is_null()) return {};
  std::vector<double> samples;
  for (const Json& sample : read_member(json, key, [](const Json& value) -> const std::vector<Json>& {
         return value["samples_ms"].elements();
       })) {
    const double ms = read_member(sample, key, [](const Json& value) { return value.as_number(); });
    require(ms >= 0, std::string(key) + ": sample " + shortest_decimal(ms) + " ms is negative");
    samples.push_back(ms);
  }
  const Json* sketch = json.find("sketch");
  if (!sketch) return summarize(std::move(samples));
  // Version 2's estimated summary: samples_ms is a uniform sample of n, the
  // exact figures are as written, the sketch holds the quantiles.
  return read_member(json, key, [&](const Json& value) {
    Summary s;
    s.n = integer_of<std::size_t>(value, "n");
    s.discarded = integer_of<std::size_t>(value, "discarded");
    s.mean = value["mean"].as_number();
    s.stddev = value["stddev"].as_number();
    s.min = value["min"].as_number();
    s.max = value["max"].as_number();
    require(s.n > samples.size() && !samples.empty(),
            std::string(key) + ": a sketch needs a non-empty sample of more than its samples");
    require(std::isfinite(s.mean) && std::isfinite(s.stddev) && s.stddev >= 0 && s.min >= 0 &&
                s.min <= s.mean && s.mean <= s.max && std::isfinite(s.max),
            std::string(key) + ": mean, stddev, min and max contradict each other");
    s.sketch = sketch_from_json(value["sketch"], s.n, key);
    s.sorted = samples;
    s.estimated = value["estimated"].as_string();
    return OnlineSamples::from_summary(s).summary();
  });
}

// A non-negative amount of work (flops, bytes, tokens).
inline double work_of(const Json& object, const char* key) {
  const double value = read_member(object[key], key, [](const Json& v) { return v.as_number(); });
  require(value >= 0, std::string("work ") + key + " " + shortest_decimal(value) + " is negative");
  return value;
}

// A member holding a time stamp (or a size) from 0 to max_time_ns.
inline std::int64_t time_of(const Json& object, const char* key) {
  const std::int64_t value = integer_of<std::int64_t>(object, key);
  require(value >= 0 && value <= max_time_ns,
          std::string(key) + " " + std::to_string(value) + " is outside 0 .. 2^62");
  return value;
}

// `end` at or after `begin`, or the record is refused.
inline void require_order(std::int64_t begin, std::int64_t end, const std::string& what) {
  require(begin <= end,
          what + " ends (" + std::to_string(end) + ") before it begins (" + std::to_string(begin) + ")");
}

inline ActivityKind activity_kind_from_name(const std::string& name) {
  for (const ActivityKind kind : {ActivityKind::kernel, ActivityKind::memcpy, ActivityKind::memset})
    if (name == activity_kind_name(kind)) return kind;
  throw InputError("kind \"" + name + "\" is none of kernel, memcpy, memset");
}

inline TimingSource timing_source_from_name(const std::string& name) {
  for (const TimingSource source : {TimingSource::cuda_events, TimingSource::host_clock})
    if (name == timing_source_name(source)) return source;
  throw InputError("timing_source \"" + name + "\" is neither cuda_events nor host_clock");
}

// `node_count`: the report's nodes, which scope_node indexes.
inline KernelRecord kernel_from_json(const Json& json, std::size_t node_count) {
  KernelRecord kernel;
  kernel.kind = activity_kind_from_name(string_of(json, "kind"));
  kernel.name = string_of(json, "name");
  kernel.base_name = string_of(json, "base_name");
  kernel.category = string_of(json, "category");
  kernel.start_ns = time_of(json, "start_ns");
  kernel.end_ns = time_of(json, "end_ns");
  require_order(kernel.start_ns, kernel.end_ns, "kernel " + kernel.name);
  require(kernel.duration_ns() <= max_activity_ns, "kernel " + kernel.name + " lasts longer than an hour");
  kernel.launch_ns = time_of(json, "launch_ns");
  kernel.device = integer_of<std::uint32_t>(json, "device");
  kernel.stream = integer_of<std::uint32_t>(json, "stream");
  kernel.correlation_id = integer_of<std::uint32_t>(json, "correlation_id");
  kernel.scope_instance = integer_of<std::uint64_t>(json, "scope_instance");
  kernel.scope_node = integer_or<int>(json, "scope_node", -1);
  require(kernel.scope_node >= -1 && kernel.scope_node < static_cast<std::int64_t>(node_count),
          "kernel " + kernel.name + " names scope node " + std::to_string(kernel.scope_node) + " of " +
              std::to_string(node_count));
  kernel.graph_node_id = integer_or<std::uint64_t>(json, "graph_node_id", 0);
  kernel.graph_launch = integer_or<std::uint32_t>(json, "graph_launch", 0);
  for (int i = 0; i < 3; ++i) {
    kernel.grid[i] = json["grid"][i].as_integer<std::uint32_t>();
    kernel.block[i] = json["block"][i].as_integer<std::uint32_t>();
  }
  kernel.registers_per_thread = integer_of<std::uint32_t>(json, "registers_per_thread");
  kernel.shared_bytes = integer_of<std::uint32_t>(json, "shared_bytes");
  kernel.bytes = integer_of<std::uint64_t>(json, "bytes");
  return kernel;
}

inline KernelAggregate kernel_aggregate_from_json(const Json& json) {
  KernelAggregate a;
  a.scope_path = string_of(json, "scope_path");
  a.kind = activity_kind_from_name(string_of(json, "kind"));
  a.name = string_of(json, "name");
  a.base_name = string_of(json, "base_name");
  a.category = string_of(json, "category");
  a.count = integer_of<std::uint64_t>(json, "count");
  a.total_ns = integer_of<std::int64_t>(json, "total_ns");
  a.min_ns = integer_of<std::int64_t>(json, "min_ns");
  a.max_ns = integer_of<std::int64_t>(json, "max_ns");
  const std::string what = "kernel aggregate " + a.name + " in '" + a.scope_path + "'";
  require(a.count > 0 && a.min_ns >= 0 && a.min_ns <= a.max_ns && a.max_ns <= max_activity_ns &&
              a.total_ns >= a.min_ns && a.total_ns <= max_time_ns &&
              static_cast<double>(a.total_ns) <= static_cast<double>(a.max_ns) * static_cast<double>(a.count),
          what + ": count, total, min and max contradict each other");
  Summary s;
  s.n = static_cast<std::size_t>(a.count);
  s.mean = json["mean_ns"].as_number();
  s.stddev = json["stddev_ns"].as_number();
  s.min = static_cast<double>(a.min_ns);
  s.max = static_cast<double>(a.max_ns);
  require(
      std::isfinite(s.mean) && std::isfinite(s.stddev) && s.stddev >= 0 && s.min <= s.mean && s.mean <= s.max,
      what + ": mean and stddev contradict min and max");
  s.estimated = "median from a sketch";
  s.sketch = sketch_from_json(json["sketch"], a.count, what);
  a.durations_ns = OnlineSamples::from_summary(s, 0);
  return a;
}

inline MemoryTimeline memory_timeline_from_json(const Json& json) {
  MemoryTimeline timeline;
  for (const Json& point : json["in_use"].elements()) {
    const std::int64_t time = point[0].as_int64(), bytes = point[1].as_int64();
    require(
        time >= 0 && time <= max_time_ns && bytes >= 0 && bytes <= max_time_ns,
        "memory in use [" + std::to_string(time) + ", " + std::to_string(bytes) + "] is outside 0 .. 2^62");
    timeline.in_use.push_back({time, bytes});
  }
  for (const Json& entry : json["allocations"].elements()) {
    TimelineAllocation allocation;
    allocation.address = integer_of<std::uint64_t>(entry, "address");
    allocation.bytes = time_of(entry, "bytes");
    allocation.alloc_ns = time_of(entry, "alloc_ns");
    allocation.free_ns = entry["free_ns"].is_null() ? -1 : time_of(entry, "free_ns");
    if (allocation.free_ns >= 0) require_order(allocation.alloc_ns, allocation.free_ns, "an allocation");
    allocation.scope_instance = integer_of<std::uint64_t>(entry, "scope_instance");
    allocation.scope_path = string_of(entry, "scope");
    allocation.from_pool =
        read_member(entry["from_pool"], "from_pool", [](const Json& v) { return v.as_bool(); });
    timeline.allocations.push_back(std::move(allocation));
  }
  return timeline;
}

// A node of the call tree, checked against the nodes before it: its parent
// comes earlier and its depth is one more than its parent's, so writers can
// indent by depth without trusting the file.
inline ScopeNode scope_node_from_json(const Json& entry, const std::vector<ScopeNode>& earlier) {
  ScopeNode node;
  node.path = string_of(entry, "path");
  node.name = string_of(entry, "name");
  node.parent = integer_of<int>(entry, "parent");
  require(node.parent >= -1 && node.parent < static_cast<std::int64_t>(earlier.size()),
          "node " + node.path + " names parent " + std::to_string(node.parent) + ", not an earlier node");
  node.depth = integer_of<int>(entry, "depth");
  const int expected_depth = node.parent < 0 ? 0 : earlier[static_cast<std::size_t>(node.parent)].depth + 1;
  require(node.depth == expected_depth, "node " + node.path + " has depth " + std::to_string(node.depth) +
                                            "; its place in the tree gives " +
                                            std::to_string(expected_depth));
  node.count = integer_of<std::uint64_t>(entry, "count");
  if (entry.contains("open_instances"))
    node.open_instances = integer_of<std::uint64_t>(entry, "open_instances");
  node.host_ms = summary_from_json(entry["host_ms"], "host_ms");
  node.gpu_ms = summary_from_json(entry["gpu_ms"], "gpu_ms");
  const Json& work = entry["work"];
  node.work = {work_of(work, "flops"), work_of(work, "bytes"), work_of(work, "tokens")};
  node.peak_device_bytes = integer_or<std::int64_t>(entry, "peak_device_bytes", -1);
  require(node.peak_device_bytes >= -1, "node " + node.path + " has a negative peak_device_bytes");
  node.peak_allocated_bytes = integer_or<std::int64_t>(entry, "peak_allocated_bytes", -1);
  require(node.peak_allocated_bytes >= -1, "node " + node.path + " has a negative peak_allocated_bytes");
  node.reserved_bytes = integer_or<std::int64_t>(entry, "reserved_bytes", -1);
  require(node.reserved_bytes >= -1, "node " + node.path + " has a negative reserved_bytes");
  if (const Json* cold = entry.find("cold_ms"); cold && !cold->is_null()) {
    node.cold_ms = cold->as_number();
    require(std::isfinite(node.cold_ms) && node.cold_ms >= 0,
            "node " + node.path + " has a negative or non-finite cold_ms");
  }
  return node;
}

inline ScopeInstance scope_instance_from_json(const Json& entry, std::size_t node_count) {
  ScopeInstance instance;
  instance.id = integer_of<std::uint64_t>(entry, "id");
  instance.node = integer_of<int>(entry, "node");
  require(instance.node >= 0 && instance.node < static_cast<std::int64_t>(node_count),
          "scope instance " + std::to_string(instance.id) + " names node " + std::to_string(instance.node) +
              " of " + std::to_string(node_count));
  instance.thread = integer_of<std::uint32_t>(entry, "thread");
  instance.host_begin_ns = time_of(entry, "host_begin_ns");
  instance.host_end_ns = time_of(entry, "host_end_ns");
  require_order(instance.host_begin_ns, instance.host_end_ns,
                "scope instance " + std::to_string(instance.id));
  instance.gpu_ms = number_or(entry, "gpu_ms", -1);
  require(instance.gpu_ms >= 0 || instance.gpu_ms == -1,
          "scope instance " + std::to_string(instance.id) + " has a negative gpu_ms");
  return instance;
}

// The counter set of a report; values must be finite numbers (null: the
// metric was not collected, left out), ranges of one kind named once.
inline CounterRange counter_range_from_json(const Json& entry) {
  CounterRange range;
  range.name = entry["name"].as_string();
  const Json& values = entry["values"];
  for (const std::string& metric : values.keys()) {
    const Json& value = values[metric];
    if (value.is_null()) continue;
    require(std::isfinite(value.as_number()), "counter " + metric + " of " + range.name + " is not finite");
    range.values.push_back({metric, value.as_number()});
  }
  return range;
}

inline std::vector<CounterRange> counter_ranges_from_json(const Json& array, const char* kind) {
  std::vector<CounterRange> ranges;
  std::set<std::string> names;
  for (const Json& entry : array.elements()) {
    ranges.push_back(counter_range_from_json(entry));
    require(names.insert(ranges.back().name).second,
            std::string("counters name the ") + kind + " " + ranges.back().name + " twice");
  }
  return ranges;
}

inline CounterSet counter_set_from_json(const Json& json) {
  CounterSet set;
  for (const Json& name : json["metrics"].elements()) set.metrics.push_back(name.as_string());
  set.passes = integer_of<int>(json, "passes");
  require(set.passes >= 0, "counters need a negative number of passes");
  set.chip = json["chip"].as_string();
  set.note = json["note"].as_string();
  set.scopes = counter_ranges_from_json(json["scopes"], "scope");
  set.kernels = counter_ranges_from_json(json["kernels"], "kernel");
  return set;
}

// A ceiling of 0 is "not known"; negative or non-finite ones are refused.
inline double ceiling_of(const Json& object, const char* key) {
  const double value = object[key].as_number();
  require(std::isfinite(value) && value >= 0, std::string("ceiling ") + key + " is negative or not finite");
  return value;
}

inline RooflineCeilings ceilings_from_json(const Json& json) {
  RooflineCeilings ceilings;
  ceilings.dram_bytes_per_s = ceiling_of(json, "dram_bytes_per_s");
  for (const Json& entry : json["pipes"].elements())
    ceilings.pipes.push_back({entry["pipe"].as_string(), ceiling_of(entry, "flop_per_s")});
  if (const Json* source = json.find("source")) ceilings.source = source->as_string();  // older files: none
  return ceilings;
}

}  // namespace detail

namespace detail {
// The report a parsed document holds; throws InputError for anything that
// is not a report of a supported version or that contradicts itself.
inline Report report_from_json(const Json& json) {
  if (!json.is_object() || !json.contains("schema") || json["schema"].as_string() != "gpuprof.report")
    throw InputError("not a gpuprof report (no \"schema\": \"gpuprof.report\")");
  const std::int64_t version = json["version"].as_int64();
  if (version < 1 || version > report_json_version)
    throw InputError("gpuprof report version " + std::to_string(version) +
                     " is not one this reader knows (1 to " + std::to_string(report_json_version) + ")");
  Report report;
  report.timing_source = timing_source_from_name(string_of(json, "timing_source"));
  report.timing_note = string_of(json, "timing_note");
  report.device_name = string_of(json, "device");
  if (const Json* env = optional_member(json, "environment"))
    report.environment =
        read_member(*env, "environment", [](const Json& value) { return environment_from_json(value); });
  if (const Json* rank = optional_member(json, "rank"))
    report.rank = read_member(*rank, "rank", [](const Json& value) { return rank_from_json(value); });

  // Rows are matched by path (compare, merge): a path given twice would
  // hide one of its rows.
  std::set<std::string> paths;
  for (const Json& entry : json["nodes"].elements()) {
    report.nodes.push_back(scope_node_from_json(entry, report.nodes));
    require(paths.insert(report.nodes.back().path).second,
            "two scope nodes have the path " + report.nodes.back().path);
  }
  for (const Json& entry : json["instances"].elements())
    report.instances.push_back(scope_instance_from_json(entry, report.nodes.size()));
  report.recorded_instances = report.instances.size();  // version 1: every instance
  if (json.contains("recorded_instances")) {
    report.recorded_instances = integer_of<std::uint64_t>(json, "recorded_instances");
    require(report.recorded_instances >= report.instances.size(),
            "recorded_instances is fewer than the instances the file holds");
  }
  for (const Json& entry : json["kernels"].elements())
    report.kernels.push_back(kernel_from_json(entry, report.nodes.size()));
  if (json.contains("recorded_kernels")) {  // else every record is in the file
    report.recorded_kernels = integer_of<std::uint64_t>(json, "recorded_kernels");
    require(report.recorded_kernels >= report.kernels.size(),
            "recorded_kernels is fewer than the kernels the file holds");
  }
  if (const Json* aggregates = json.find("kernel_aggregates")) {
    std::uint64_t counted = 0;
    for (const Json& entry : aggregates->elements()) {
      report.kernel_aggregates.push_back(kernel_aggregate_from_json(entry));
      counted += report.kernel_aggregates.back().count;
    }
    require(counted == report.recorded_kernels, "kernel_aggregates count " + std::to_string(counted) +
                                                    " records, recorded_kernels is " +
                                                    std::to_string(report.recorded_kernels));
  }
  require(!report.kernels_cut() || !report.kernel_aggregates.empty(),
          "recorded_kernels exceeds the kernels the file holds, and no kernel_aggregates cover them");
  report.dropped_kernel_records = integer_of<std::uint64_t>(json, "dropped_kernel_records");
  if (json.contains("warmup_instances_left_out"))
    report.warmup_instances_left_out = integer_of<std::uint64_t>(json, "warmup_instances_left_out");
  if (json.contains("warmup_root_instances"))
    report.warmup_root_instances = integer_of<std::uint64_t>(json, "warmup_root_instances");
  if (const Json* timeline = json.find("memory_timeline"))
    report.memory_timeline = memory_timeline_from_json(*timeline);
  if (const Json* counters = json.find("counters")) report.counters = counter_set_from_json(*counters);
  if (const Json* ceilings = json.find("ceilings")) report.ceilings = ceilings_from_json(*ceilings);
  return report;
}
}  // namespace detail

// Reads a report file; errors name the path, escaped as terminal_safe()
// writes it (names in them come from the file).
inline Report read_report_json(const std::string& path) {
  const detail::Json json = detail::parse_json_file(path);
  try {
    return detail::report_from_json(json);
  } catch (const Error& error) {
    throw InputError(terminal_safe(path + ": " + error.what()));
  }
}

GPUPROF_NAMESPACE_END
