// gpuprof/report/kernel_summary_writers.hpp: the kernel summaries as CSV (nsys's
// column headers, so scripts written for `nsys stats --format csv` read them),
// markdown and JSON, written whole or not at all.
//
//   auto rows = gpuprof::kern_sum(report, "forward");
//   gpuprof::write_kern_sum("forward_kern_sum.csv", rows);   // .csv, .md or .json
//   std::cout << gpuprof::to_markdown(gpuprof::kern_sum_table(rows));
//
// JSON members (all times in nanoseconds, numbers at full precision):
//   {"kern_sum": [{"time_percent", "total_ns", "instances", "avg_ns", "median_ns",
//                  "min_ns", "max_ns", "stddev_ns", "name", "category"}, ...]}
//   {"scope_kern_sum": [{"range", "view", "scope_instances", <kern_sum members>}, ...]}
//   {"scope_gpu_summary": [{"path", "instances", "activities", "projection_ns",
//                           "summed_ns", "event_ms" (null when not GPU-timed),
//                           "categories": [{"category", "total_ns", "percent"}, ...]}, ...]}
#pragma once
#include <cstdio>
#include <string>
#include <vector>

#include "../atomic_file.hpp"
#include "../config.hpp"
#include "../error.hpp"
#include "../json_writer.hpp"
#include "../kernel_summary.hpp"
#include "csv.hpp"
#include "table.hpp"

GPUPROF_NAMESPACE_BEGIN

// A table of already formatted cells; `numeric[c]` right-aligns column c in markdown.
struct SummaryTable {
  std::vector<std::string> headers;
  std::vector<bool> numeric;
  std::vector<std::vector<std::string>> rows;
};

namespace detail {
// nsys prints percentages and ns averages with one decimal.
inline std::string fixed1(double value) { return format_fixed(value, 1); }

inline std::string markdown_cell(const std::string& text) {
  std::string out;
  for (const char c : text) {
    if (c == '|') out += "\\|";
    else if (c == '\n' || c == '\r') out += ' ';
    else out += c;
  }
  return out;
}

inline std::vector<std::string> kern_sum_cells(const KernelSummaryRow& row) {
  return {fixed1(row.time_percent), std::to_string(row.total_ns), std::to_string(row.instances),
          fixed1(row.avg_ns),       fixed1(row.median_ns),        std::to_string(row.min_ns),
          std::to_string(row.max_ns), fixed1(row.stddev_ns)};
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
  static const std::vector<std::string> headers = {
      "Time (%)", "Total Time (ns)", "Instances", "Avg (ns)", "Med (ns)",
      "Min (ns)", "Max (ns)",        "StdDev (ns)"};
  return headers;
}
}  // namespace detail

inline std::string to_csv(const SummaryTable& table) {
  std::string out;
  for (std::size_t c = 0; c < table.headers.size(); ++c)
    out += (c ? "," : "") + detail::csv_field(table.headers[c], true);
  out += '\n';
  for (const auto& row : table.rows) {
    for (std::size_t c = 0; c < row.size(); ++c) out += (c ? "," : "") + detail::csv_field(row[c], false);
    out += '\n';
  }
  return out;
}

inline std::string to_markdown(const SummaryTable& table) {
  std::string out = "|";
  for (const std::string& header : table.headers) out += " " + detail::markdown_cell(header) + " |";
  out += "\n|";
  for (std::size_t c = 0; c < table.headers.size(); ++c)
    out += c < table.numeric.size() && table.numeric[c] ? "---:|" : ":---|";
  out += '\n';
  for (const auto& row : table.rows) {
    out += "|";
    for (const std::string& cell : row) out += " " + detail::markdown_cell(cell) + " |";
    out += '\n';
  }
  return out;
}

// nsys cuda_gpu_kern_sum's columns, in its order.
inline SummaryTable kern_sum_table(const std::vector<KernelSummaryRow>& rows) {
  SummaryTable table;
  table.headers = detail::kern_sum_headers();
  table.headers.push_back("Name");
  table.numeric.assign(table.headers.size() - 1, true);
  table.numeric.push_back(false);
  for (const KernelSummaryRow& row : rows) {
    std::vector<std::string> cells = detail::kern_sum_cells(row);
    cells.push_back(row.name);
    table.rows.push_back(std::move(cells));
  }
  return table;
}

