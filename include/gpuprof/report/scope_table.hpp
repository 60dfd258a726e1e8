// gpuprof/report/scope_table.hpp: the scope tree as a table, for a terminal
// (to_table, write_table, print_table; columns aligned with spaces) or as
// GitHub markdown (to_markdown, write_markdown).
//
// One row per node, names indented by depth. Times are in milliseconds of the
// node's primary timing (CUDA events when it has them, else host clock). The
// rate columns appear only when some node declares that work, the peak memory
// column only when some node measured it. Unstable statistics are listed under
// the table with their reason, so a noisy number is never shown without it;
// scopes that ran only once get one note for all of them (a one-shot program
// would otherwise get a line per scope). A scope still running when the
// report was taken is marked "(open)" after its name, and a note says what
// bench() warm-up left out.
#pragma once
#include <algorithm>
#include <ostream>
#include <string>
#include <utility>
#include <vector>

#include "../atomic_file.hpp"
#include "../table.hpp"
#include "../report_model.hpp"
#include "scope_counters.hpp"

GPUPROF_NAMESPACE_BEGIN

namespace detail {
inline std::string report_heading(const Report& report) {
  std::string heading = "gpuprof report: timing by ";
  heading += report.timing_source == TimingSource::cuda_events ? "CUDA events" : "host clock";
  if (!report.timing_note.empty()) heading += " (" + report.timing_note + ")";
  heading += "; device: " + (report.device_name.empty() ? std::string("none") : report.device_name);
  return heading;
}

// What the table and the HTML page show of every scope: its name indented
// by depth, then count, total, mean, std, median, p90, min and max of its
// primary timing.
inline std::vector<std::string> scope_summary_cells(const ScopeNode& node, const std::string& indented) {
  const Summary& ms = node.primary_ms();
  return {indented,
          std::to_string(node.count),
          format_significant(node.total_ms()),
          format_significant(ms.mean),
          format_significant(ms.stddev),
          format_significant(ms.median),
          format_significant(ms.percentile(90)),
          format_significant(ms.min),
          format_significant(ms.max)};
}

// `indent` is repeated once per depth level before a node's name.
inline Table scope_table(const Report& report, const std::string& indent) {
  const auto any_node = [&](auto predicate) {
    return std::any_of(report.nodes.begin(), report.nodes.end(), predicate);
  };
  const bool show_flops = any_node([](const ScopeNode& n) { return n.work.flops > 0; });
  const bool show_bytes = any_node([](const ScopeNode& n) { return n.work.bytes > 0; });
  const bool show_tokens = any_node([](const ScopeNode& n) { return n.work.tokens > 0; });
  const bool show_memory = any_node([](const ScopeNode& n) { return n.peak_device_bytes >= 0; });
  const bool show_torch_memory = any_node([](const ScopeNode& n) { return n.peak_allocated_bytes >= 0; });
  const bool show_counters = !report.counters.scopes.empty();

  Table table;
  table.add_column({"Scope"});
  for (const char* header :
       {"Count", "Total ms", "Mean ms", "Std ms", "Median ms", "P90 ms", "Min ms", "Max ms", "% parent"})
    table.add_column({header, Align::right});
  if (show_flops) table.add_column({"TFLOP/s", Align::right});
  if (show_bytes) table.add_column({"GB/s", Align::right});
  if (show_tokens) table.add_column({"tokens/s", Align::right});
  if (show_memory) table.add_column({"Peak MiB", Align::right});
  if (show_torch_memory) {
    table.add_column({"Alloc peak MiB", Align::right});
    table.add_column({"Reserved MiB", Align::right});
  }
  if (show_counters)
    for (const std::string& header : counter_table_headers()) table.add_column({header, Align::right});

  for (std::size_t i = 0; i < report.nodes.size(); ++i) {
    const ScopeNode& node = report.nodes[i];
    std::string name = detail::indented_name(node.name, node.depth, indent);
    if (node.open_instances > 0) name += " (open)";
    const double share = report.percent_of_parent(i);
    std::vector<std::string> row = scope_summary_cells(node, name);
    row.push_back(share >= 0 ? format_fixed(share, 1) : "-");
    const auto rate = [](double value) { return value > 0 ? format_significant(value) : "-"; };
    if (show_flops) row.push_back(rate(node.tflop_per_s()));
    if (show_bytes) row.push_back(rate(node.gb_per_s()));
    if (show_tokens) row.push_back(rate(node.tokens_per_s()));
    const auto mebibytes = [](std::int64_t bytes) {
      return bytes >= 0 ? format_fixed(static_cast<double>(bytes) / (1 << 20), 1) : "-";
    };
    if (show_memory) row.push_back(mebibytes(node.peak_device_bytes));
    if (show_torch_memory) {
      row.push_back(mebibytes(node.peak_allocated_bytes));
      row.push_back(mebibytes(node.reserved_bytes));
    }
    if (show_counters)
      for (std::string& cell : counter_table_cells(scope_counters(report, i))) row.push_back(std::move(cell));
    table.add_row(std::move(row));
  }
  return table;
}

// A node that ran fewer than 2 times: its reason is only that, and says the
// same of every such node.
inline bool ran_fewer_than_twice(const ScopeNode& node) { return node.primary_ms().n < 2; }

// "path: reason" for every node whose primary statistics are unstable, but
// for those that merely ran fewer than twice (report_remarks counts them).
inline std::vector<std::string> unstable_notes(const Report& report) {
  std::vector<std::string> notes;
  for (const ScopeNode& node : report.nodes)
    if (node.primary_ms().unstable && !ran_fewer_than_twice(node))
      notes.push_back(node.path + ": " + node.primary_ms().unstable_reason);
  return notes;
}

// "cold (first warm-up instance): step 723.1 ms, ...": each node's cold_ms,
// the first few, so that the cold step stays in sight.
inline std::string cold_times(const Report& report) {
  constexpr int shown_at_most = 8;
  std::string text;
  int shown = 0, more = 0;
  for (const ScopeNode& node : report.nodes) {
    if (node.cold_ms < 0) continue;
    if (shown == shown_at_most) {
      ++more;
      continue;
    }
    text += (shown++ ? ", " : "cold (first warm-up instance, left out): ") + node.path + " " +
            format_fixed(node.cold_ms, 3) + " ms";
  }
  if (more > 0) text += " and " + std::to_string(more) + " more (cold_ms in the JSON report)";
  return text;
}

// One line each: scopes still open, scopes that ran once (or only are open),
// instances left out as warm-up and their cold times.
inline std::vector<std::string> report_remarks(const Report& report) {
  std::vector<std::string> remarks;
  const auto count_nodes = [&](auto predicate) {
    return std::count_if(report.nodes.begin(), report.nodes.end(), predicate);
  };
  if (const auto open = count_nodes([](const ScopeNode& n) { return n.open_instances > 0; }); open > 0)
    remarks.push_back(std::to_string(open) +
                      " scope(s) marked (open) were still running when the report was "
                      "taken; their running instances are not counted");
  if (const auto once = count_nodes(ran_fewer_than_twice); once > 0)
    remarks.push_back(std::to_string(once) + " of " + std::to_string(report.nodes.size()) +
                      " scope(s) finished fewer than 2 times: no spread can be estimated for them");
  if (report.warmup_instances_left_out > 0 && report.warmup_root_instances == 0)
    remarks.push_back(
        std::to_string(report.warmup_instances_left_out) +
        " scope instance(s) from bench() cold calls and warm-up are left out of the statistics");
  if (report.warmup_instances_left_out > 0 && report.warmup_root_instances > 0)
    remarks.push_back(std::to_string(report.warmup_instances_left_out) +
                      " scope instance(s) are left out of the statistics as warm-up: the first " +
                      std::to_string(report.warmup_root_instances) +
                      " instance(s) of each root scope with everything inside them (set_warmup, "
                      "GPUPROF_WARMUP), and any from bench() cold calls and warm-up");
  if (std::string cold = cold_times(report); !cold.empty()) remarks.push_back(std::move(cold));
  for (std::string& remark : counter_remarks(report)) remarks.push_back(std::move(remark));
  return remarks;
}

}  // namespace detail

