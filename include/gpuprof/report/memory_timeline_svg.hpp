// gpuprof/report/memory_timeline_svg.hpp: Report::memory_timeline as one
// SVG picture, the one PyTorch's memory viewer draws: the live allocations
// stacked over time, coloured by the scope that made them, with the device
// memory in use sampled at scope boundaries as a line over them, and chosen
// stretches of the run (phases such as forward and backward) as a ribbon
// above the plot with their beginnings marked across it.
//
// ```cpp
// #include <gpuprof/report/memory_timeline_svg.hpp>
// void draw(const gpuprof::Report& report) {
//   gpuprof::MemoryTimelineSvgOptions options;
//   options.title = "2.7B ctx 512 train step";
//   options.spans = gpuprof::scope_spans(report, {"forward", "backward", "optimizer step"});
//   gpuprof::write_memory_timeline_svg(report.memory_timeline, "memory.svg", options);
// }
// ```
//
// The file is self-contained (no script, no font, no network): any browser
// or image viewer opens it, and a markdown page can show it as an image.
// Axes: time in ms from the first event drawn (timeline_extent), memory in GiB.
#pragma once
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "../atomic_file.hpp"
#include "../detail/file_format.hpp"
#include "../memory_timeline.hpp"
#include "../detail/markup.hpp"
#include "../report_model.hpp"

GPUPROF_NAMESPACE_BEGIN

// A stretch of the run to shade and label (a phase such as "forward").
struct TimelineSpan {
  std::string label;
  std::int64_t begin_ns = 0;
  std::int64_t end_ns = 0;
};

// Every execution of the scopes named `names` (last path component), by begin time.
inline std::vector<TimelineSpan> scope_spans(const Report& report, const std::vector<std::string>& names) {
  std::vector<TimelineSpan> spans;
  for (const ScopeInstance& instance : report.instances) {
    if (instance.node < 0) continue;
    const std::string& name = report.nodes[static_cast<std::size_t>(instance.node)].name;
    if (std::find(names.begin(), names.end(), name) != names.end())
      spans.push_back({name, instance.host_begin_ns, instance.host_end_ns});
  }
  std::stable_sort(spans.begin(), spans.end(),
                   [](const TimelineSpan& a, const TimelineSpan& b) { return a.begin_ns < b.begin_ns; });
  return spans;
}

// From time_ns until the allocation's next step (or its release, or the end),
// its bottom edge lies `offset` bytes above zero.
struct StackStep {
  std::int64_t time_ns = 0;
  std::int64_t offset = 0;
};

struct StackedAllocations {
  std::vector<std::vector<StackStep>> steps;  // per allocation of the timeline, by time
  std::int64_t peak_bytes = 0;                // the highest top of the stack
};

// PyTorch's stacking: live allocations stacked in allocation order, so a
// release lets every allocation above it drop by its size. At equal times
// releases come first (an address freed and reused at once is not counted
// twice). Allocations never released stay to the end.
inline StackedAllocations stack_allocations(const MemoryTimeline& timeline) {
  struct Event {
    std::int64_t time_ns;
    bool allocation;
    std::size_t index;
  };
  std::vector<Event> events;
  for (std::size_t i = 0; i < timeline.allocations.size(); ++i) {
    const TimelineAllocation& a = timeline.allocations[i];
    events.push_back({a.alloc_ns, true, i});
    if (a.free_ns >= 0) events.push_back({a.free_ns, false, i});
  }
  std::stable_sort(events.begin(), events.end(), [](const Event& a, const Event& b) {
    return a.time_ns != b.time_ns ? a.time_ns < b.time_ns : !a.allocation && b.allocation;
  });
  StackedAllocations stacked;
  stacked.steps.resize(timeline.allocations.size());
  std::vector<std::size_t> live;  // in allocation order
  for (const Event& event : events) {
    if (event.allocation) live.push_back(event.index);
    else live.erase(std::find(live.begin(), live.end(), event.index));
    std::int64_t below = 0;
    for (const std::size_t j : live) {
      std::vector<StackStep>& steps = stacked.steps[j];
      if (steps.empty() || steps.back().offset != below) steps.push_back({event.time_ns, below});
      below += timeline.allocations[j].bytes;
    }
    stacked.peak_bytes = std::max(stacked.peak_bytes, below);
  }
  return stacked;
}

