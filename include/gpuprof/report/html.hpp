// gpuprof/report/html.hpp: the report as one self-contained HTML page a
// person opens in a browser.
//
// ```cpp
// #include <gpuprof/report/html.hpp>
// void save_page(const gpuprof::Report& report) {
//   gpuprof::write_html(report, "report.html", {"training step"});  // or to_html(report) for the text
// }
// ```
//
// Static markup that reads whole without JavaScript: where it ran, the scope
// tree as an icicle chart sized by time, the statistics table, the hardware
// counters and their roofline, the kernels (all, and per scope), and the
// memory timeline. A small script of our own (detail/html_page.js; no
// network, no CDN) adds sorting, zoom and each scope's distribution, drawn
// from at most 24 histogram bins per scope rather than every sample.
// docs/compare-and-html.md describes the page.
#pragma once
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "../atomic_file.hpp"
#include "../detail/html_page_assets.hpp"
#include "../detail/markup.hpp"
#include "../detail/number_text.hpp"
#include "../table.hpp"
#include "../environment.hpp"
#include "../kernel_summary.hpp"
#include "../memory_timeline.hpp"
#include "memory_timeline_svg.hpp"
#include "../report_model.hpp"
#include "roofline_svg.hpp"
#include "scope_counters.hpp"
#include "scope_table.hpp"

GPUPROF_NAMESPACE_BEGIN

