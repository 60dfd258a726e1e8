// gpuprof/report/table.hpp: the scope tree as a table, for a terminal
// (Report::print, columns aligned with spaces) or as GitHub markdown
// (Report::markdown, Report::write_markdown).
//
// One row per node, names indented by depth. Times are in milliseconds of the
// node's primary timing (CUDA events when it has them, else host clock). The
// rate columns appear only when some node declares that work, the peak memory
// column only when some node measured it. Unstable statistics are listed under
// the table with their reason, so a noisy number is never shown without it.
#pragma once
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <ostream>
#include <string>
#include <utility>
#include <vector>

#include "../atomic_file.hpp"
#include "model.hpp"

GPUPROF_NAMESPACE_BEGIN

namespace detail {
struct TextTable {
  std::vector<std::string> headers;
  std::vector<bool> right_aligned;
  std::vector<std::vector<std::string>> rows;

  void add_column(std::string header, bool right) {
    headers.push_back(std::move(header));
    right_aligned.push_back(right);
  }
};

inline std::string format_fixed(double value, int decimals) {
  char text[400];  // room for any double with 6 decimals
  std::snprintf(text, sizeof text, "%.*f", decimals, value);
  return text;
}

// About four significant digits without an exponent: "1234.6", "12.35",
// "0.1234", "0.000123".
inline std::string format_significant(double value) {
  if (!std::isfinite(value)) return "-";
  const double magnitude = std::fabs(value);
  const int decimals = magnitude > 0 ? 3 - static_cast<int>(std::floor(std::log10(magnitude))) : 0;
  return format_fixed(value, std::clamp(decimals, 0, 6));
}

// Terminal columns a UTF-8 string takes (one per code point: no wide glyphs
// are expected in scope names).
inline std::size_t display_width(const std::string& text) {
  return static_cast<std::size_t>(std::count_if(text.begin(), text.end(), [](char c) {
    return (static_cast<unsigned char>(c) & 0xC0) != 0x80;
  }));
}

inline std::string report_heading(const Report& report) {
  std::string heading = "gpuprof report: timing by ";
  heading += report.timing_source == TimingSource::cuda_events ? "CUDA events" : "host clock";
  if (!report.timing_note.empty()) heading += " (" + report.timing_note + ")";
  heading += "; device: " + (report.device_name.empty() ? std::string("none") : report.device_name);
  return heading;
}

// `indent` is repeated once per depth level before a node's name.
inline TextTable scope_table(const Report& report, const std::string& indent) {
  const auto any_node = [&](auto predicate) {
    return std::any_of(report.nodes.begin(), report.nodes.end(), predicate);
  };
  const bool show_flops = any_node([](const ScopeNode& n) { return n.work.flops > 0; });
  const bool show_bytes = any_node([](const ScopeNode& n) { return n.work.bytes > 0; });
  const bool show_tokens = any_node([](const ScopeNode& n) { return n.work.tokens > 0; });
  const bool show_memory = any_node([](const ScopeNode& n) { return n.peak_device_bytes >= 0; });

  TextTable table;
  table.add_column("Scope", false);
  for (const char* header : {"Count", "Total ms", "Mean ms", "Std ms", "Median ms", "P90 ms",
                             "Min ms", "Max ms", "% parent"})
    table.add_column(header, true);
  if (show_flops) table.add_column("TFLOP/s", true);
  if (show_bytes) table.add_column("GB/s", true);
  if (show_tokens) table.add_column("tokens/s", true);
  if (show_memory) table.add_column("Peak MiB", true);

  for (std::size_t i = 0; i < report.nodes.size(); ++i) {
    const ScopeNode& node = report.nodes[i];
    const Summary& ms = node.primary_ms();
    std::string name;
    for (int level = 0; level < node.depth; ++level) name += indent;
    name += node.name;
    const double share = report.percent_of_parent(i);
    std::vector<std::string> row = {
        name,
        std::to_string(node.count),
        format_significant(node.total_ms()),
        format_significant(ms.mean),
        format_significant(ms.stddev),
        format_significant(ms.median),
        format_significant(ms.percentile(90)),
        format_significant(ms.min),
        format_significant(ms.max),
        share >= 0 ? format_fixed(share, 1) : "-"};
    const auto rate = [](double value) { return value > 0 ? format_significant(value) : "-"; };
    if (show_flops) row.push_back(rate(node.tflop_per_s()));
    if (show_bytes) row.push_back(rate(node.gb_per_s()));
    if (show_tokens) row.push_back(rate(node.tokens_per_s()));
    if (show_memory)
      row.push_back(node.peak_device_bytes >= 0
                        ? format_fixed(static_cast<double>(node.peak_device_bytes) / (1 << 20), 1)
                        : "-");
    table.rows.push_back(std::move(row));
  }
  return table;
}

// "path: reason" for every node whose primary statistics are unstable.
inline std::vector<std::string> unstable_notes(const Report& report) {
  std::vector<std::string> notes;
  for (const ScopeNode& node : report.nodes)
    if (node.primary_ms().unstable)
      notes.push_back(node.path + ": " + node.primary_ms().unstable_reason);
  return notes;
}

inline std::string escape_markdown_cell(const std::string& text) {
  std::string escaped;
  for (char c : text) {
    if (c == '|' || c == '\\') escaped += '\\';
    escaped += c == '\n' ? ' ' : c;
  }
  return escaped;
}

// Columns padded to their widest cell, two spaces apart, no trailing spaces.
inline void print_text_table(std::ostream& out, const TextTable& table) {
  std::vector<std::size_t> widths;
  for (const std::string& header : table.headers) widths.push_back(display_width(header));
  for (const auto& row : table.rows)
    for (std::size_t c = 0; c < row.size(); ++c) widths[c] = std::max(widths[c], display_width(row[c]));
  const auto print_row = [&](const std::vector<std::string>& cells) {
    std::string line;
    for (std::size_t c = 0; c < cells.size(); ++c) {
      const std::string padding(widths[c] - display_width(cells[c]), ' ');
      if (c > 0) line += "  ";
      line += table.right_aligned[c] ? padding + cells[c] : cells[c] + padding;
    }
    line.erase(line.find_last_not_of(' ') + 1);
    out << line << '\n';
  };
  print_row(table.headers);
  for (const auto& row : table.rows) print_row(row);
}

inline std::string markdown_table(const TextTable& table) {
  const auto row_text = [](const std::vector<std::string>& cells) {
    std::string line = "|";
    for (const std::string& cell : cells) line += " " + escape_markdown_cell(cell) + " |";
    return line + "\n";
  };
  std::string text = row_text(table.headers) + "|";
  for (bool right : table.right_aligned) text += right ? "---:|" : "---|";
  text += "\n";
  for (const auto& row : table.rows) text += row_text(row);
  return text;
}
}  // namespace detail

inline void Report::print(std::ostream& out) const {
  out << detail::report_heading(*this) << '\n';
  detail::print_text_table(out, detail::scope_table(*this, "  "));
  for (const std::string& note : detail::unstable_notes(*this)) out << "unstable: " << note << '\n';
}

inline std::string Report::markdown() const {
  std::string text = "**" + detail::escape_markdown_cell(detail::report_heading(*this)) + "**\n\n";
  if (const std::string where = environment_summary(environment); !where.empty()) text += where + "\n\n";
  text += detail::markdown_table(detail::scope_table(*this, "&nbsp;&nbsp;"));
  const std::vector<std::string> notes = detail::unstable_notes(*this);
  if (!notes.empty()) text += "\nUnstable statistics:\n\n";
  for (const std::string& note : notes) text += "- " + detail::escape_markdown_cell(note) + "\n";
  return text;
}

inline void Report::write_markdown(const std::string& path) const {
  write_file_atomically(path, markdown());
}

GPUPROF_NAMESPACE_END