// The first and last moment the picture covers: every allocation, release,
// sample and span (first == last + 1 when there is nothing, or one moment).
inline std::pair<std::int64_t, std::int64_t> timeline_extent(const MemoryTimeline& timeline,
                                                             const std::vector<TimelineSpan>& spans) {
  std::int64_t first = std::numeric_limits<std::int64_t>::max(),
               last = std::numeric_limits<std::int64_t>::min();
  const auto cover = [&](std::int64_t t) {
    first = std::min(first, t);
    last = std::max(last, t);
  };
  for (const TimelineAllocation& a : timeline.allocations) {
    cover(a.alloc_ns);
    if (a.free_ns >= 0) cover(a.free_ns);
  }
  for (const MemoryUsePoint& p : timeline.in_use) cover(p.time_ns);
  for (const TimelineSpan& s : spans) {
    cover(s.begin_ns);
    cover(s.end_ns);
  }
  if (first > last) first = last = 0;
  if (last == first) last = first + 1;
  return {first, last};
}

struct MemoryTimelineSvgOptions {
  std::string title = "Device memory over time";
  std::vector<TimelineSpan> spans;  // the phase ribbon
  int width = 1000;                 // px
  int plot_height = 360;            // px, the chart without title, axis labels and legend
};

namespace detail {

// A tick step of 1, 2 or 5 times a power of ten giving at most `ticks` steps over `range`.
inline double nice_tick_step(double range, int ticks) {
  if (!(range > 0)) return 1;
  const double raw = range / ticks;
  const double magnitude = std::pow(10.0, std::floor(std::log10(raw)));
  for (const double m : {1.0, 2.0, 5.0})
    if (m * magnitude >= raw) return m * magnitude;
  return 10 * magnitude;
}

// "1.5 GiB", "32 MiB", "4 KiB": three significant digits in the largest unit that fits.
inline std::string svg_bytes(std::int64_t bytes) {
  const double b = static_cast<double>(bytes);
  if (b >= 1024.0 * 1024 * 1024) return svg_short_number(b / (1024.0 * 1024 * 1024)) + " GiB";
  if (b >= 1024.0 * 1024) return svg_short_number(b / (1024.0 * 1024)) + " MiB";
  if (b >= 1024.0) return svg_short_number(b / 1024.0) + " KiB";
  return std::to_string(bytes) + " B";
}

// The HTML report's colours: scopes in order of first allocation, hues a
// golden angle apart so neighbours differ; allocations outside any scope grey.
inline std::string scope_colour(std::size_t order, bool has_scope) {
  if (!has_scope) return "#b8bcc6";
  return "hsl(" + svg_number(std::fmod(static_cast<double>(order) * 137.5 + 190, 360)) + ",55%,58%)";
}

inline const char* span_colour(std::size_t order) {
  static const char* const palette[] = {"#4e79a7", "#f28e2b", "#59a14f", "#e15759", "#b07aa1", "#9c755f"};
  return palette[order % (sizeof palette / sizeof palette[0])];
}

}  // namespace detail

