// gpuprof/report/kernel_summary_writers.hpp: the kernel summaries (a list of
// KernelSummaryRow, ScopeKernelRow or ScopeGpuSummary) as CSV (nsys's column
// headers, so scripts written for `nsys stats --format csv` read them),
// markdown and JSON: to_csv, to_markdown, to_json, their write_ forms, and
// write(rows, path) by the extension; written whole or not at all.
//
// ```cpp
// #include <gpuprof/report/kernel_summary_writers.hpp>
// #include <iostream>
// void summarise(const gpuprof::Report& report) {
//   auto rows = gpuprof::kern_sum(report, "forward");
//   gpuprof::write(rows, "forward_kern_sum.csv");  // .csv, .md or .json
//   std::cout << gpuprof::to_markdown(rows);
// }
// ```
//
// JSON members (all times in nanoseconds, numbers at full precision):
//   {"kern_sum": [{"time_percent", "total_ns", "instances", "avg_ns", "median_ns",
//                  "min_ns", "max_ns", "stddev_ns", "name", "category"}, ...]}
//   {"scope_kern_sum": [{"range", "view", "scope_instances", <kern_sum members>}, ...]}
//   {"scope_gpu_summary": [{"path", "instances", "activities", "projection_ns",
//                           "summed_ns", "event_ms" (null when not GPU-timed),
//                           "categories": [{"category", "total_ns", "percent"}, ...]}, ...]}
#pragma once
#include <string>
#include <type_traits>
#include <vector>

#include "../atomic_file.hpp"
#include "../detail/file_format.hpp"
#include "../config.hpp"
#include "../error.hpp"
#include "../json_writer.hpp"
#include "../kernel_summary.hpp"
#include "../table.hpp"

GPUPROF_NAMESPACE_BEGIN

namespace detail {
inline std::vector<std::string> kern_sum_cells(const KernelSummaryRow& row) {
  // nsys prints percentages and ns averages with one decimal.
  return {format_fixed(row.time_percent, 1), std::to_string(row.total_ns),   std::to_string(row.instances),
          format_fixed(row.avg_ns, 1),       format_fixed(row.median_ns, 1), std::to_string(row.min_ns),
          std::to_string(row.max_ns),        format_fixed(row.stddev_ns, 1)};
}

inline void kern_sum_members(JsonWriter& json, const KernelSummaryRow& row) {
  json.member("time_percent", row.time_percent)
      .member("total_ns", row.total_ns)
      .member("instances", row.instances)
      .member("avg_ns", row.avg_ns)
      .member("median_ns", row.median_ns)
      .member("min_ns", row.min_ns)
      .member("max_ns", row.max_ns)
      .member("stddev_ns", row.stddev_ns)
      .member("name", row.name)
      .member("category", row.category);
}

inline const std::vector<std::string>& kern_sum_headers() {
  static const std::vector<std::string> headers = {"Time (%)", "Total Time (ns)", "Instances", "Avg (ns)",
                                                   "Med (ns)", "Min (ns)",        "Max (ns)",  "StdDev (ns)"};
  return headers;
}
}  // namespace detail

// nsys cuda_gpu_kern_sum's columns, in its order.
inline Table summary_table(const std::vector<KernelSummaryRow>& rows) {
  Table table;
  for (const std::string& header : detail::kern_sum_headers()) table.add_column({header, Align::right});
  table.add_column({"Name"});
  for (const KernelSummaryRow& row : rows) {
    std::vector<std::string> cells = detail::kern_sum_cells(row);
    cells.push_back(row.name);
    table.add_row(std::move(cells));
  }
  return table;
}

// nsys nvtx_kern_sum's layout: the range and its view first, then kern_sum's columns.
inline Table summary_table(const std::vector<ScopeKernelRow>& rows) {
  Table table({{"Range"}, {"View"}, {"Scope Instances", Align::right}});
  for (const std::string& header : detail::kern_sum_headers()) table.add_column({header, Align::right});
  table.add_column({"Kernel Name"});
  for (const ScopeKernelRow& row : rows) {
    std::vector<std::string> cells = {row.range, to_string(row.view), std::to_string(row.scope_instances)};
    for (std::string& cell : detail::kern_sum_cells(row.kernel)) cells.push_back(std::move(cell));
    cells.push_back(row.kernel.name);
    table.add_row(std::move(cells));
  }
  return table;
}