// The scope tree as a table for a terminal, with its notes; names from the
// program are made terminal_safe.
inline std::string to_table(const Report& report) {
  std::string text = terminal_safe(detail::report_heading(report)) + '\n';
  text += detail::scope_table(report, "  ").text();
  for (const std::string& note : detail::unstable_notes(report))
    text += "unstable: " + terminal_safe(note) + '\n';
  for (const std::string& remark : detail::report_remarks(report))
    text += "note: " + terminal_safe(remark) + '\n';
  return text;
}

inline void write_table(const Report& report, const std::string& path) {
  write_file_atomically(path, to_table(report));
}

// to_table() onto a stream (std::cout).
inline void print_table(const Report& report, std::ostream& out) { out << to_table(report); }

// The same table as GitHub markdown.
inline std::string to_markdown(const Report& report) {
  std::string text = "**" + detail::markdown_cell(detail::report_heading(report)) + "**\n\n";
  if (const std::string where = environment_summary(report.environment); !where.empty())
    text += detail::markdown_cell(where) + "\n\n";
  text += detail::scope_table(report, "&nbsp;&nbsp;").markdown();
  const std::vector<std::string> notes = detail::unstable_notes(report);
  if (!notes.empty()) text += "\nUnstable statistics:\n\n";
  for (const std::string& note : notes) text += "- " + detail::markdown_cell(note) + "\n";
  const std::vector<std::string> remarks = detail::report_remarks(report);
  if (!remarks.empty()) text += "\nNotes:\n\n";
  for (const std::string& remark : remarks) text += "- " + detail::markdown_cell(remark) + "\n";
  return text;
}

// to_markdown() written whole or not at all; gpuprof::Error when it cannot be.
inline void write_markdown(const Report& report, const std::string& path) {
  write_file_atomically(path, to_markdown(report));
}

GPUPROF_NAMESPACE_END
