// Profiler::set_warmup(n): the first n instances of each root scope, with
// everything inside them, are left out of the statistics and counted; the
// cold first instance keeps its time (cold_ms) in the table and the JSON
// report, which readers, merge and compare still take.
#include <doctest/doctest.h>

#include <algorithm>
#include <sstream>
#include <string>

#include <gpuprof/compare.hpp>
#include <gpuprof/merge.hpp>
#include <gpuprof/profiler.hpp>
#include <gpuprof/report.hpp>
#include <gpuprof/report/read_json.hpp>

#include "warmup_steps.hpp"

namespace {

const gpuprof::ScopeNode& node_at(const gpuprof::Report& report, const std::string& path) {
  const auto found = std::find_if(report.nodes.begin(), report.nodes.end(),
                                  [&path](const gpuprof::ScopeNode& node) { return node.path == path; });
  REQUIRE_MESSAGE(found != report.nodes.end(), "no node " << path);
  return *found;
}

}  // namespace

TEST_CASE("set_warmup(1) leaves a slow first step and everything inside it out, and keeps its time") {
  auto& profiler = gpuprof::profiler();
  profiler.reset();
  profiler.set_warmup(1);
  run_steps(4, /*cold_ms=*/100, /*warm_ms=*/2);
  { GPUPROF_SCOPE("other root"); }  // a second root scope: its own first instance is warm-up too
  const gpuprof::Report report = profiler.report();

  check_cold_step_left_out(report, 4, 100);
  CHECK(report.warmup_root_instances == 1);
  CHECK(report.warmup_instances_left_out == 3);  // step, step/backward, other root
  CHECK(node_at(report, "other root").count == 0);
  CHECK(node_at(report, "other root").cold_ms >= 0);

  std::ostringstream table;
  gpuprof::print_table(report, table);
  CHECK(table.str().find("3 scope instance(s) are left out of the statistics as warm-up: the first 1 "
                         "instance(s) of each root scope") != std::string::npos);
  CHECK(table.str().find("cold (first warm-up instance, left out): step ") != std::string::npos);

  // A later report leaves out the same instances; the next steps are counted.
  run_steps(1, 2, 2);
  const gpuprof::Report later = profiler.report();
  CHECK(node_at(later, "step").count == 4);
  CHECK(later.warmup_instances_left_out == 3);
  CHECK(node_at(later, "step").cold_ms == doctest::Approx(node_at(report, "step").cold_ms));

  // JSON: cold_ms and the count read back; merge and compare take the file.
  const gpuprof::Report read =
      gpuprof::detail::report_from_json(gpuprof::detail::parse_json(gpuprof::to_json(later)));
  CHECK(read.warmup_instances_left_out == 3);
  CHECK(read.warmup_root_instances == 1);
  CHECK(node_at(read, "step").cold_ms == doctest::Approx(node_at(later, "step").cold_ms));
  const gpuprof::MergedReport merged = gpuprof::merge({read});
  CHECK(!merged.scopes.empty());
  const gpuprof::Comparison comparison = gpuprof::compare(read, later);
  CHECK(!comparison.regressed());

  // Another count applies to the instances no report has folded yet: those
  // already left out stay out, and nothing more is.
  profiler.set_warmup(0);
  run_steps(2, 0, 2);
  const gpuprof::Report after = profiler.report();
  CHECK(after.warmup_instances_left_out == 3);
  CHECK(node_at(after, "step").count == node_at(later, "step").count + 2);
}

TEST_CASE("without set_warmup nothing is left out, and the cold step is in the statistics") {
  auto& profiler = gpuprof::profiler();
  profiler.reset();
  run_steps(3, 40, 2);
  const gpuprof::Report report = profiler.report();
  CHECK(report.warmup_instances_left_out == 0);
  CHECK(node_at(report, "step").count == 3);
  CHECK(node_at(report, "step").host_ms.max >= 40);
  CHECK(node_at(report, "step").cold_ms < 0);
}

TEST_CASE("set_warmup refuses a negative count") {
  CHECK_THROWS_AS(gpuprof::profiler().set_warmup(-1), gpuprof::Error);
}