// One row per scope: times in ms, then each category's share in % of the summed GPU time.
inline Table summary_table(const std::vector<ScopeGpuSummary>& summaries) {
  Table table({{"Scope"},
               {"Instances", Align::right},
               {"Event (ms)", Align::right},
               {"GPU projection (ms)", Align::right},
               {"Summed GPU (ms)", Align::right}});
  if (!summaries.empty())
    for (const CategoryShare& share : summaries.front().categories)
      table.add_column({share.category + " (%)", Align::right});
  for (const ScopeGpuSummary& summary : summaries) {
    std::vector<std::string> cells = {
        summary.path, std::to_string(summary.instances),
        summary.event_ms < 0 ? std::string("-") : format_fixed(summary.event_ms, 3),
        format_fixed(static_cast<double>(summary.projection_ns) * 1e-6, 3),
        format_fixed(static_cast<double>(summary.summed_ns) * 1e-6, 3)};
    for (const CategoryShare& share : summary.categories) cells.push_back(format_fixed(share.percent, 1));
    table.add_row(std::move(cells));
  }
  return table;
}

inline std::string to_json(const std::vector<KernelSummaryRow>& rows) {
  JsonWriter json;
  json.begin_object().key("kern_sum").begin_array();
  for (const KernelSummaryRow& row : rows) {
    json.begin_object(JsonWriter::one_line);
    detail::kern_sum_members(json, row);
    json.end_object();
  }
  json.end_array().end_object();
  return json.str() + "\n";
}

inline std::string to_json(const std::vector<ScopeKernelRow>& rows) {
  JsonWriter json;
  json.begin_object().key("scope_kern_sum").begin_array();
  for (const ScopeKernelRow& row : rows) {
    json.begin_object(JsonWriter::one_line)
        .member("range", row.range)
        .member("view", to_string(row.view))
        .member("scope_instances", row.scope_instances);
    detail::kern_sum_members(json, row.kernel);
    json.end_object();
  }
  json.end_array().end_object();
  return json.str() + "\n";
}

inline std::string to_json(const std::vector<ScopeGpuSummary>& summaries) {
  JsonWriter json;
  json.begin_object().key("scope_gpu_summary").begin_array();
  for (const ScopeGpuSummary& summary : summaries) {
    json.begin_object()
        .member("path", summary.path)
        .member("instances", summary.instances)
        .member("activities", summary.activities)
        .member("projection_ns", summary.projection_ns)
        .member("summed_ns", summary.summed_ns)
        .key("event_ms");
    if (summary.event_ms < 0) json.value(nullptr);
    else json.value(summary.event_ms);
    json.key("categories").begin_array();
    for (const CategoryShare& share : summary.categories)
      json.begin_object(JsonWriter::one_line)
          .member("category", share.category)
          .member("total_ns", share.total_ns)
          .member("percent", share.percent)
          .end_object();
    json.end_array().end_object();
  }
  json.end_array().end_object();
  return json.str() + "\n";
}

// The three summaries: KernelSummaryRow, ScopeKernelRow or ScopeGpuSummary rows.
template <class Rows>
constexpr bool is_kernel_summary =
    std::is_same_v<Rows, std::vector<KernelSummaryRow>> ||
    std::is_same_v<Rows, std::vector<ScopeKernelRow>> || std::is_same_v<Rows, std::vector<ScopeGpuSummary>>;
template <class Rows>
using if_kernel_summary = std::enable_if_t<is_kernel_summary<Rows>, int>;

template <class Rows, if_kernel_summary<Rows> = 0>
std::string to_csv(const Rows& rows) {
  return summary_table(rows).csv(CsvHeaders::quoted);
}
template <class Rows, if_kernel_summary<Rows> = 0>
std::string to_markdown(const Rows& rows) {
  return summary_table(rows).markdown();
}

template <class Rows, if_kernel_summary<Rows> = 0>
void write_csv(const Rows& rows, const std::string& path) {
  write_file_atomically(path, to_csv(rows));
}
template <class Rows, if_kernel_summary<Rows> = 0>
void write_markdown(const Rows& rows, const std::string& path) {
  write_file_atomically(path, to_markdown(rows));
}
template <class Rows, if_kernel_summary<Rows> = 0>
void write_json(const Rows& rows, const std::string& path) {
  write_file_atomically(path, to_json(rows));
}

// CSV, markdown or JSON by the extension of `path` (.csv, .md, .json).
template <class Rows, if_kernel_summary<Rows> = 0>
void write(const Rows& rows, const std::string& path) {
  detail::write_by_extension(path, "a kernel summary",
                             {{".csv", [&] { return to_csv(rows); }},
                              {".md", [&] { return to_markdown(rows); }},
                              {".json", [&] { return to_json(rows); }}});
}

GPUPROF_NAMESPACE_END
