// gpuprof/report/csv.hpp: to_csv and write_csv, one row per scope node.
//
// RFC 4180: a header row, CRLF line ends, fields with a comma, quote or line
// break quoted and their quotes doubled. Column names are stable (documented
// in docs/report-schema.md); new columns are only ever appended. Numbers are
// the shortest text that reads back exactly; an unknown value is an empty
// field. Times are milliseconds of the node's primary timing (`timing`).
#pragma once
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "../atomic_file.hpp"
#include "../json_writer.hpp"
#include "../table.hpp"
#include "../report_model.hpp"
#include "scope_counters.hpp"

GPUPROF_NAMESPACE_BEGIN

namespace detail {
inline void append_csv_row(std::string& out, const std::vector<std::string>& fields) {
  for (std::size_t i = 0; i < fields.size(); ++i) {
    if (i > 0) out += ',';
    out += csv_field(fields[i]);
  }
  out += "\r\n";
}

inline const std::vector<std::string>& timing_and_counter_csv_columns() {
  static const std::vector<std::string> columns = with_counter_csv_columns({"path",
                                                                            "name",
                                                                            "depth",
                                                                            "parent_path",
                                                                            "count",
                                                                            "timing",
                                                                            "total_ms",
                                                                            "mean_ms",
                                                                            "stddev_ms",
                                                                            "median_ms",
                                                                            "q1_ms",
                                                                            "q3_ms",
                                                                            "p10_ms",
                                                                            "p90_ms",
                                                                            "min_ms",
                                                                            "max_ms",
                                                                            "ci95_low_ms",
                                                                            "ci95_high_ms",
                                                                            "cv",
                                                                            "outliers",
                                                                            "unstable",
                                                                            "unstable_reason",
                                                                            "host_mean_ms",
                                                                            "gpu_mean_ms",
                                                                            "percent_of_parent",
                                                                            "flops",
                                                                            "bytes",
                                                                            "tokens",
                                                                            "tflop_per_s",
                                                                            "gb_per_s",
                                                                            "tokens_per_s",
                                                                            "flops_per_byte",
                                                                            "peak_device_bytes",
                                                                            "discarded"});
  return columns;
}

// Then PyTorch's caching allocator per scope (gpuprof.TorchMemoryWatch).
inline const std::vector<std::string>& csv_columns() {
  static const std::vector<std::string> columns = [] {
    std::vector<std::string> all = timing_and_counter_csv_columns();
    all.emplace_back("peak_allocated_bytes");
    all.emplace_back("reserved_bytes");
    return all;
  }();
  return columns;
}
}  // namespace detail

inline std::string to_csv(const Report& report) {
  using detail::shortest_decimal;
  // Undeclared work, unmeasured rates and roots' shares are empty, not 0.
  const auto positive_or_empty = [](double value) {
    return value > 0 ? shortest_decimal(value) : std::string();
  };
  const auto bytes_or_empty = [](std::int64_t bytes) {
    return bytes >= 0 ? std::to_string(bytes) : std::string();
  };
  std::string text;
  detail::append_csv_row(text, detail::csv_columns());
  for (std::size_t i = 0; i < report.nodes.size(); ++i) {
    const ScopeNode& node = report.nodes[i];
    const Summary& ms = node.primary_ms();
    const double share = report.percent_of_parent(i);
    std::vector<std::string> fields = {
        node.path,
        node.name,
        std::to_string(node.depth),
        node.parent >= 0 ? report.nodes.at(static_cast<std::size_t>(node.parent)).path : "",
        std::to_string(node.count),
        timing_source_name(node.gpu_timed() ? TimingSource::cuda_events : TimingSource::host_clock),
        shortest_decimal(node.total_ms()),
        shortest_decimal(ms.mean),
        shortest_decimal(ms.stddev),
        shortest_decimal(ms.median),
        shortest_decimal(ms.q1),
        shortest_decimal(ms.q3),
        shortest_decimal(ms.percentile(10)),
        shortest_decimal(ms.percentile(90)),
        shortest_decimal(ms.min),
        shortest_decimal(ms.max),
        shortest_decimal(ms.ci95_low),
        shortest_decimal(ms.ci95_high),
        shortest_decimal(ms.cv),
        std::to_string(ms.outliers),
        ms.unstable ? "true" : "false",
        ms.unstable_reason,
        node.host_ms.n > 0 ? shortest_decimal(node.host_ms.mean) : "",
        node.gpu_timed() ? shortest_decimal(node.gpu_ms.mean) : "",
        share >= 0 ? shortest_decimal(share) : "",
        positive_or_empty(node.work.flops),
        positive_or_empty(node.work.bytes),
        positive_or_empty(node.work.tokens),
        positive_or_empty(node.tflop_per_s()),
        positive_or_empty(node.gb_per_s()),
        positive_or_empty(node.tokens_per_s()),
        positive_or_empty(node.flops_per_byte()),
        bytes_or_empty(node.peak_device_bytes),
        std::to_string(ms.discarded)};
    for (std::string& field : detail::counter_csv_fields(scope_counters(report, i)))
      fields.push_back(std::move(field));
    fields.push_back(bytes_or_empty(node.peak_allocated_bytes));
    fields.push_back(bytes_or_empty(node.reserved_bytes));
    detail::append_csv_row(text, fields);
  }
  return text;
}

inline void write_csv(const Report& report, const std::string& path) {
  write_file_atomically(path, to_csv(report));
}

GPUPROF_NAMESPACE_END
