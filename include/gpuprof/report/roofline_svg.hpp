// gpuprof/report/roofline_svg.hpp: a report's hardware counters as one
// roofline picture. Log-log axes: arithmetic intensity (FLOPs per measured
// DRAM byte) across, achieved FLOP/s up; one point per scope (and per
// kernel, when the counters have kernel ranges), labelled with its path
// below its top-level scope, no two labels overlapping, under the card's
// ceilings (Report::ceilings): the DRAM bandwidth slope, a flat roof per
// pipe, and the ridge points where they meet. Where a scope declared Work
// (flops and bytes), a hollow square marks what the declaration implies at
// the measured time, joined to the measured point, in red with the
// difference when it is over the 20 % tolerance (roofline.hpp).
//
// ```cpp
// #include <gpuprof/report/roofline_svg.hpp>
// void draw(const gpuprof::Report& report) { gpuprof::write_roofline_svg(report, "roofline.svg"); }
// ```
//
// Self-contained like memory_timeline_svg.hpp; html.hpp shows the same
// picture. Ranges that cannot be placed (no FLOPs, bytes or time measured)
// are listed under the plot instead.
#pragma once
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdio>
#include <initializer_list>
#include <string>
#include <vector>

#include "../atomic_file.hpp"
#include "../detail/markup.hpp"
#include "../report_model.hpp"
#include "../table.hpp"
#include "scope_counters.hpp"

GPUPROF_NAMESPACE_BEGIN

// One scope or kernel as the picture draws it.
struct RooflinePoint {
  std::string label;
  bool kernel = false;
  double intensity = 0;            // measured FLOPs per DRAM byte
  double flop_per_s = 0;           // measured
  double declared_intensity = 0;   // 0 when no Work{flops, bytes} was declared
  double declared_flop_per_s = 0;  // declared FLOPs over the measured time per call
  std::string flag;                // "declared FLOPs +35.0 %" when over the tolerance, else ""
  std::string omitted;             // why it cannot be drawn; "" when it can
};

namespace detail {
inline std::string roofline_omission(const RangeMeasures& m) {
  if (m.flops <= 0) return "no FLOPs measured";
  if (m.dram_bytes <= 0) return "no DRAM bytes measured";
  if (m.seconds <= 0) return "no duration measured";
  if (!std::isfinite(m.intensity()) || !std::isfinite(m.flop_per_s())) return "values out of range";
  return "";
}

// At most `bytes` bytes of `text`, cut before a UTF-8 sequence, "…" added when cut.
inline std::string shortened(const std::string& text, std::size_t bytes) {
  if (text.size() <= bytes) return text;
  std::size_t end = bytes;
  while (end > 0 && (static_cast<unsigned char>(text[end]) & 0xC0) == 0x80) --end;
  return text.substr(0, end) + "…";
}

// What a scope's point is labelled with: its path below its top-level scope
// ("forward/attention"), a top-level scope by its name. The full path is in
// the point's tooltip.
inline std::string point_caption(const RooflinePoint& point) {
  if (point.kernel) return point.label;
  const std::size_t slash = point.label.find('/');
  return slash == std::string::npos ? point.label : point.label.substr(slash + 1);
}

// Places text boxes inside the frame ([x_min, x_max], and [y_min, y_max]
// when given) so that none overlaps one placed before or a marker kept
// clear: where asked if that is free, else at the nearest free offset up or
// down, in steps of one line (a label beside a point may also change sides);
// when none is free within `max_lines`, where asked.
class LabelPlacer {
 public:
  struct Spot {
    double x;
    bool anchor_end;  // the text ends at x (else starts there)
    double baseline;
  };
  LabelPlacer(double x_min, double x_max, double y_min = -1e300, double y_max = 1e300)
      : x_min_(x_min), x_max_(x_max), y_min_(y_min), y_max_(y_max) {}

  // A marker `half` px either side of (x, y) that no text may cover.
  void keep_clear(double x, double y, double half) {
    boxes_.push_back({x - half, x + half, y - half, y + half});
  }

