// The memory timeline as an SVG picture: the stacking arithmetic, and one
// element per allocation, span and legend entry.
#include <gpuprof/report/memory_timeline_svg.hpp>

#include <doctest/doctest.h>

#include <fstream>
#include <sstream>
#include <string>

#include "support/occurrences.hpp"
#include "support/synthetic_report.hpp"
#include "support/temporary_directory.hpp"

using gpuprof_test::occurrences;
using gpuprof_test::timeline_allocation;

namespace {

// A (100 B, 0-50 ns), B (200 B, from 10, never freed), C (50 B, 20-30 ns).
gpuprof::MemoryTimeline three_allocations() {
  gpuprof::MemoryTimeline timeline;
  timeline.allocations = {timeline_allocation(100, 0, 50, "build/weights"),
                          timeline_allocation(200, 10, -1, "step/forward"),
                          timeline_allocation(50, 20, 30, "step/forward")};
  return timeline;
}

}  // namespace

TEST_CASE("memory timeline svg: allocations stack in allocation order and drop when one below is freed") {
  const gpuprof::StackedAllocations stacked = gpuprof::stack_allocations(three_allocations());
  REQUIRE(stacked.steps.size() == 3);
  REQUIRE(stacked.steps[0].size() == 1);
  CHECK(stacked.steps[0][0].time_ns == 0);
  CHECK(stacked.steps[0][0].offset == 0);
  REQUIRE(stacked.steps[1].size() == 2);  // on A until A is freed, then on the floor
  CHECK(stacked.steps[1][0].time_ns == 10);
  CHECK(stacked.steps[1][0].offset == 100);
  CHECK(stacked.steps[1][1].time_ns == 50);
  CHECK(stacked.steps[1][1].offset == 0);
  REQUIRE(stacked.steps[2].size() == 1);  // on A and B, freed before A
  CHECK(stacked.steps[2][0].offset == 300);
  CHECK(stacked.peak_bytes == 350);
}

TEST_CASE("memory timeline svg: a release and an allocation at the same time are not stacked together") {
  gpuprof::MemoryTimeline timeline;
  timeline.allocations = {timeline_allocation(100, 0, 10, "a"), timeline_allocation(100, 10, 20, "b")};
  const gpuprof::StackedAllocations stacked = gpuprof::stack_allocations(timeline);
  CHECK(stacked.peak_bytes == 100);
  CHECK(stacked.steps[1][0].offset == 0);
}

TEST_CASE("memory timeline svg: one polygon per allocation, one band per span, one legend entry per scope") {
  gpuprof::MemoryTimeline timeline = three_allocations();
  timeline.in_use = {{0, 400}, {25, 500}, {60, 300}};
  gpuprof::MemoryTimelineSvgOptions options;
  options.title = "a <small> test";
  options.spans = {{"forward", 5, 25}, {"backward", 25, 45}, {"forward", 45, 55}};
  const std::string svg = gpuprof::to_memory_timeline_svg(timeline, options);
  CHECK(svg.rfind("<svg xmlns=\"http://www.w3.org/2000/svg\"", 0) == 0);
  CHECK(svg.find("</svg>") != std::string::npos);
  CHECK(occurrences(svg, "<polygon class=\"allocation\"") == 3);
  CHECK(occurrences(svg, "<rect class=\"span\"") == 3);
  CHECK(occurrences(svg, "<rect class=\"legend\"") == 2);  // two scopes
  CHECK(occurrences(svg, "<polyline class=\"in-use\"") == 1);
  CHECK(svg.find("a &lt;small&gt; test") != std::string::npos);
  CHECK(svg.find("<small>") == std::string::npos);
  CHECK(svg.find("step/forward: 250 B allocated") != std::string::npos);
}

TEST_CASE("memory timeline svg: the allocations' outline follows the stacking") {
  // 1 GiB from 0 to 1 ms, 1 GiB on top from 0.5 ms to 1.5 ms: the second
  // starts at 1 GiB and drops to the floor at 1 ms. Plot: x from 70 to 980
  // over 1.5 ms; y from 414 (0 GiB) up 360 px to the top tick, 2 GiB.
  constexpr std::int64_t gib = std::int64_t{1} << 30;
  gpuprof::MemoryTimeline timeline;
  timeline.allocations = {timeline_allocation(gib, 0, 1'000'000, "a"),
                          timeline_allocation(gib, 500'000, 1'500'000, "b")};
  const std::string svg = gpuprof::to_memory_timeline_svg(timeline);
  const std::size_t second = svg.find("<polygon", svg.find("<polygon") + 1);
  const std::size_t begin = svg.find("points=\"", second) + 8;
  const std::string points = svg.substr(begin, svg.find('"', begin) - begin);
  // Top edge: (x(0.5), 2 GiB) to (x(1), 2 GiB), (x(1), 1 GiB) to (x(1.5), 1 GiB); then the bottom back.
  CHECK(points ==
        "373.3,54.0 676.7,54.0 676.7,234.0 980.0,234.0 980.0,414.0 676.7,414.0 676.7,234.0 373.3,234.0");
  CHECK(svg.find(">2 GiB</text>") != std::string::npos);
}

TEST_CASE("memory timeline svg: spans of named scopes from a report, written atomically") {
  const gpuprof::Report report = gpuprof_test::synthetic_training_report();
  const auto spans = gpuprof::scope_spans(report, {"forward", "backward"});
  REQUIRE(!spans.empty());
  for (std::size_t i = 1; i < spans.size(); ++i) CHECK(spans[i - 1].begin_ns <= spans[i].begin_ns);
  gpuprof::MemoryTimelineSvgOptions options;
  options.spans = spans;
  const gpuprof_test::TemporaryDirectory directory;
  const std::string path = (directory.path() / "timeline.svg").string();
  gpuprof::write_memory_timeline_svg(report.memory_timeline, path, options);
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  CHECK(occurrences(text.str(), "<polygon class=\"allocation\"") ==
        report.memory_timeline.allocations.size());
  CHECK(occurrences(text.str(), "<rect class=\"span\"") == spans.size());
}
