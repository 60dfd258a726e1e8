// Hardware counters in reports, from synthetic counter records: the roofline
// arithmetic (roofline.hpp), the counter columns of the table and CSV, the
// JSON round trip and what the reader refuses, the declared-vs-measured flag,
// and the roofline picture (report/roofline_svg.hpp) with its points where
// the numbers put them.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <sstream>
#include <string>
#include <vector>

#include <gpuprof/report.hpp>
#include <gpuprof/report/read_json.hpp>
#include <gpuprof/report/roofline_svg.hpp>

#include "support/json_parse.hpp"
#include "support/occurrences.hpp"
#include "support/temporary_directory.hpp"

using doctest::Approx;
using gpuprof_test::occurrences;

namespace {

const char* const bf16_ops = "sm__ops_path_tensor_src_bf16_dst_fp32.sum";
const char* const fp32_ffma = "sm__sass_thread_inst_executed_op_ffma_pred_on.sum";
const char* const fp32_fadd = "sm__sass_thread_inst_executed_op_fadd_pred_on.sum";
const char* const fp32_fmul = "sm__sass_thread_inst_executed_op_fmul_pred_on.sum";

// A range of `seconds` that moved `bytes` through DRAM (read 3/4, written 1/4)
// and did `tensor_flops` on the bf16 tensor pipe.
gpuprof::CounterRange range(const std::string& name, double seconds, double bytes, double tensor_flops) {
  return {name,
          {{gpuprof::metric::duration_ns, seconds * 1e9},
           {gpuprof::metric::dram_bytes_read, 0.75 * bytes},
           {gpuprof::metric::dram_bytes_written, 0.25 * bytes},
           {bf16_ops, tensor_flops},
           {gpuprof::metric::l2_hit_rate_pct, 60},
           {gpuprof::metric::achieved_occupancy_pct, 45}}};
}

// An H100-like card: bf16 tensor 800 TFLOP/s, fp32 50 TFLOP/s, 2 TB/s DRAM:
// ridges at 400 and 25 FLOP/B.
gpuprof::RooflineCeilings card() {
  gpuprof::RooflineCeilings ceilings;
  ceilings.pipes = {{"tensor bf16", 800e12}, {"fp32", 50e12}};
  ceilings.dram_bytes_per_s = 2e12;
  ceilings.source = "user";
  return ceilings;
}

gpuprof::ScopeNode node(const std::string& path, const std::string& name, int parent, std::uint64_t count) {
  gpuprof::ScopeNode n;
  n.path = path;
  n.name = name;
  n.parent = parent;
  n.depth = parent < 0 ? 0 : 1;
  n.count = count;
  n.host_ms = gpuprof::summarize(std::vector<double>(count, 2.0));
  return n;
}

// step (2 calls) > gemm (compute-bound: 1000 FLOP/B at 400 TFLOP/s) and
// norm (memory-bound: 1 FLOP/B, 1 TB/s); "copy" has counters without FLOPs
// to speak of; "untouched" has none.
gpuprof::Report counter_report() {
  gpuprof::Report report;
  report.nodes = {node("step", "step", -1, 2), node("step/gemm", "gemm", 0, 2),
                  node("step/norm", "norm", 0, 2), node("step/untouched", "untouched", 0, 2)};
  report.counters.metrics = {gpuprof::metric::duration_ns, gpuprof::metric::dram_bytes_read,
                             gpuprof::metric::dram_bytes_written, bf16_ops};
  report.counters.passes = 3;
  report.counters.chip = "GH100";
  report.counters.scopes = {range("step", 4e-3, 4e9, 8e11), range("step/gemm", 2e-3, 8e8, 8e11),
                            range("step/norm", 1e-3, 1e9, 1e9)};
  report.counters.kernels = {range("sm90_xmma_gemm_bf16", 1e-3, 4e8, 4e11)};
  report.ceilings = card();
  return report;
}

std::vector<std::string> split_lines(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

// The value of attribute `name` in the first element that contains `marker`.
double attribute_after(const std::string& svg, const std::string& marker, const std::string& name) {
  const std::size_t at = svg.find(marker);
  REQUIRE(at != std::string::npos);
  const std::size_t value = svg.find(name + "=\"", at);
  REQUIRE(value != std::string::npos);
  return std::stod(svg.substr(value + name.size() + 2));
}

}  // namespace

TEST_CASE("roofline: FLOPs per pipe, DRAM bytes, intensity and rate from counter values") {
  gpuprof::CounterRange r{"k",
                          {{gpuprof::metric::duration_ns, 2e6},
                           {gpuprof::metric::dram_bytes_read, 3e6},
                           {gpuprof::metric::dram_bytes_written, 1e6},
                           {fp32_ffma, 1e6},
                           {fp32_fadd, 2e5},
                           {fp32_fmul, 3e5},
                           {bf16_ops, 5e6}}};
  const gpuprof::RangeMeasures m = gpuprof::measure_range(r);
  REQUIRE(m.pipes.size() == 2);
  CHECK(m.pipes[0].pipe == "tensor bf16");
  CHECK(m.pipes[0].flops == Approx(5e6));
  CHECK(m.pipes[1].pipe == "fp32");
  CHECK(m.pipes[1].flops == Approx(2 * 1e6 + 2e5 + 3e5));  // an FFMA is two FLOPs
  CHECK(m.flops == Approx(7.5e6));
  CHECK(m.dram_bytes == Approx(4e6));
  CHECK(m.seconds == Approx(2e-3));
  CHECK(m.intensity() == Approx(1.875));
  CHECK(m.flop_per_s() == Approx(3.75e9));
  CHECK(m.dominant_pipe() == "tensor bf16");
  CHECK(m.l2_hit_pct < 0);  // not collected

  const gpuprof::RangeMeasures none = gpuprof::measure_range({"empty", {}});
  CHECK(none.flops < 0);
  CHECK(none.dram_bytes < 0);
  CHECK(none.intensity() == 0);
  CHECK(gpuprof::place_on_roofline(none, card()).bound == gpuprof::Bound::unknown);
}

TEST_CASE(
    "roofline: left of the ridge memory-bound against bandwidth, right of it compute-bound against the "
    "pipe") {
  const gpuprof::RooflineCeilings ceilings = card();
  REQUIRE(ceilings.find("tensor bf16") != nullptr);
  CHECK(ceilings.ridge(*ceilings.find("tensor bf16")) == Approx(400));

  // 1000 FLOP/B at 400 TFLOP/s: compute-bound, half of 800.
  const auto gemm = gpuprof::place_on_roofline(gpuprof::measure_range(range("g", 1e-3, 4e8, 4e11)), ceilings);
  CHECK(gemm.bound == gpuprof::Bound::compute);
  CHECK(gemm.pipe == "tensor bf16");
  CHECK(gemm.roof_flop_per_s == Approx(800e12));
  CHECK(gemm.percent_of_roof == Approx(50));

  // 1 FLOP/B moving 1 TB/s: memory-bound; the roof there is 2 TFLOP/s, half of it reached.
  const auto norm = gpuprof::place_on_roofline(gpuprof::measure_range(range("n", 1e-3, 1e9, 1e9)), ceilings);
  CHECK(norm.bound == gpuprof::Bound::memory);
  CHECK(norm.roof_flop_per_s == Approx(2e12));
  CHECK(norm.percent_of_roof == Approx(50));

  // No FLOPs at all (a copy): memory-bound by its bandwidth alone.
  const auto copy = gpuprof::place_on_roofline(gpuprof::measure_range(range("c", 1e-3, 1.5e9, 0)), ceilings);
  CHECK(copy.bound == gpuprof::Bound::memory);
  CHECK(copy.percent_of_roof == Approx(75));

  // A pipe without a ceiling, or no bandwidth: no placement.
  gpuprof::RooflineCeilings fp32_only = ceilings;
  fp32_only.pipes = {{"fp32", 50e12}};
  CHECK(gpuprof::place_on_roofline(gpuprof::measure_range(range("g", 1e-3, 4e8, 4e11)), fp32_only).bound ==
        gpuprof::Bound::unknown);
  CHECK(gpuprof::place_on_roofline(gpuprof::measure_range(range("g", 1e-3, 4e8, 4e11)), {}).percent_of_roof <
        0);
}

TEST_CASE("roofline: declared work is flagged past 20 % of the measured, not at 19 %") {
  CHECK_FALSE(gpuprof::WorkCheck{1.19e9, 1e9}.flagged());
  CHECK(gpuprof::WorkCheck{1.21e9, 1e9}.flagged());
  CHECK_FALSE(gpuprof::WorkCheck{0.81e9, 1e9}.flagged());
  CHECK(gpuprof::WorkCheck{0.79e9, 1e9}.flagged());
  CHECK(gpuprof::WorkCheck{1.21e9, 1e9}.difference_pct() == Approx(21));
  CHECK_FALSE(gpuprof::WorkCheck{0, 1e9}.flagged());  // nothing declared

  // Through a report: per call, measured totals over the node's 2 calls (4e11 FLOPs each).
  for (const auto& [declared, flagged] : {std::pair{4e11 * 1.19, false}, std::pair{4e11 * 1.21, true}}) {
    gpuprof::Report report = counter_report();
    report.nodes[1].work.flops = declared;
    const gpuprof::ScopeCounters c = gpuprof::scope_counters(report, 1);
    CHECK(c.flops.measured == Approx(4e11));
    CHECK(c.flops.flagged() == flagged);
    std::ostringstream table;
    gpuprof::print_table(report, table);
    CHECK((table.str().find("step/gemm declares") != std::string::npos) == flagged);
    const std::string svg = gpuprof::to_roofline_svg(report);
    CHECK((occurrences(svg, "class=\"flag\"") == 1) == flagged);
  }
}

TEST_CASE("roofline: the table shows counter columns per scope, '-' for a scope without counters") {
  const gpuprof::Report report = counter_report();
  std::ostringstream out;
  gpuprof::print_table(report, out);
  const std::vector<std::string> lines = split_lines(out.str());
  REQUIRE(lines.size() > 5);
  for (const char* header :
       {"DRAM GB", "FLOP/B", "TFLOP/s meas", "% roof", "bound", "L2 hit %", "occupancy %"})
    CHECK(lines[1].find(header) != std::string::npos);
  const auto row = [&](const std::string& name) {
    for (const std::string& line : lines)
      if (line.find("  " + name + " ") != std::string::npos) return line;
    FAIL("no row for " << name);
    return std::string();
  };
  CHECK(row("gemm").find("compute") != std::string::npos);
  CHECK(row("gemm").find(" 1000 ") != std::string::npos);  // FLOP/B
  CHECK(row("gemm").find(" 50.0 ") != std::string::npos);  // % of roof
  CHECK(row("norm").find("memory") != std::string::npos);
  CHECK(row("untouched").find("compute") == std::string::npos);
  CHECK(row("untouched").find("memory") == std::string::npos);
  CHECK(out.str().find("counters: 4 metric(s) in 3 replay pass(es) on GH100; ceilings: user") !=
        std::string::npos);

  gpuprof::Report plain = report;
  plain.counters = {};
  std::ostringstream without;
  gpuprof::print_table(plain, without);
  CHECK(without.str().find("DRAM GB") == std::string::npos);
  CHECK(gpuprof::to_markdown(plain).find("% roof") == std::string::npos);
  CHECK(gpuprof::to_markdown(report).find("% roof") != std::string::npos);
}

TEST_CASE("roofline: counters survive JSON and come out in CSV") {
  gpuprof_test::TemporaryDirectory dir;
  gpuprof::Report report = counter_report();
  report.counters.note = "partial: one pass failed";
  report.nodes[1].work = {4e11, 4e8, 0};
  gpuprof::write_json(report, dir.file("r.json"));
  const gpuprof::Report back = gpuprof::read_report_json(dir.file("r.json"));
  CHECK(back.counters.metrics == report.counters.metrics);
  CHECK(back.counters.passes == 3);
  CHECK(back.counters.chip == "GH100");
  CHECK(back.counters.note == report.counters.note);
  REQUIRE(back.counters.scopes.size() == 3);
  REQUIRE(back.counters.kernels.size() == 1);
  CHECK(back.counters.kernels[0].name == "sm90_xmma_gemm_bf16");
  for (std::size_t i = 0; i < 3; ++i) {
    CHECK(back.counters.scopes[i].name == report.counters.scopes[i].name);
    REQUIRE(back.counters.scopes[i].values.size() == report.counters.scopes[i].values.size());
    for (std::size_t v = 0; v < report.counters.scopes[i].values.size(); ++v) {
      CHECK(back.counters.scopes[i].values[v].metric == report.counters.scopes[i].values[v].metric);
      CHECK(back.counters.scopes[i].values[v].value == report.counters.scopes[i].values[v].value);
    }
  }
  CHECK(back.ceilings.dram_bytes_per_s == 2e12);
  REQUIRE(back.ceilings.pipes.size() == 2);
  CHECK(back.ceilings.pipes[0].pipe == "tensor bf16");
  CHECK(back.ceilings.pipes[0].flop_per_s == 800e12);
  CHECK(back.ceilings.source == "user");
  CHECK(gpuprof::to_json(back) == gpuprof::to_json(report));  // the whole file, derived values included

  const gpuprof_test::Json json = gpuprof_test::parse_json_file(dir.file("r.json"));
  const gpuprof_test::Json& gemm = json["nodes"][1]["counters"];
  CHECK(gemm["bound"].as_string() == "compute");
  CHECK(gemm["flops_per_byte"].as_number() == Approx(1000));
  CHECK(gemm["percent_of_roof"].as_number() == Approx(50));
  CHECK(gemm["declared_flops_difference_pct"].as_number() == Approx(0));
  CHECK(json["nodes"][3]["counters"].is_null());

  gpuprof::write_csv(report, dir.file("r.csv"));
  const std::vector<std::string> rows = split_lines(gpuprof::read_text_file(dir.file("r.csv")));
  REQUIRE(rows.size() == 5);
  CHECK(rows[0].find(
            ",dram_bytes,measured_flops,measured_flops_per_byte,measured_flop_per_s,percent_of_roof,bound,"
            "l2_hit_pct,occupancy_pct,declared_flops_difference_pct,declared_bytes_difference_pct,") !=
        std::string::npos);
  // The counter columns, then PyTorch's allocator columns (empty here: not watched).
  using gpuprof::detail::shortest_decimal;
  CHECK(rows[2].find("," + shortest_decimal(8e8) + "," + shortest_decimal(8e11) + ",1000," +
                     shortest_decimal(4e14) + ",50,compute,60,45,0,0,,\r") != std::string::npos);
  CHECK(rows[4].find(",,,,,,,,,,,,\r") != std::string::npos);  // no counters: empty fields
}

TEST_CASE("roofline: the reader refuses counter sections that make no sense") {
  const std::string good = gpuprof::to_json(counter_report());
  const auto read = [](const std::string& text) {
    return gpuprof::detail::report_from_json(gpuprof::detail::parse_json(text));
  };
  REQUIRE_NOTHROW(read(good));
  const auto replaced = [&](const std::string& from, const std::string& to) {
    std::string text = good;
    const std::size_t at = text.find(from);
    REQUIRE(at != std::string::npos);
    return text.replace(at, from.size(), to);
  };
  CHECK_THROWS_WITH_AS(read(replaced("\"passes\": 3", "\"passes\": -1")), doctest::Contains("negative"),
                       gpuprof::InputError);
  CHECK_THROWS_WITH_AS(read(replaced("\"dram_bytes_per_s\": 2e+12", "\"dram_bytes_per_s\": -5")),
                       doctest::Contains("ceiling"), gpuprof::InputError);
  CHECK_THROWS_AS(read(replaced("\"values\": {\"gpu__time", "\"values\": [{\"gpu__time")),
                  gpuprof::InputError);
  CHECK_THROWS_AS(read(replaced("\"name\": \"step/gemm\", \"values\": {\"gpu__time_duration.sum\": 2e+06",
                                "\"name\": \"step/gemm\", \"values\": {\"gpu__time_duration.sum\": \"2\"")),
                  gpuprof::InputError);
  CHECK_THROWS_WITH_AS(read(replaced("{\"name\": \"step/gemm\"", "{\"name\": \"step\"")),
                       doctest::Contains("twice"), gpuprof::InputError);
  CHECK_THROWS_AS(read(replaced("\"values\": {\"gpu__time_duration.sum\": 4e+06",
                                "\"values\": {\"gpu__time_duration.sum\": 1e999")),
                  gpuprof::InputError);
  // A metric that was not collected (null) is left out, not refused.
  const gpuprof::Report nulls = read(replaced("\"values\": {\"gpu__time_duration.sum\": 4e+06",
                                              "\"values\": {\"gpu__time_duration.sum\": null"));
  CHECK(nulls.counters.scopes[0].find(gpuprof::metric::duration_ns) == nullptr);
  // Older files without the sections read with them empty.
  std::string old = good;
  old.erase(old.find(",\n  \"counters\": {"), old.rfind("\n}") - old.find(",\n  \"counters\": {"));
  const gpuprof::Report without = read(old);
  CHECK(without.counters.empty());
  CHECK(without.ceilings.empty());
}

TEST_CASE("roofline svg: one point per placed scope and kernel, where intensity and rate put it") {
  gpuprof::Report report = counter_report();
  report.nodes[2].work = {1e9 / 2, 1e9 / 2, 0};  // norm declares what it did: an unflagged square
  const std::string svg = gpuprof::to_roofline_svg(report);
  CHECK(svg.rfind("<svg xmlns=\"http://www.w3.org/2000/svg\"", 0) == 0);
  CHECK(svg.substr(svg.size() - 7) == "</svg>\n");
  CHECK(occurrences(svg, "<circle class=\"point scope\"") == 3);
  CHECK(occurrences(svg, "<circle class=\"point kernel\"") == 1);
  CHECK(occurrences(svg, "<circle class=\"ridge\"") == 2);
  CHECK(occurrences(svg, "class=\"ceiling pipe\"") == 2);
  CHECK(occurrences(svg, "class=\"ceiling bandwidth\"") == 1);
  CHECK(occurrences(svg, "<rect class=\"declared\"") == 1);
  CHECK(occurrences(svg, "class=\"flag\"") == 0);
  CHECK(occurrences(svg, ">ceilings: user</text>") == 1);  // where the roofs come from
  // Balanced elements: every opened <text>, <circle>, <title> and <g> closed.
  for (const char* tag : {"text", "circle", "title", "g"})
    CHECK(occurrences(svg, std::string("<") + tag + " ") + occurrences(svg, std::string("<") + tag + ">") ==
          occurrences(svg, std::string("</") + tag + ">"));

  // Log axes: gemm (1000 FLOP/B, 400 TFLOP/s) right of and above step (200 FLOP/B) and norm (1 FLOP/B, 1
  // TFLOP/s).
  const double gemm_x = attribute_after(svg, "data-name=\"step/gemm\" cx", "cx");
  const double norm_x = attribute_after(svg, "data-name=\"step/norm\" cx", "cx");
  const double step_x = attribute_after(svg, "data-name=\"step\" cx", "cx");
  const double gemm_y = attribute_after(svg, "data-name=\"step/gemm\" cx", "cy");
  const double norm_y = attribute_after(svg, "data-name=\"step/norm\" cx", "cy");
  CHECK(gemm_x > step_x);
  CHECK(step_x > norm_x);
  CHECK(gemm_y < norm_y);  // higher on the page
  // Equal distances on the page for equal ratios: step (200 FLOP/B) sits log10(200)/3 of the way from norm to
  // gemm.
  CHECK((step_x - norm_x) / (gemm_x - norm_x) == Approx(std::log10(200.0) / 3).epsilon(0.01));

  // A range with no FLOPs cannot be drawn on log axes: listed instead.
  report.counters.scopes.push_back(range("step/untouched", 1e-3, 1e9, 0));
  const std::string with_copy = gpuprof::to_roofline_svg(report);
  CHECK(occurrences(with_copy, "<circle class=\"point scope\"") == 3);
  CHECK(with_copy.find("step/untouched: no FLOPs measured") != std::string::npos);
}

// The picture's point labels in drawing order: side (true when the text
// ends at its x), baseline and text.
struct Label {
  bool anchor_end;
  double baseline;
  std::string text;
};
std::vector<Label> point_labels(const std::string& svg) {
  std::vector<Label> labels;
  const std::string open = "<text class=\"point-label\"";
  for (std::size_t at = svg.find(open); at != std::string::npos; at = svg.find(open, at + 1)) {
    const std::size_t y = svg.find(" y=\"", at) + 4, text = svg.find('>', at) + 1;
    labels.push_back({svg.substr(at, text - at).find("text-anchor=\"end\"") != std::string::npos,
                      std::stod(svg.substr(y)), svg.substr(text, svg.find("</text>", text) - text)});
  }
  return labels;
}

TEST_CASE("roofline labels: none overlaps another, each beside its point or joined to it") {
  gpuprof::detail::LabelPlacer placer(0, 1000);
  // Ten labels of 10 characters at one point near the right edge: left of it
  // first, on both sides line by line once the right has room.
  std::vector<gpuprof::detail::LabelPlacer::Spot> spots;
  for (int i = 0; i < 10; ++i) spots.push_back(placer.place_beside(900, true, 7, 10, 500));
  CHECK(spots[0].anchor_end);
  CHECK(spots[0].baseline == 500);
  for (std::size_t i = 0; i < spots.size(); ++i)
    for (std::size_t j = 0; j < i; ++j)
      CHECK_FALSE((spots[i].anchor_end == spots[j].anchor_end && spots[i].baseline == spots[j].baseline));
  // At the frame's right edge there is no room right of the point: every label left of it.
  gpuprof::detail::LabelPlacer edge(0, 1000);
  for (int i = 0; i < 4; ++i) CHECK(edge.place_beside(995, true, 7, 10, 500).anchor_end);
  // A marker kept clear is not covered: a label asked over another point moves off it.
  gpuprof::detail::LabelPlacer markers(0, 1000);
  markers.keep_clear(520, 495, 5);
  const gpuprof::detail::LabelPlacer::Spot off = markers.place_beside(500, false, 7, 10, 500);
  CHECK_FALSE((!off.anchor_end && off.baseline == 500));
  // Within a vertical range, a label that finds no room above goes below.
  gpuprof::detail::LabelPlacer low(0, 1000, 490, 1000);
  CHECK(low.place(100, false, 10, 500) == 500);
  CHECK(low.place(100, false, 10, 500) == 512);
  // Fixed-anchor text (the ceilings) moves only up or down.
  gpuprof::detail::LabelPlacer fixed(0, 1000);
  CHECK(fixed.place(990, true, 20, 100) == 100);
  CHECK(std::abs(fixed.place(990, true, 20, 100) - 100) == 12);
}

TEST_CASE("roofline svg: points are labelled below their top-level scope, and labels never overlap") {
  gpuprof::Report report = counter_report();
  // Four scopes with the same measures: one spot, four labels.
  for (const char* name : {"a", "b", "c", "d"}) {
    report.nodes.push_back(node(std::string("step/gemm/") + name, name, 1, 2));
    report.counters.scopes.push_back(range(std::string("step/gemm/") + name, 2e-3, 8e8, 8e11));
  }
  const std::string svg = gpuprof::to_roofline_svg(report);
  const std::vector<Label> labels = point_labels(svg);
  REQUIRE(labels.size() == 8);  // step, gemm, its four, norm, and the kernel
  std::vector<std::string> texts;
  for (const Label& label : labels) texts.push_back(label.text);
  for (const char* caption : {"step", "gemm", "gemm/a", "gemm/d", "norm", "sm90_xmma_gemm_bf16"})
    CHECK(std::find(texts.begin(), texts.end(), caption) != texts.end());
  // The six labels at gemm's spot (gemm, its four, and the kernel, which did
  // the same per second and per byte): no two on one line on one side; each
  // moved off its point's line is joined to the point.
  std::vector<const Label*> spot;
  for (const Label& label : labels)
    if (label.text.rfind("gemm", 0) == 0 || label.text.rfind("sm90", 0) == 0) spot.push_back(&label);
  REQUIRE(spot.size() == 6);
  std::size_t moved = 0;
  for (std::size_t i = 0; i < spot.size(); ++i) {
    moved += spot[i]->baseline != spot[0]->baseline;
    for (std::size_t j = 0; j < i; ++j)
      CHECK_FALSE((spot[i]->anchor_end == spot[j]->anchor_end && spot[i]->baseline == spot[j]->baseline));
  }
  CHECK(moved >= 4);  // two lines hold at most two each
  CHECK(occurrences(svg, "<line class=\"leader\"") >= moved);
  // The tooltips keep the whole path.
  CHECK(svg.find("data-name=\"step/gemm/a\"") != std::string::npos);

  // Past max_labels, the lowest points keep only their tooltips, and the picture says how many.
  gpuprof::RooflineSvgOptions few;
  few.max_labels = 3;
  const std::string capped = gpuprof::to_roofline_svg(report, few);
  CHECK(point_labels(capped).size() == 3);
  CHECK(occurrences(capped, "<circle class=\"point") == 8);
  CHECK(capped.find("5 point(s) without a label (over 3)") != std::string::npos);
  CHECK(svg.find("without a label") == std::string::npos);
}

TEST_CASE("roofline svg: written whole, escaped, and inside the HTML page only with counters") {
  gpuprof_test::TemporaryDirectory dir;
  gpuprof::Report report = counter_report();
  report.counters.scopes[1].name = report.nodes[1].path = "step/<gemm & co>";
  gpuprof::write_roofline_svg(report, dir.file("r.svg"));
  const std::string svg = gpuprof::read_text_file(dir.file("r.svg"));
  CHECK(svg.find("<gemm") == std::string::npos);
  CHECK(svg.find("&lt;gemm &amp; co&gt;") != std::string::npos);
  CHECK_THROWS_AS(gpuprof::write_roofline_svg(report, dir.file("missing/r.svg")), gpuprof::Error);

  const std::string page = gpuprof::to_html(report);
  CHECK(occurrences(page, "<circle class=\"point scope\"") == 3);
  CHECK(page.find("<h2>Roofline</h2>") != std::string::npos);
  gpuprof::Report plain = report;
  plain.counters = {};
  CHECK(gpuprof::to_html(plain).find("<h2>Roofline</h2>") == std::string::npos);

  // Nothing to place and no ceilings: still a picture, with its axes.
  const std::string empty = gpuprof::detail::roofline_picture(std::vector<gpuprof::RooflinePoint>{},
                                                              gpuprof::RooflineCeilings{}, {});
  CHECK(occurrences(empty, "<circle") == 0);
  CHECK(empty.find("arithmetic intensity") != std::string::npos);
}

TEST_CASE("roofline svg: long kernel names cut whole characters, overflowing values are listed, not drawn") {
  // 47 ASCII bytes, then a two-byte character across the 48-byte cut.
  const std::string name = std::string(47, 'k') + "\xC3\xA9" + "tail";
  CHECK(gpuprof::detail::shortened(name, 48) == std::string(47, 'k') + "…");
  CHECK(gpuprof::detail::shortened("short", 48) == "short");

  gpuprof::Report report = counter_report();
  report.counters.kernels = {{name,
                              {{gpuprof::metric::duration_ns, 1e6},
                               {gpuprof::metric::dram_bytes_read, 1e9},
                               {fp32_ffma, 1e308}}}};  // two FLOPs each: past the largest double
  const std::vector<gpuprof::RooflinePoint> points = gpuprof::roofline_points(report);
  REQUIRE(points.size() == 4);
  CHECK(points[3].omitted == "values out of range");
  const std::string svg = gpuprof::to_roofline_svg(report);
  CHECK(occurrences(svg, "<circle class=\"point kernel\"") == 0);
  CHECK(svg.find("inf") == std::string::npos);
  CHECK(svg.find("nan") == std::string::npos);
}
