// gpuprof/report/scope_counters.hpp: a report's hardware counters per scope
// node, as the writers show them (table, CSV, JSON, HTML, roofline picture).
//
// A node's counters are the CounterRange named by its path. Their values are
// totals over the node's instances in the run the report covers
// (CounterCapture::measure() gives those of one run of the work, so the
// report must cover one run), and the declared work, which is per instance,
// is checked against the measured totals divided by the node's count.
#pragma once
#include <cstddef>
#include <string>
#include <vector>

#include "../table.hpp"
#include "../report_model.hpp"

GPUPROF_NAMESPACE_BEGIN

struct ScopeCounters {
  const CounterRange* range = nullptr;  // nullptr: no counters for this node
  RangeMeasures measured;
  RooflinePlacement placement;
  WorkCheck flops;  // declared Work::flops vs measured, per instance
  WorkCheck bytes;  // declared Work::bytes vs measured DRAM bytes, per instance
};

inline const CounterRange* find_counter_range(const std::vector<CounterRange>& ranges,
                                              const std::string& name) {
  for (const CounterRange& range : ranges)
    if (range.name == name) return &range;
  return nullptr;
}

inline ScopeCounters scope_counters(const Report& report, std::size_t node_index) {
  const ScopeNode& node = report.nodes.at(node_index);
  ScopeCounters c;
  c.range = find_counter_range(report.counters.scopes, node.path);
  if (c.range == nullptr) return c;
  c.measured = measure_range(*c.range);
  c.placement = place_on_roofline(c.measured, report.ceilings);
  if (node.count > 0) {
    const double n = static_cast<double>(node.count);
    c.flops = {node.work.flops, c.measured.flops / n};
    c.bytes = {node.work.bytes, c.measured.dram_bytes / n};
  }
  return c;
}

namespace detail {

inline const std::vector<std::string>& counter_table_headers() {
  static const std::vector<std::string> headers = {"DRAM GB", "FLOP/B",   "TFLOP/s meas", "% roof",
                                                   "bound",   "L2 hit %", "occupancy %"};
  return headers;
}

// One cell per counter_table_headers() entry; "-" where unknown.
inline std::vector<std::string> counter_table_cells(const ScopeCounters& c) {
  if (c.range == nullptr) return std::vector<std::string>(counter_table_headers().size(), "-");
  const RangeMeasures& m = c.measured;
  const auto known = [](double value, double scale) {
    return value >= 0 ? format_significant(value / scale) : "-";
  };
  return {known(m.dram_bytes, 1e9),
          m.intensity() > 0 ? format_significant(m.intensity()) : "-",
          m.flop_per_s() > 0 ? format_significant(m.flop_per_s() / 1e12) : "-",
          c.placement.percent_of_roof >= 0 ? format_fixed(c.placement.percent_of_roof, 1) : "-",
          c.placement.bound == Bound::unknown ? "-" : bound_name(c.placement.bound),
          m.l2_hit_pct >= 0 ? format_fixed(m.l2_hit_pct, 1) : "-",
          m.occupancy_pct >= 0 ? format_fixed(m.occupancy_pct, 1) : "-"};
}

// The CSV columns after the timing ones, and their fields for one node:
// shortest exact decimals, empty where unknown.
inline std::vector<std::string> with_counter_csv_columns(std::vector<std::string> columns) {
  for (const char* name : {"dram_bytes", "measured_flops", "measured_flops_per_byte", "measured_flop_per_s",
                           "percent_of_roof", "bound", "l2_hit_pct", "occupancy_pct",
                           "declared_flops_difference_pct", "declared_bytes_difference_pct"})
    columns.emplace_back(name);
  return columns;
}

inline std::vector<std::string> counter_csv_fields(const ScopeCounters& c) {
  if (c.range == nullptr) return std::vector<std::string>(10);
  const RangeMeasures& m = c.measured;
  const auto known = [](double value, bool is_known) {
    return is_known ? shortest_decimal(value) : std::string();
  };
  return {known(m.dram_bytes, m.dram_bytes >= 0),
          known(m.flops, m.flops >= 0),
          known(m.intensity(), m.intensity() > 0),
          known(m.flop_per_s(), m.flop_per_s() > 0),
          known(c.placement.percent_of_roof, c.placement.percent_of_roof >= 0),
          c.placement.bound == Bound::unknown ? "" : bound_name(c.placement.bound),
          known(m.l2_hit_pct, m.l2_hit_pct >= 0),
          known(m.occupancy_pct, m.occupancy_pct >= 0),
          known(c.flops.difference_pct(), c.flops.known()),
          known(c.bytes.difference_pct(), c.bytes.known())};
}

inline std::string work_check_remark(const std::string& path, const char* what, const WorkCheck& check) {
  return path + " declares " + format_significant(check.declared) + " " + what +
         " per call, counters measured " + format_significant(check.measured) + " (" +
         (check.difference_pct() > 0 ? "+" : "") + format_fixed(check.difference_pct(), 1) + " %, over the " +
         format_fixed(100 * declared_work_tolerance, 0) + " % tolerance)";
}

// "ceilings: table: NVIDIA H200 data sheet", or why the roofline has none.
inline std::string ceilings_remark(const RooflineCeilings& ceilings) {
  if (ceilings.empty())
    return "no ceilings (" + (ceilings.source.empty() ? std::string("none given") : ceilings.source) +
           "), so no roofline placement";
  return "ceilings: " + (ceilings.source.empty() ? std::string("source not stated") : ceilings.source);
}

// Lines under the table: how the counters were collected, why they are
// missing, and every declared Work that the counters contradict.
inline std::vector<std::string> counter_remarks(const Report& report) {
  std::vector<std::string> remarks;
  const CounterSet& set = report.counters;
  if (!set.empty())
    remarks.push_back("counters: " + std::to_string(set.metrics.size()) + " metric(s) in " +
                      std::to_string(set.passes) + " replay pass(es)" +
                      (set.chip.empty() ? "" : " on " + set.chip) + "; " + ceilings_remark(report.ceilings));
  if (!set.note.empty()) remarks.push_back("counters: " + set.note);
  for (std::size_t i = 0; i < report.nodes.size(); ++i) {
    const ScopeCounters c = scope_counters(report, i);
    if (c.flops.flagged()) remarks.push_back(work_check_remark(report.nodes[i].path, "FLOPs", c.flops));
    if (c.bytes.flagged())
      remarks.push_back(work_check_remark(report.nodes[i].path, "bytes (DRAM)", c.bytes));
  }
  return remarks;
}

}  // namespace detail

GPUPROF_NAMESPACE_END