  // Text of `characters` characters anchored at x, asked at `baseline`.
  double place(double x, bool anchor_end, std::size_t characters, double baseline) {
    return place_any({{x, anchor_end, baseline}}, characters).baseline;
  }
  // A point's label: `gap` px left of the point when `prefer_left`, else
  // right of it, or on the other side when that is free and this is not.
  Spot place_beside(double point_x, bool prefer_left, double gap, std::size_t characters, double baseline) {
    const Spot left{point_x - gap, true, baseline}, right{point_x + gap, false, baseline};
    return prefer_left ? place_any({left, right}, characters) : place_any({right, left}, characters);
  }

 private:
  struct Box {
    double x0, x1, top, bottom;
  };
  // 11 px sans-serif: an average character's width, the line's extent.
  static constexpr double char_width = 6.4, line_height = 12, ascent = 9, descent = 2.5;
  static constexpr int max_lines = 12;

  Box box_of(const Spot& spot, std::size_t characters) const {
    const double width = char_width * static_cast<double>(characters);
    const double x0 = spot.anchor_end ? spot.x - width : spot.x;
    return {x0, x0 + width, spot.baseline - ascent, spot.baseline + descent};
  }
  bool free(const Box& box) const {
    if (box.x0 < x_min_ || box.x1 > x_max_ || box.top < y_min_ || box.bottom > y_max_) return false;
    for (const Box& b : boxes_)
      if (box.x0 < b.x1 && b.x0 < box.x1 && box.top < b.bottom && b.top < box.bottom) return false;
    return true;
  }
  // The first free of the choices at offset 0, +1, -1, +2, -2, ... lines.
  Spot place_any(std::initializer_list<Spot> choices, std::size_t characters) {
    for (int step = 0; step <= 2 * max_lines; ++step) {
      const int offset = (step + 1) / 2 * (step % 2 == 1 ? 1 : -1);
      for (Spot spot : choices) {
        spot.baseline += line_height * offset;
        const Box box = box_of(spot, characters);
        if (free(box)) {
          boxes_.push_back(box);
          return spot;
        }
      }
    }
    const Spot asked = *choices.begin();
    boxes_.push_back(box_of(asked, characters));
    return asked;
  }

  double x_min_, x_max_, y_min_, y_max_;
  std::vector<Box> boxes_;
};

inline std::string work_flag(const char* what, const WorkCheck& check) {
  if (!check.flagged()) return "";
  return std::string("declared ") + what + " " + (check.difference_pct() > 0 ? "+" : "") +
         format_fixed(check.difference_pct(), 1) + " %";
}
}  // namespace detail

// Every scope with counters (in tree order), then every kernel range.
inline std::vector<RooflinePoint> roofline_points(const Report& report) {
  std::vector<RooflinePoint> points;
  for (std::size_t i = 0; i < report.nodes.size(); ++i) {
    const ScopeCounters c = scope_counters(report, i);
    if (c.range == nullptr) continue;
    const ScopeNode& node = report.nodes[i];
    const RangeMeasures& m = c.measured;
    RooflinePoint p{node.path, false, m.intensity(), m.flop_per_s(), 0, 0, "", detail::roofline_omission(m)};
    const double seconds_per_call = node.count > 0 ? m.seconds / static_cast<double>(node.count) : 0;
    if (node.work.flops > 0 && node.work.bytes > 0 && seconds_per_call > 0) {
      p.declared_intensity = node.work.flops / node.work.bytes;
      p.declared_flop_per_s = node.work.flops / seconds_per_call;
    }
    for (const std::string& flag : {detail::work_flag("FLOPs", c.flops), detail::work_flag("bytes", c.bytes)})
      if (!flag.empty()) p.flag += (p.flag.empty() ? "" : ", ") + flag;
    points.push_back(std::move(p));
  }
  for (const CounterRange& range : report.counters.kernels) {
    const RangeMeasures m = measure_range(range);
    points.push_back({detail::shortened(range.name, 48), true, m.intensity(), m.flop_per_s(), 0, 0, "",
                      detail::roofline_omission(m)});
  }
  return points;
}

