// gpuprof/report/counters_json.hpp: hardware counters in the report's JSON
// (docs/report-schema.md): the raw CounterSet and the ceilings at the top
// level, which read_json.hpp reads back, and per node what the writers
// derive from them (scope_counters.hpp), for the HTML page and for readers
// that do not want to redo the arithmetic. Each function writes one JSON
// value into a JsonWriter, so a program's own document can embed them in the
// report's own shape.
#pragma once
#include <algorithm>
#include <cstddef>
#include <string>
#include <utility>
#include <vector>

#include "../json_writer.hpp"
#include "../report_model.hpp"
#include "scope_counters.hpp"

GPUPROF_NAMESPACE_BEGIN

namespace detail {

// A value, or null when it is negative (unknown: the "not collected" of RangeMeasures).
inline void write_measured(JsonWriter& json, const char* key, double value) {
  json.key(key);
  if (value >= 0) json.value(value);
  else json.value(nullptr);
}

inline void write_counter_range_json(JsonWriter& json, const CounterRange& range) {
  json.begin_object(JsonWriter::one_line)
      .member("name", range.name)
      .key("values")
      .begin_object(JsonWriter::one_line);
  // A metric named twice would make the object unreadable (duplicate keys); the first wins, as in find().
  std::vector<std::string> written;
  for (const MetricValue& v : range.values) {
    if (std::find(written.begin(), written.end(), v.metric) != written.end()) continue;
    written.push_back(v.metric);
    json.member(v.metric.c_str(), v.value);
  }
  json.end_object().end_object();
}

}  // namespace detail

// The CounterSet as the report's top-level "counters" object.
inline void write_counter_set_json(JsonWriter& json, const CounterSet& set) {
  json.begin_object().key("metrics").begin_array(JsonWriter::one_line);
  for (const std::string& name : set.metrics) json.value(name);
  json.end_array().member("passes", set.passes).member("chip", set.chip).member("note", set.note);
  json.key("scopes").begin_array();
  for (const CounterRange& range : set.scopes) detail::write_counter_range_json(json, range);
  json.end_array().key("kernels").begin_array();
  for (const CounterRange& range : set.kernels) detail::write_counter_range_json(json, range);
  json.end_array().end_object();
}

inline void write_ceilings_json(JsonWriter& json, const RooflineCeilings& ceilings) {
  json.begin_object().member("dram_bytes_per_s", ceilings.dram_bytes_per_s).key("pipes").begin_array();
  for (const PipeCeiling& c : ceilings.pipes)
    json.begin_object(JsonWriter::one_line)
        .member("pipe", c.pipe)
        .member("flop_per_s", c.flop_per_s)
        .end_object();
  json.end_array().member("source", ceilings.source).end_object();
}

// A node's derived counter values, or null when the node has no counters.
inline void write_scope_counters_json(JsonWriter& json, const Report& report, std::size_t node) {
  const ScopeCounters c = scope_counters(report, node);
  if (c.range == nullptr) {
    json.value(nullptr);
    return;
  }
  const RangeMeasures& m = c.measured;
  json.begin_object(JsonWriter::one_line);
  detail::write_measured(json, "dram_bytes", m.dram_bytes);
  detail::write_measured(json, "flops", m.flops);
  detail::write_measured(json, "flops_per_byte", m.intensity() > 0 ? m.intensity() : -1);
  detail::write_measured(json, "flop_per_s", m.flop_per_s() > 0 ? m.flop_per_s() : -1);
  detail::write_measured(json, "l2_hit_pct", m.l2_hit_pct);
  detail::write_measured(json, "occupancy_pct", m.occupancy_pct);
  json.member("pipe", c.placement.pipe).member("bound", bound_name(c.placement.bound));
  detail::write_measured(json, "roof_flop_per_s",
                         c.placement.roof_flop_per_s > 0 ? c.placement.roof_flop_per_s : -1);
  detail::write_measured(json, "percent_of_roof", c.placement.percent_of_roof);
  // Negative differences are real (less declared than measured): null only when unknown.
  for (const auto& [key, check] : {std::pair{"declared_flops_difference_pct", c.flops},
                                   std::pair{"declared_bytes_difference_pct", c.bytes}}) {
    json.key(key);
    if (check.known()) json.value(check.difference_pct());
    else json.value(nullptr);
  }
  json.member("declared_work_flagged", c.flops.flagged() || c.bytes.flagged()).end_object();
}

GPUPROF_NAMESPACE_END