// nsys nvtx_kern_sum's layout: the range and its view first, then kern_sum's columns.
inline SummaryTable scope_kern_sum_table(const std::vector<ScopeKernelRow>& rows) {
  SummaryTable table;
  table.headers = {"Range", "View", "Scope Instances"};
  for (const std::string& header : detail::kern_sum_headers()) table.headers.push_back(header);
  table.headers.push_back("Kernel Name");
  table.numeric = {false, false, true};
  table.numeric.resize(table.headers.size() - 1, true);
  table.numeric.push_back(false);
  for (const ScopeKernelRow& row : rows) {
    std::vector<std::string> cells = {row.range, to_string(row.view), std::to_string(row.scope_instances)};
    for (std::string& cell : detail::kern_sum_cells(row.kernel)) cells.push_back(std::move(cell));
    cells.push_back(row.kernel.name);
    table.rows.push_back(std::move(cells));
  }
  return table;
}

// One row per scope: times in ms, then each category's share in % of the summed GPU time.
inline SummaryTable scope_gpu_table(const std::vector<ScopeGpuSummary>& summaries) {
  SummaryTable table;
  table.headers = {"Scope", "Instances", "Event (ms)", "GPU projection (ms)", "Summed GPU (ms)"};
  if (!summaries.empty())
    for (const CategoryShare& share : summaries.front().categories) table.headers.push_back(share.category + " (%)");
  table.numeric.assign(table.headers.size(), true);
  table.numeric[0] = false;
  for (const ScopeGpuSummary& summary : summaries) {
    std::vector<std::string> cells = {
        summary.path, std::to_string(summary.instances),
        summary.event_ms < 0 ? std::string("-") : detail::format_fixed(summary.event_ms, 3),
        detail::format_fixed(static_cast<double>(summary.projection_ns) * 1e-6, 3),
        detail::format_fixed(static_cast<double>(summary.summed_ns) * 1e-6, 3)};
    for (const CategoryShare& share : summary.categories) cells.push_back(detail::fixed1(share.percent));
    table.rows.push_back(std::move(cells));
  }
  return table;
}

inline std::string kern_sum_json(const std::vector<KernelSummaryRow>& rows) {
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

inline std::string scope_kern_sum_json(const std::vector<ScopeKernelRow>& rows) {
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

inline std::string scope_gpu_summary_json(const std::vector<ScopeGpuSummary>& summaries) {
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

namespace detail {
inline bool ends_with(const std::string& text, const std::string& suffix) {
  return text.size() >= suffix.size() && text.compare(text.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// Writes `table` or `json` to `path`, in the format its extension names.
inline void write_summary(const std::string& path, const SummaryTable& table, const std::string& json) {
  if (ends_with(path, ".csv")) write_file_atomically(path, to_csv(table));
  else if (ends_with(path, ".md")) write_file_atomically(path, to_markdown(table));
  else if (ends_with(path, ".json")) write_file_atomically(path, json);
  else throw Error("cannot write " + path + ": unknown format (use .csv, .md or .json)");
}
}  // namespace detail

// Each writes CSV, markdown or JSON by the extension of `path` (.csv, .md,
// .json) through a temporary file and a rename; gpuprof::Error otherwise.
inline void write_kern_sum(const std::string& path, const std::vector<KernelSummaryRow>& rows) {
  detail::write_summary(path, kern_sum_table(rows), kern_sum_json(rows));
}
inline void write_scope_kern_sum(const std::string& path, const std::vector<ScopeKernelRow>& rows) {
  detail::write_summary(path, scope_kern_sum_table(rows), scope_kern_sum_json(rows));
}
inline void write_scope_gpu_summary(const std::string& path, const std::vector<ScopeGpuSummary>& summaries) {
  detail::write_summary(path, scope_gpu_table(summaries), scope_gpu_summary_json(summaries));
}

GPUPROF_NAMESPACE_END