namespace detail {

// A table the script can sort. Cells are text (escaped here); `attributes`
// go into the row's <tr>, and a non-empty `first_cell_sort_key` into its
// first cell as data-sort (the scope column sorts back into tree order).
struct HtmlTableRow {
  std::vector<std::string> cells;
  std::string attributes;
  std::string first_cell_sort_key;
};

inline std::string html_table(const std::vector<std::string>& headers, const std::vector<HtmlTableRow>& rows,
                              const std::vector<std::size_t>& name_columns, const std::string& id = "") {
  const auto is_name = [&](std::size_t column) {
    return std::find(name_columns.begin(), name_columns.end(), column) != name_columns.end();
  };
  std::string table =
      "<table class=\"sortable\"" + (id.empty() ? "" : " id=\"" + id + "\"") + ">\n<thead><tr>";
  for (std::size_t c = 0; c < headers.size(); ++c)
    table += (is_name(c) ? "<th class=\"name\">" : "<th>") + html_escaped(headers[c]) + "</th>";
  table += "</tr></thead>\n<tbody>\n";
  for (const HtmlTableRow& row : rows) {
    table += "<tr" + row.attributes + ">";
    for (std::size_t c = 0; c < row.cells.size(); ++c) {
      table += is_name(c) ? "<td class=\"name\"" : "<td";
      if (c == 0 && !row.first_cell_sort_key.empty())
        table += " data-sort=\"" + row.first_cell_sort_key + "\"";
      table += ">" + html_escaped(row.cells[c]) + "</td>";
    }
    table += "</tr>\n";
  }
  return table + "</tbody>\n</table>\n";
}

// Four significant digits, "" for what is unknown (negative by convention).
inline std::string html_number(double value) { return value >= 0 ? format_significant(value) : ""; }

inline std::string html_signed_percent(const WorkCheck& check) {
  if (!check.known()) return "";
  return (check.difference_pct() > 0 ? "+" : "") + format_significant(check.difference_pct()) + "%";
}

// A scope's samples as at most html_histogram_bins bins over [min, max]:
// "linear|log low high count...", the row's data-bins attribute. The page
// carries this instead of the samples, so its size does not grow with them.
// Timings have a long right tail: where max is 4 or more times min, the bins
// are equally wide in log(time), so the bulk is not squeezed into one bin.
constexpr std::size_t html_histogram_bins = 24;

inline std::string html_histogram(const Summary& samples) {
  const std::vector<double>& sorted = samples.sorted;
  if (sorted.empty()) return "";
  const double low = sorted.front(), high = sorted.back();
  const bool log_scale = low > 0 && high >= 4 * low;
  const auto position = [&](double x) {
    return log_scale ? std::log(x / low) / std::log(high / low) : high > low ? (x - low) / (high - low) : 0.0;
  };
  const std::size_t bins = std::min(html_histogram_bins, sorted.size());
  std::vector<std::size_t> counts(bins, 0);
  for (const double x : sorted)
    ++counts[std::min(bins - 1, static_cast<std::size_t>(position(x) * static_cast<double>(bins)))];
  std::string text =
      std::string(log_scale ? "log " : "linear ") + shortest_decimal(low) + " " + shortest_decimal(high);
  for (const std::size_t count : counts) text += " " + std::to_string(count);
  return text;
}

// Where it ran, as the same labelled lines the markdown heading uses.
inline std::string html_environment_table(const Report& report) {
  auto lines = environment_lines(report.environment);
  if (report.environment.gpu_name.empty() && !report.device_name.empty())
    lines.insert(lines.begin(), {"GPU", report.device_name});
  lines.emplace_back("timing", std::string(timing_source_name(report.timing_source)) +
                                   (report.timing_note.empty() ? "" : " (" + report.timing_note + ")"));
  std::string table = "<table class=\"env\">\n";
  for (const auto& [label, value] : lines)
    table += "<tr><td>" + html_escaped(label) + "</td><td>" + html_escaped(value) + "</td></tr>\n";
  return table + "</table>\n";
}

// A stable colour per scope name, so one name looks the same everywhere.
inline int name_hue(const std::string& name) {
  int hue = 0;
  for (const char c : name) hue = (hue * 31 + static_cast<unsigned char>(c)) % 360;
  return hue;
}

// A label that fits in `width` px (6.5 px a character), cut on a UTF-8
// character boundary and ended with an ellipsis; "" when nothing fits.
inline std::string fitted_label(const std::string& name, double width) {
  if (width <= 40) return "";
  if (static_cast<double>(name.size()) * 6.5 <= width - 8) return name;
  std::size_t keep = static_cast<std::size_t>(std::max(1.0, (width - 8) / 6.5 - 1));
  while (keep > 0 && (static_cast<unsigned char>(name[keep]) & 0xC0) == 0x80) --keep;
  return name.substr(0, keep) + "\u2026";
}

// The scope tree as an icicle chart: one <g class="flame"> per node, as wide
// as its total time. Children that add up to more than their parent (several
// threads, mixed clocks) share its width. The group's data-x and data-w keep
// this layout for the script's zoom.
inline std::string html_icicle(const Report& report) {
  constexpr double width = 1200, row_height = 22;
  const std::vector<ScopeNode>& nodes = report.nodes;
  std::vector<std::vector<std::size_t>> children(nodes.size());
  std::vector<std::size_t> roots;
  int depth = 1;
  for (std::size_t i = 0; i < nodes.size(); ++i) {
    (nodes[i].parent >= 0 ? children[static_cast<std::size_t>(nodes[i].parent)] : roots).push_back(i);
    depth = std::max(depth, nodes[i].depth + 1);
  }
  const std::string height = svg_number(depth * row_height);
  std::string svg = "<svg id=\"flame\" xmlns=\"http://www.w3.org/2000/svg\" width=\"1200\" height=\"" +
                    height + "\" viewBox=\"0 0 1200 " + height + "\">\n";
  // The scale that fits `indices` into `available` (their sum may exceed it).
  const auto scale_for = [&](const std::vector<std::size_t>& indices, double available, double scale) {
    double sum = 0;
    for (const std::size_t i : indices) sum += nodes[i].total_ms();
    return sum * scale > available ? available / sum : scale;
  };
  // Depth first, parents before children, with a stack of its own rather
  // than recursion: a chain of 20,000 nested scopes must not exhaust the
  // thread's stack.
  struct Level {
    const std::vector<std::size_t>* indices;
    std::size_t next;
    double x, k;
  };
  double root_sum = 0;
  for (const std::size_t i : roots) root_sum += nodes[i].total_ms();
  std::vector<Level> levels = {{&roots, 0, 0, scale_for(roots, width, root_sum > 0 ? width / root_sum : 0)}};
  while (!levels.empty()) {
    Level& level = levels.back();
    if (level.next == level.indices->size()) {
      levels.pop_back();
      continue;
    }
    const std::size_t i = (*level.indices)[level.next++];
    const ScopeNode& n = nodes[i];
    const double x = level.x, k = level.k, w = n.total_ms() * k;
    level.x += w;
    const double share = report.percent_of_parent(i);
    svg += "<g class=\"flame\" data-node=\"" + std::to_string(i) + "\" data-parent=\"" +
           std::to_string(n.parent) + "\" data-x=\"" + svg_number(x) + "\" data-w=\"" + svg_number(w) +
           "\" data-name=\"" + html_escaped(n.name) + "\" data-path=\"" + html_escaped(n.path) +
           "\"><rect class=\"flame-node\" x=\"" + svg_number(x) + "\" y=\"" +
           svg_number(n.depth * row_height) + "\" width=\"" + svg_number(std::max(w, 0.5)) + "\" height=\"" +
           svg_number(row_height - 1) + "\" fill=\"hsl(" + std::to_string(name_hue(n.name)) +
           ",55%,62%)\"><title>" + html_escaped(n.path) + "\n" + format_significant(n.total_ms()) +
           " ms total (" + (n.gpu_timed() ? "GPU" : "host") + "), " + std::to_string(n.count) + " call(s)" +
           (share >= 0 ? ", " + format_significant(share) + "% of parent" : "") +
           "</title></rect><text x=\"" + svg_number(x + 4) + "\" y=\"" +
           svg_number(n.depth * row_height + 15) + "\">" + html_escaped(fitted_label(n.name, w)) +
           "</text></g>\n";
    levels.push_back({&children[i], 0, x, scale_for(children[i], w, k)});
  }
  return svg + "</svg>\n";
}

// PyTorch's allocator columns (alloc peak, reserved) appear only when some
// scope was watched by gpuprof.TorchMemoryWatch, as in the terminal table.
inline std::string html_statistics(const Report& report) {
  const bool torch_memory = std::any_of(report.nodes.begin(), report.nodes.end(),
                                        [](const ScopeNode& n) { return n.peak_allocated_bytes >= 0; });
  const auto mebibytes = [](std::int64_t bytes) {
    return bytes < 0 ? std::string() : format_fixed(static_cast<double>(bytes) / 1048576, 1);
  };
  std::vector<HtmlTableRow> rows;
  for (std::size_t i = 0; i < report.nodes.size(); ++i) {
    const ScopeNode& n = report.nodes[i];
    const Summary& s = n.primary_ms();
    const double share = report.percent_of_parent(i);
    const std::string bins = html_histogram(s);
    std::vector<std::string> cells = scope_summary_cells(n, indented_name(n.name, n.depth, "\u00a0\u00a0"));
    for (std::string cell :
         {html_number(share), std::string(n.gpu_timed() ? "GPU" : "host"), mebibytes(n.peak_device_bytes)})
      cells.push_back(std::move(cell));
    if (torch_memory) {
      cells.push_back(mebibytes(n.peak_allocated_bytes));
      cells.push_back(mebibytes(n.reserved_bytes));
    }
    cells.push_back(s.unstable ? s.unstable_reason : "");
    rows.push_back(
        {std::move(cells),
         " data-node=\"" + std::to_string(i) + "\"" + (bins.empty() ? "" : " data-bins=\"" + bins + "\""),
         std::to_string(i)});
  }
  std::vector<std::string> headers = {"scope", "count", "total", "mean",     "std",   "median",
                                      "p90",   "min",   "max",   "% parent", "clock", "peak MiB"};
  if (torch_memory) {
    headers.emplace_back("alloc peak MiB");
    headers.emplace_back("reserved MiB");
  }
  headers.emplace_back("unstable");
  return "<h2>Statistics (ms)</h2>\n" + html_table(headers, rows, {0, headers.size() - 1}, "statistics");
}

inline std::string html_counters(const Report& report) {
  std::vector<HtmlTableRow> rows;
  for (std::size_t i = 0; i < report.nodes.size(); ++i) {
    const ScopeCounters c = scope_counters(report, i);
    if (c.range == nullptr) continue;
    const RangeMeasures& m = c.measured;
    rows.push_back(
        {{report.nodes[i].path, m.dram_bytes < 0 ? "" : format_significant(m.dram_bytes / 1e9),
          m.intensity() > 0 ? format_significant(m.intensity()) : "",
          m.flop_per_s() > 0 ? format_significant(m.flop_per_s() / 1e12) : "",
          html_number(c.placement.percent_of_roof),
          c.placement.bound == Bound::unknown ? "" : bound_name(c.placement.bound), c.placement.pipe,
          html_number(m.l2_hit_pct), html_number(m.occupancy_pct), html_signed_percent(c.flops),
          html_signed_percent(c.bytes), c.flops.flagged() || c.bytes.flagged() ? "over 20%" : ""},
         "",
         ""});
  }
  const CounterSet& set = report.counters;
  return "<h2>Hardware counters</h2>\n<p class=\"muted\">" + std::to_string(set.metrics.size()) +
         " metric(s), " + std::to_string(set.passes) + " replay pass(es)" +
         (set.chip.empty() ? "" : " on " + html_escaped(set.chip)) +
         (set.note.empty() ? "" : "; " + html_escaped(set.note)) + "</p>\n" +
         html_table({"scope", "DRAM GB", "FLOP/B", "TFLOP/s", "% roof", "bound", "pipe", "L2 hit %",
                     "occupancy %", "declared FLOPs", "declared bytes", "flag"},
                    rows, {0, 5, 6, 11}) +
         "<h2>Roofline</h2>\n" + to_roofline_svg(report);
}

inline const char* category_colour(const std::string& category) {
  static const std::pair<const char*, const char*> colours[] = {
      {"gemm", "#4e79a7"},   {"attention", "#f28e2b"},     {"softmax", "#e15759"},
      {"norm", "#76b7b2"},   {"reduction", "#59a14f"},     {"elementwise", "#edc948"},
      {"memory", "#b07aa1"}, {"communication", "#ff9da7"}, {"other", "#9c755f"}};
  for (const auto& [name, colour] : colours)
    if (category == name) return colour;
  return "#999";
}

// One set of GPU activities: the category bar with its legend, and the
// longest kernels by name (at most 200 rows).
inline std::string html_kernel_table(const std::vector<KernelRecord>& records) {
  constexpr std::size_t most_rows = 200;
  std::string html = "<div class=\"bar\">";
  std::string legend = "<div class=\"legend\">";
  std::vector<CategoryShare> shares = category_breakdown(records);
  std::stable_sort(shares.begin(), shares.end(),
                   [](const CategoryShare& a, const CategoryShare& b) { return a.total_ns > b.total_ns; });
  for (const CategoryShare& share : shares) {
    if (share.total_ns <= 0) continue;
    const std::string colour = category_colour(share.category);
    html += "<div style=\"width:" + format_fixed(share.percent, 3) + "%;background:" + colour +
            "\" title=\"" + html_escaped(share.category) + ": " +
            format_significant(static_cast<double>(share.total_ns) / 1e6) + " ms\"></div>";
    legend += "<span><span class=\"swatch\" style=\"background:" + colour + "\"></span>" +
              html_escaped(share.category) + " " + format_significant(share.percent) + "%</span>";
  }
  html += "</div>\n" + legend + "</div>\n";
  std::vector<KernelSummaryRow> summary = kern_sum(records);
  std::stable_sort(summary.begin(), summary.end(), [](const KernelSummaryRow& a, const KernelSummaryRow& b) {
    return a.total_ns > b.total_ns;
  });
  if (summary.size() > most_rows) {
    html += "<p class=\"muted\">The " + std::to_string(most_rows) + " longest of " +
            std::to_string(summary.size()) + " kernels by total time.</p>\n";
    summary.resize(most_rows);
  }
  std::vector<HtmlTableRow> rows;
  for (const KernelSummaryRow& k : summary)
    rows.push_back(
        {{format_significant(k.time_percent), format_significant(static_cast<double>(k.total_ns) / 1e6),
          std::to_string(k.instances), format_significant(k.avg_ns / 1e6),
          format_significant(k.median_ns / 1e6), format_significant(static_cast<double>(k.min_ns) / 1e6),
          format_significant(static_cast<double>(k.max_ns) / 1e6), k.category, k.name},
         "",
         ""});
  return html + html_table({"time %", "total ms", "instances", "avg ms", "med ms", "min ms", "max ms",
                            "category", "name"},
                           rows, {7, 8});
}

// Every GPU activity, then those inside each scope (kernels of its
// descendants included) folded away; the script shows the chosen scope's.
inline std::string html_kernels(const Report& report) {
  std::string html =
      "<h2>Kernels</h2>\n<section class=\"kernels\" data-node=\"-1\">\n<p class=\"muted\">" +
      (report.kernels_cut() ? html_escaped(report.kernel_note()) +
                                  ": the newest GPU activities (the kernel summaries count every record)."
                            : "All " + std::to_string(report.kernels.size()) + " GPU activities.") +
      "<span class=\"with-script\"> Click a scope in the chart to show only its "
      "own.</span></p>\n" +
      html_kernel_table(report.kernels) + "</section>\n";
  const ScopeIndex index(report);
  const RecordsByNode grouped = records_by_node(report, index, Activities::all);
  for (std::size_t i = 0; i < report.nodes.size(); ++i) {
    const std::vector<KernelRecord>& records = grouped.inclusive[i];
    if (records.empty()) continue;
    std::int64_t total_ns = 0;
    for (const KernelRecord& record : records) total_ns += record.duration_ns();
    html += "<details class=\"kernels\" data-node=\"" + std::to_string(i) + "\"><summary>" +
            html_escaped(report.nodes[i].path) + ": " + std::to_string(records.size()) + " GPU activities, " +
            format_significant(static_cast<double>(total_ns) / 1e6) + " ms</summary>\n" +
            html_kernel_table(records) + "</details>\n";
  }
  return html + "<p id=\"no-kernels\" class=\"muted\" hidden></p>\n";
}

// The stacked allocations and the memory in use as one picture
// (to_memory_timeline_svg), and the largest allocations.
inline std::string html_memory_timeline(const MemoryTimeline& timeline) {
  MemoryTimelineSvgOptions options;
  options.title = "Device memory over time";
  options.width = 1200;
  std::string html = "<h2>Memory timeline</h2>\n" + to_memory_timeline_svg(timeline, options);
  if (timeline.allocations.empty()) return html;
  const std::pair<std::int64_t, std::int64_t> extent = timeline_extent(timeline, {});
  std::vector<HtmlTableRow> rows;
  for (const TimelineAllocation& a : largest_allocations(timeline, 15))
    rows.push_back(
        {{format_fixed(static_cast<double>(a.bytes) / 1048576, 1),
          format_significant(static_cast<double>(a.alloc_ns - extent.first) / 1e6),
          a.free_ns < 0 ? "live" : format_significant(static_cast<double>(a.free_ns - extent.first) / 1e6),
          a.scope_path.empty() ? "(no scope)" : a.scope_path},
         "",
         ""});
  return html + "<h3>Largest allocations</h3>\n" +
         html_table({"MiB", "allocated at ms", "freed at ms", "scope"}, rows, {3});
}

}  // namespace detail