inline std::string to_memory_timeline_svg(const MemoryTimeline& timeline,
                                          const MemoryTimelineSvgOptions& options = {}) {
  constexpr double gib = 1024.0 * 1024.0 * 1024.0;
  const StackedAllocations stacked = stack_allocations(timeline);

  const std::pair<std::int64_t, std::int64_t> extent = timeline_extent(timeline, options.spans);
  const std::int64_t t0 = extent.first, t1 = extent.second;
  std::int64_t top_bytes = std::max<std::int64_t>(stacked.peak_bytes, 1);
  for (const MemoryUsePoint& p : timeline.in_use) top_bytes = std::max(top_bytes, p.bytes_in_use);

  // Layout: title, span labels, plot, time axis, legend rows.
  const double left = 70, right = options.width - 20.0, top = 54, height = options.plot_height;
  const double bottom = top + height;
  const double ms_range = static_cast<double>(t1 - t0) / 1e6;
  const double gib_step = detail::nice_tick_step(static_cast<double>(top_bytes) / gib, 6);
  const double gib_top = std::ceil(static_cast<double>(top_bytes) / gib / gib_step) * gib_step;
  const double ms_step = detail::nice_tick_step(ms_range, 10);
  const auto x = [&](std::int64_t t) {
    return left + (right - left) * static_cast<double>(t - t0) / static_cast<double>(t1 - t0);
  };
  const auto y = [&](double bytes) { return bottom - height * bytes / gib / gib_top; };

  // Legend entries: scopes in order of first allocation, with what they hold.
  std::vector<std::string> scopes;
  std::map<std::string, std::int64_t> scope_bytes;
  for (const TimelineAllocation& a : timeline.allocations) {
    if (scope_bytes.find(a.scope_path) == scope_bytes.end()) scopes.push_back(a.scope_path);
    scope_bytes[a.scope_path] += a.bytes;
  }
  std::vector<std::string> span_labels;
  for (const TimelineSpan& s : options.spans)
    if (std::find(span_labels.begin(), span_labels.end(), s.label) == span_labels.end())
      span_labels.push_back(s.label);
  const std::size_t legend_rows =
      scopes.size() + (timeline.in_use.empty() ? 0 : 1) + (span_labels.empty() ? 0 : 1);
  const double legend_top = bottom + 42;
  const double total_height = legend_top + 18.0 * static_cast<double>(legend_rows) + 10;

  std::string svg = "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" + std::to_string(options.width) +
                    "\" height=\"" + detail::svg_number(total_height) + "\" viewBox=\"0 0 " +
                    std::to_string(options.width) + " " + detail::svg_number(total_height) +
                    "\" font-family=\"sans-serif\" font-size=\"11\">\n";
  svg += "<title>" + detail::html_escaped(options.title) + "</title>\n";
  svg += "<rect width=\"100%\" height=\"100%\" fill=\"#fff\"/>\n";
  svg += "<text x=\"" + detail::svg_number(left) + "\" y=\"20\" font-size=\"15\" font-weight=\"bold\">" +
         detail::html_escaped(options.title) + "</text>\n";

  // Phases: a ribbon above the plot, labelled where the label fits.
  for (const TimelineSpan& s : options.spans) {
    const std::size_t order = static_cast<std::size_t>(
        std::find(span_labels.begin(), span_labels.end(), s.label) - span_labels.begin());
    const double x0 = x(s.begin_ns), w = std::max(x(s.end_ns) - x0, 0.5);
    svg += "<rect class=\"span\" x=\"" + detail::svg_number(x0) + "\" y=\"" + detail::svg_number(top - 20) +
           "\" width=\"" + detail::svg_number(w) + "\" height=\"14\" fill=\"" + detail::span_colour(order) +
           "\" fill-opacity=\"0.35\"><title>" + detail::html_escaped(s.label) + ": " +
           detail::svg_short_number(static_cast<double>(s.end_ns - s.begin_ns) / 1e6) +
           " ms</title></rect>\n";
    if (w > 6.5 * static_cast<double>(s.label.size()) + 4)
      svg += "<text x=\"" + detail::svg_number(x0 + 2) + "\" y=\"" + detail::svg_number(top - 9) + "\">" +
             detail::html_escaped(s.label) + "</text>\n";
  }

  // One polygon per allocation: its top edge left to right, its bottom edge back.
  for (std::size_t i = 0; i < timeline.allocations.size(); ++i) {
    const TimelineAllocation& a = timeline.allocations[i];
    const std::vector<StackStep>& steps = stacked.steps[i];
    const std::int64_t end = a.free_ns >= 0 ? a.free_ns : t1;
    std::string upper, lower;
    for (std::size_t k = 0; k < steps.size(); ++k) {
      const std::int64_t next = k + 1 < steps.size() ? steps[k + 1].time_ns : end;
      const double offset = static_cast<double>(steps[k].offset);
      upper += detail::svg_number(x(steps[k].time_ns)) + "," +
               detail::svg_number(y(offset + static_cast<double>(a.bytes))) + " " +
               detail::svg_number(x(next)) + "," +
               detail::svg_number(y(offset + static_cast<double>(a.bytes))) + " ";
      lower = detail::svg_number(x(next)) + "," + detail::svg_number(y(offset)) + " " +
              detail::svg_number(x(steps[k].time_ns)) + "," + detail::svg_number(y(offset)) + " " + lower;
    }
    const std::size_t order =
        static_cast<std::size_t>(std::find(scopes.begin(), scopes.end(), a.scope_path) - scopes.begin());
    svg += "<polygon class=\"allocation\" points=\"" + upper +
           lower.substr(0, lower.empty() ? 0 : lower.size() - 1) + "\" fill=\"" +
           detail::scope_colour(order, !a.scope_path.empty()) +
           "\" stroke=\"#fff\" stroke-width=\"0.5\"><title>" + detail::svg_bytes(a.bytes) + " by " +
           detail::html_escaped(a.scope_path.empty() ? "(no scope)" : a.scope_path) + ", " +
           detail::svg_short_number(static_cast<double>(a.alloc_ns - t0) / 1e6) + " to " +
           (a.free_ns >= 0 ? detail::svg_short_number(static_cast<double>(a.free_ns - t0) / 1e6) + " ms"
                           : "the end (live)") +
           "</title></polygon>\n";
  }

  // Where each phase begins, over the allocations.
  for (const TimelineSpan& s : options.spans)
    svg += "<line x1=\"" + detail::svg_number(x(s.begin_ns)) + "\" y1=\"" + detail::svg_number(top - 6) +
           "\" x2=\"" + detail::svg_number(x(s.begin_ns)) + "\" y2=\"" + detail::svg_number(bottom) +
           "\" stroke=\"#1d2330\" stroke-opacity=\"0.3\" stroke-dasharray=\"3,3\"/>\n";

  if (!timeline.in_use.empty()) {
    svg += "<polyline class=\"in-use\" fill=\"none\" stroke=\"#1d2330\" stroke-width=\"1.5\" points=\"";
    for (std::size_t k = 0; k < timeline.in_use.size(); ++k)
      svg += (k ? " " : "") + detail::svg_number(x(timeline.in_use[k].time_ns)) + "," +
             detail::svg_number(y(static_cast<double>(timeline.in_use[k].bytes_in_use)));
    svg += "\"/>\n";
  }

  // Axes and grid.
  svg += "<g class=\"axes\" stroke=\"#889\" stroke-width=\"1\">\n<line x1=\"" + detail::svg_number(left) +
         "\" y1=\"" + detail::svg_number(bottom) + "\" x2=\"" + detail::svg_number(right) + "\" y2=\"" +
         detail::svg_number(bottom) + "\"/>\n<line x1=\"" + detail::svg_number(left) + "\" y1=\"" +
         detail::svg_number(top) + "\" x2=\"" + detail::svg_number(left) + "\" y2=\"" +
         detail::svg_number(bottom) + "\"/>\n</g>\n";
  for (int k = 0; k * gib_step <= gib_top * (1 + 1e-9); ++k) {
    const double yy = y(k * gib_step * gib);
    svg += "<line x1=\"" + detail::svg_number(left) + "\" y1=\"" + detail::svg_number(yy) + "\" x2=\"" +
           detail::svg_number(right) + "\" y2=\"" + detail::svg_number(yy) +
           "\" stroke=\"#e4e6eb\" stroke-width=\"0.5\"/>\n";
    svg += "<text x=\"" + detail::svg_number(left - 6) + "\" y=\"" + detail::svg_number(yy + 4) +
           "\" text-anchor=\"end\">" + detail::svg_short_number(k * gib_step) + " GiB</text>\n";
  }
  for (int k = 0; k * ms_step <= ms_range * (1 + 1e-9); ++k) {
    const double xx = left + (right - left) * k * ms_step / ms_range;
    svg += "<text x=\"" + detail::svg_number(xx) + "\" y=\"" + detail::svg_number(bottom + 15) +
           "\" text-anchor=\"middle\">" + detail::svg_short_number(k * ms_step) + "</text>\n";
  }
  svg += "<text x=\"" + detail::svg_number((left + right) / 2) + "\" y=\"" + detail::svg_number(bottom + 31) +
         "\" text-anchor=\"middle\">ms since the first event drawn</text>\n";

  // Legend: the scopes that allocated, the sampled line, the phases.
  double row = legend_top;
  for (std::size_t order = 0; order < scopes.size(); ++order, row += 18) {
    const std::string& scope = scopes[order];
    svg += "<rect class=\"legend\" x=\"" + detail::svg_number(left) + "\" y=\"" +
           detail::svg_number(row - 10) + "\" width=\"12\" height=\"12\" fill=\"" +
           detail::scope_colour(order, !scope.empty()) + "\"/>\n";
    svg += "<text x=\"" + detail::svg_number(left + 18) + "\" y=\"" + detail::svg_number(row) + "\">" +
           detail::html_escaped(scope.empty() ? "(no scope)" : scope) + ": " +
           detail::svg_bytes(scope_bytes[scope]) + " allocated</text>\n";
  }
  if (!timeline.in_use.empty()) {
    svg += "<line x1=\"" + detail::svg_number(left) + "\" y1=\"" + detail::svg_number(row - 4) + "\" x2=\"" +
           detail::svg_number(left + 12) + "\" y2=\"" + detail::svg_number(row - 4) +
           "\" stroke=\"#1d2330\" stroke-width=\"1.5\"/>\n";
    svg += "<text x=\"" + detail::svg_number(left + 18) + "\" y=\"" + detail::svg_number(row) +
           "\">device memory in use (cudaMemGetInfo, whole device) at scope boundaries</text>\n";
    row += 18;
  }
  if (!span_labels.empty()) {
    double at = left;
    for (std::size_t order = 0; order < span_labels.size(); ++order) {
      svg += "<rect x=\"" + detail::svg_number(at) + "\" y=\"" + detail::svg_number(row - 10) +
             "\" width=\"12\" height=\"12\" fill=\"" + detail::span_colour(order) +
             "\" fill-opacity=\"0.3\"/>\n";
      svg += "<text x=\"" + detail::svg_number(at + 18) + "\" y=\"" + detail::svg_number(row) + "\">" +
             detail::html_escaped(span_labels[order]) + "</text>\n";
      at += 18 + 6.5 * static_cast<double>(span_labels[order].size()) + 16;
    }
  }
  return svg + "</svg>\n";
}

// Written whole or not at all (temp file + rename); throws gpuprof::Error.
inline void write_memory_timeline_svg(const MemoryTimeline& timeline, const std::string& path,
                                      const MemoryTimelineSvgOptions& options = {}) {
  write_file_atomically(path, to_memory_timeline_svg(timeline, options));
}

// The one format of a timeline, for a name ending .svg.
inline void write(const MemoryTimeline& timeline, const std::string& path,
                  const MemoryTimelineSvgOptions& options = {}) {
  detail::write_by_extension(path, "a memory timeline",
                             {{".svg", [&] { return to_memory_timeline_svg(timeline, options); }}});
}

GPUPROF_NAMESPACE_END