struct RooflineSvgOptions {
  std::string title = "Roofline";
  int width = 960;        // px
  int plot_height = 480;  // px, the plot without title, axis labels and the list of omitted ranges
  // Points labelled, highest FLOP/s first; the rest keep their tooltips. More
  // labels would not be readable, and placing them costs time quadratic in their number.
  std::size_t max_labels = 200;
};

namespace detail {
// Whole decades around [lo, hi], a margin wide enough that no point sits on
// the frame (one more decade each side when they coincide).
inline std::pair<double, double> decade_range(double lo, double hi) {
  double a = std::floor(std::log10(lo) - 0.1), b = std::ceil(std::log10(hi) + 0.1);
  if (a == b) a -= 1, b += 1;
  return {a, b};
}

// 10^decade as a tick label: "0.01", "1000", "1e+06".
inline std::string decade_label(double decade) {
  char text[32];
  std::snprintf(text, sizeof text, "%g", std::pow(10.0, decade));
  return text;
}

inline std::string roofline_picture(const std::vector<RooflinePoint>& points,
                                    const RooflineCeilings& ceilings, const RooflineSvgOptions& options) {
  const double bandwidth = ceilings.dram_bytes_per_s;
  std::vector<PipeCeiling> roofs;
  for (const PipeCeiling& c : ceilings.pipes)
    if (c.flop_per_s > 0 && std::isfinite(c.flop_per_s)) roofs.push_back(c);

  // The axes cover every drawn point, declaration and ridge.
  std::vector<double> xs, ys;
  std::vector<const RooflinePoint*> drawn, omitted;
  for (const RooflinePoint& p : points) {
    if (!p.omitted.empty()) {
      omitted.push_back(&p);
      continue;
    }
    drawn.push_back(&p);
    xs.push_back(p.intensity), ys.push_back(p.flop_per_s);
    if (p.declared_intensity > 0) xs.push_back(p.declared_intensity), ys.push_back(p.declared_flop_per_s);
  }
  for (const PipeCeiling& c : roofs) {
    ys.push_back(c.flop_per_s);
    if (bandwidth > 0) xs.push_back(c.flop_per_s / bandwidth);
  }
  const auto finite_positive = [](std::vector<double>& v) {
    v.erase(std::remove_if(v.begin(), v.end(), [](double d) { return !(d > 0 && std::isfinite(d)); }),
            v.end());
  };
  finite_positive(xs), finite_positive(ys);
  // Plain doubles, not structured bindings: C++17 lambdas cannot capture those.
  const std::pair<double, double> x_decades =
      xs.empty() ? std::pair{-1.0, 3.0}
                 : detail::decade_range(*std::min_element(xs.begin(), xs.end()),
                                        *std::max_element(xs.begin(), xs.end()));
  const std::pair<double, double> y_decades =
      ys.empty() ? std::pair{9.0, 15.0}
                 : detail::decade_range(*std::min_element(ys.begin(), ys.end()),
                                        *std::max_element(ys.begin(), ys.end()));
  const double x_lo = x_decades.first, x_hi = x_decades.second;
  const double y_lo = y_decades.first, y_hi = y_decades.second;

  const double left = 80, right = options.width - 20.0, top = 44, height = options.plot_height;
  const double bottom = top + height;
  const auto x = [&](double v) { return left + (right - left) * (std::log10(v) - x_lo) / (x_hi - x_lo); };
  const auto y = [&](double v) { return bottom - height * (std::log10(v) - y_lo) / (y_hi - y_lo); };
  const bool unlabelled = drawn.size() > options.max_labels;
  const double total_height =
      bottom + 50 + 16.0 * static_cast<double>(omitted.size() + (omitted.empty() ? 0 : 1) + unlabelled);

  std::string svg = "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" + std::to_string(options.width) +
                    "\" height=\"" + svg_number(total_height) + "\" viewBox=\"0 0 " +
                    std::to_string(options.width) + " " + svg_number(total_height) +
                    "\" font-family=\"sans-serif\" font-size=\"11\">\n";
  svg += "<title>" + detail::html_escaped(options.title) + "</title>\n";
  svg += "<rect width=\"100%\" height=\"100%\" fill=\"#fff\"/>\n";
  svg += "<text x=\"" + svg_number(left) + "\" y=\"20\" font-size=\"15\" font-weight=\"bold\">" +
         detail::html_escaped(options.title) + "</text>\n";
  if (!ceilings.source.empty())  // where the roofs come from: a data sheet, a measurement, the user
    svg += "<text class=\"ceilings-source\" x=\"" + svg_number(left) +
           "\" y=\"36\" fill=\"#556\">ceilings: " + detail::html_escaped(ceilings.source) + "</text>\n";
  svg += "<clipPath id=\"roofline-plot\"><rect x=\"" + svg_number(left) + "\" y=\"" + svg_number(top) +
         "\" width=\"" + svg_number(right - left) + "\" height=\"" + svg_number(height) + "\"/></clipPath>\n";

  // Decade grid and labels; FLOP/s shown as TFLOP/s.
  for (double d = x_lo; d <= x_hi; ++d) {
    const double px = x(std::pow(10.0, d));
    svg += "<line x1=\"" + svg_number(px) + "\" y1=\"" + svg_number(top) + "\" x2=\"" + svg_number(px) +
           "\" y2=\"" + svg_number(bottom) + "\" stroke=\"#e4e6eb\"/>\n<text x=\"" + svg_number(px) +
           "\" y=\"" + svg_number(bottom + 14) + "\" text-anchor=\"middle\">" + detail::decade_label(d) +
           "</text>\n";
  }
  for (double d = y_lo; d <= y_hi; ++d) {
    const double py = y(std::pow(10.0, d));
    svg += "<line x1=\"" + svg_number(left) + "\" y1=\"" + svg_number(py) + "\" x2=\"" + svg_number(right) +
           "\" y2=\"" + svg_number(py) + "\" stroke=\"#e4e6eb\"/>\n<text x=\"" + svg_number(left - 6) +
           "\" y=\"" + svg_number(py + 4) + "\" text-anchor=\"end\">" + detail::decade_label(d - 12) +
           "</text>\n";
  }
  svg += "<rect x=\"" + svg_number(left) + "\" y=\"" + svg_number(top) + "\" width=\"" +
         svg_number(right - left) + "\" height=\"" + svg_number(height) +
         "\" fill=\"none\" stroke=\"#889\"/>\n";
  svg += "<text x=\"" + svg_number((left + right) / 2) + "\" y=\"" + svg_number(bottom + 32) +
         "\" text-anchor=\"middle\">arithmetic intensity, FLOPs per DRAM byte (measured)</text>\n";
  svg += "<text transform=\"translate(16 " + svg_number((top + bottom) / 2) +
         ") rotate(-90)\" text-anchor=\"middle\">achieved TFLOP/s (measured)</text>\n";

  // Ceilings: the bandwidth slope up to the highest ridge, each pipe's flat
  // roof from its ridge on, the ridges marked.
  svg += "<g clip-path=\"url(#roofline-plot)\" stroke-width=\"2\">\n";
  const double x_min = std::pow(10.0, x_lo), x_max = std::pow(10.0, x_hi);
  double top_ridge = x_max;
  if (bandwidth > 0 && !roofs.empty()) {
    top_ridge = 0;
    for (const PipeCeiling& c : roofs) top_ridge = std::max(top_ridge, c.flop_per_s / bandwidth);
  }
  if (bandwidth > 0)
    svg += "<line class=\"ceiling bandwidth\" x1=\"" + svg_number(x(x_min)) + "\" y1=\"" +
           svg_number(y(bandwidth * x_min)) + "\" x2=\"" + svg_number(x(top_ridge)) + "\" y2=\"" +
           svg_number(y(bandwidth * top_ridge)) + "\" stroke=\"#333\"><title>DRAM " +
           format_significant(bandwidth / 1e9) + " GB/s</title></line>\n";
  for (const PipeCeiling& c : roofs) {
    const double ridge = bandwidth > 0 ? c.flop_per_s / bandwidth : x_min;
    svg += "<line class=\"ceiling pipe\" x1=\"" + svg_number(x(std::max(ridge, x_min))) + "\" y1=\"" +
           svg_number(y(c.flop_per_s)) + "\" x2=\"" + svg_number(right) + "\" y2=\"" +
           svg_number(y(c.flop_per_s)) + "\" stroke=\"#333\"/>\n";
    if (bandwidth > 0)
      svg += "<circle class=\"ridge\" cx=\"" + svg_number(x(ridge)) + "\" cy=\"" +
             svg_number(y(c.flop_per_s)) + "\" r=\"3\" fill=\"#333\"><title>" + detail::html_escaped(c.pipe) +
             " ridge: " + svg_short_number(ridge) + " FLOP/B</title></circle>\n";
  }
  svg += "</g>\n";
  // Every label goes through one placer, the ceilings' first, so that no two overlap and none
  // covers a point or a declaration's square.
  // A line above the frame is free for the top ceiling's label; nothing goes higher, into the title.
  detail::LabelPlacer placer(left, right, top - 12, bottom);
  for (const RooflinePoint* p : drawn) {
    placer.keep_clear(x(p->intensity), y(p->flop_per_s), p->kernel ? 3.5 : 5);
    if (p->declared_intensity > 0) placer.keep_clear(x(p->declared_intensity), y(p->declared_flop_per_s), 4);
  }
  for (const PipeCeiling& c : roofs) {
    const std::string text =
        c.pipe + " " + format_significant(c.flop_per_s / 1e12) + " TFLOP/s" +
        (bandwidth > 0 ? ", ridge " + format_significant(c.flop_per_s / bandwidth) + " FLOP/B" : "");
    const double label_y = placer.place(right - 4, true, display_width(text), y(c.flop_per_s) - 4);
    svg += "<text class=\"ceiling-label\" x=\"" + svg_number(right - 4) + "\" y=\"" + svg_number(label_y) +
           "\" text-anchor=\"end\">" + detail::html_escaped(text) + "</text>\n";
  }
  if (bandwidth > 0) {
    const std::string text = "DRAM " + format_significant(bandwidth / 1e9) + " GB/s (slope)";
    svg += "<text class=\"ceiling-label\" x=\"" + svg_number(left + 6) + "\" y=\"" +
           svg_number(placer.place(left + 6, false, display_width(text), top + 14)) + "\">" +
           detail::html_escaped(text) + "</text>\n";
  }

  // Declarations first, so the measured points are drawn over them.
  for (const RooflinePoint* drawn_point : drawn) {
    const RooflinePoint& p = *drawn_point;
    if (p.declared_intensity <= 0) continue;
    const char* colour = p.flag.empty() ? "#59a14f" : "#d62728";
    const double dx = x(p.declared_intensity), dy = y(p.declared_flop_per_s);
    svg += "<line class=\"declared-link\" x1=\"" + svg_number(x(p.intensity)) + "\" y1=\"" +
           svg_number(y(p.flop_per_s)) + "\" x2=\"" + svg_number(dx) + "\" y2=\"" + svg_number(dy) +
           "\" stroke=\"" + colour + "\" stroke-dasharray=\"4 3\"/>\n<rect class=\"declared\" data-name=\"" +
           detail::html_escaped(p.label) + "\" x=\"" + svg_number(dx - 4) + "\" y=\"" + svg_number(dy - 4) +
           "\" width=\"8\" height=\"8\" fill=\"none\" stroke=\"" + colour + "\"><title>" +
           detail::html_escaped(p.label) + " as declared: " + svg_short_number(p.declared_intensity) +
           " FLOP/B, " + svg_short_number(p.declared_flop_per_s / 1e12) + " TFLOP/s</title></rect>\n";
  }
  // Points, then their labels and flags, top of the picture first, each
  // moved off the ones placed before and joined to its point when moved.
  std::stable_sort(drawn.begin(), drawn.end(), [](const RooflinePoint* a, const RooflinePoint* b) {
    return a->flop_per_s > b->flop_per_s;
  });
  for (const RooflinePoint* p : drawn)
    svg += std::string("<circle class=\"point ") + (p->kernel ? "kernel" : "scope") + "\" data-name=\"" +
           detail::html_escaped(p->label) + "\" cx=\"" + svg_number(x(p->intensity)) + "\" cy=\"" +
           svg_number(y(p->flop_per_s)) + "\" r=\"" + (p->kernel ? "3.5" : "5") + "\" fill=\"" +
           (p->kernel ? "#76b7b2" : "#4e79a7") + "\"><title>" + detail::html_escaped(p->label) + ": " +
           svg_short_number(p->intensity) + " FLOP/B, " + svg_short_number(p->flop_per_s / 1e12) +
           " TFLOP/s</title></circle>\n";
  for (std::size_t i = 0; i < std::min(drawn.size(), options.max_labels); ++i) {
    const RooflinePoint* p = drawn[i];
    const double px = x(p->intensity), py = y(p->flop_per_s);
    const std::string caption = detail::point_caption(*p);
    // Labels of points in the right third read leftwards, so they stay inside the frame.
    const detail::LabelPlacer::Spot label =
        placer.place_beside(px, px > left + 2 * (right - left) / 3, 7, display_width(caption), py - 5);
    if (std::abs(label.baseline - (py - 5)) > 1)
      svg += "<line class=\"leader\" x1=\"" + svg_number(px) + "\" y1=\"" + svg_number(py) + "\" x2=\"" +
             svg_number(label.x) + "\" y2=\"" + svg_number(label.baseline - 4) + "\" stroke=\"#aab\"/>\n";
    svg += std::string("<text class=\"point-label\" x=\"") + svg_number(label.x) + "\" y=\"" +
           svg_number(label.baseline) + (label.anchor_end ? "\" text-anchor=\"end\">" : "\">") +
           detail::html_escaped(caption) + "</text>\n";
    // The flag under the declaration's square where there is one, else under the point.
    if (p->flag.empty()) continue;
    const bool square = p->declared_intensity > 0;
    const double flag_x = (square ? x(p->declared_intensity) : px) + 7;
    const double flag_y =
        placer.place(flag_x, false, display_width(p->flag), (square ? y(p->declared_flop_per_s) : py) + 14);
    svg += "<text class=\"flag\" x=\"" + svg_number(flag_x) + "\" y=\"" + svg_number(flag_y) +
           "\" fill=\"#d62728\">" + detail::html_escaped(p->flag) + "</text>\n";
  }
  double line_y = bottom + 56;
  if (unlabelled) {
    svg += "<text class=\"unlabelled\" x=\"" + svg_number(left) + "\" y=\"" + svg_number(line_y) + "\">" +
           std::to_string(drawn.size() - options.max_labels) + " point(s) without a label (over " +
           std::to_string(options.max_labels) + "); their tooltips name them</text>\n";
    line_y += 16;
  }
  if (!omitted.empty())
    svg += "<text x=\"" + svg_number(left) + "\" y=\"" + svg_number(line_y) + "\">Not drawn:</text>\n";
  for (const RooflinePoint* p : omitted) {
    line_y += 16;
    svg += "<text class=\"omitted\" x=\"" + svg_number(left + 12) + "\" y=\"" + svg_number(line_y) + "\">" +
           detail::html_escaped(p->label + ": " + p->omitted) + "</text>\n";
  }
  return svg + "</svg>\n";
}
}  // namespace detail

// The report's picture: its scopes and kernels under Report::ceilings.
inline std::string to_roofline_svg(const Report& report, const RooflineSvgOptions& options = {}) {
  return detail::roofline_picture(roofline_points(report), report.ceilings, options);
}

// Written whole or not at all (temp file + rename); throws gpuprof::Error.
inline void write_roofline_svg(const Report& report, const std::string& path,
                               const RooflineSvgOptions& options = {}) {
  write_file_atomically(path, to_roofline_svg(report, options));
}

GPUPROF_NAMESPACE_END