struct HtmlOptions {
  std::string title = "gpuprof report";  // the page's title and heading
};

// The whole page as text.
inline std::string to_html(const Report& report, const HtmlOptions& options = {}) {
  const std::string escaped_title = detail::html_escaped(options.title);
  std::string page = "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>";
  page += escaped_title;
  page += "</title>\n<style>";
  page += detail::html_page_style();
  page += "</style>\n</head>\n<body>\n<h1>";
  page += escaped_title;
  page += "</h1>\n" + detail::html_environment_table(report);
  page +=
      "<h2>Scopes</h2>\n<p class=\"muted\">Width: total time of the scope (GPU time where GPU-timed, host "
      "time otherwise).<span class=\"with-script\"> Click a scope to zoom into it";
  page += report.kernels.empty() ? "" : " and show its kernels";
  page += "; click it again for the whole run.</span></p>\n";
  page += detail::html_icicle(report);
  page += detail::html_statistics(report);
  if (!report.counters.empty()) page += detail::html_counters(report);
  if (!report.kernels.empty()) page += detail::html_kernels(report);
  if (!report.memory_timeline.in_use.empty() || !report.memory_timeline.allocations.empty())
    page += detail::html_memory_timeline(report.memory_timeline);
  page += "<script>";
  page += detail::html_page_script();
  page += "</script>\n</body>\n</html>\n";
  return page;
}

// Written whole or not at all (temp file + rename); throws gpuprof::Error.
inline void write_html(const Report& report, const std::string& path, const HtmlOptions& options = {}) {
  write_file_atomically(path, to_html(report, options));
}

GPUPROF_NAMESPACE_END
