// merge.hpp, report/merged.hpp and gpuprof-merge on synthetic per-rank
// reports whose answers are known.
#include <gpuprof/merge.hpp>
#include <gpuprof/profiler.hpp>
#include <gpuprof/report.hpp>
#include <gpuprof/report/merged.hpp>
#include <gpuprof/report/read_json.hpp>

#include <doctest/doctest.h>

#include <cstdlib>
#include <fstream>
#include <set>
#include <string>
#include <vector>

#include "ranks/rank_reports.hpp"
#include "support/exit_status.hpp"
#include "support/json_parse.hpp"
#include "support/temporary_directory.hpp"

using doctest::Approx;
using gpuprof::Report;
using gpuprof_test::rank_report;

namespace {
// Steps: rank 0 {10, 12, 11}, rank 1 {11, 10, 15}, rank 2 {10.5, 11, 11}, given out of order.
std::vector<Report> three_ranks() {
  return {rank_report(2, 3, {10.5, 11, 11}), rank_report(0, 3, {10, 12, 11}),
          rank_report(1, 3, {11, 10, 15})};
}

const gpuprof::MergedScope& scope_of(const gpuprof::MergedReport& merged, const std::string& path) {
  for (const auto& scope : merged.scopes)
    if (scope.path == path) return scope;
  throw std::runtime_error("no scope " + path);
}
}  // namespace

TEST_CASE("merge: per-step skew, slowest rank counts and scopes across ranks") {
  const gpuprof::MergedReport merged = gpuprof::merge(three_ranks());
  REQUIRE(merged.ranks.size() == 3);
  CHECK(merged.ranks[0].rank.rank == 0);
  CHECK(merged.ranks[0].source == 1);
  CHECK(merged.ranks[2].rank.rank == 2);
  CHECK(merged.world_size == 3);
  CHECK(merged.step_scope == "train");  // 3 instances against setup's 1
  REQUIRE(merged.steps.size() == 3);
  // Step 0: 11 - 10, rank 1 slowest; step 1: 12 - 10, rank 0; step 2: 15 - 11, rank 1.
  CHECK(merged.steps[0].skew_ms == Approx(1.0));
  CHECK(merged.steps[0].slowest_rank == 1);
  CHECK(merged.steps[0].fastest_rank == 0);
  CHECK(merged.steps[1].skew_ms == Approx(2.0));
  CHECK(merged.steps[1].slowest_rank == 0);
  CHECK(merged.steps[1].fastest_rank == 1);
  CHECK(merged.steps[2].skew_ms == Approx(4.0));
  CHECK(merged.steps[2].slowest_rank == 1);
  CHECK(merged.steps[2].per_rank_ms == std::vector<double>{11, 15, 11});
  CHECK(merged.slowest_count == std::vector<std::size_t>{1, 2, 0});
  CHECK(merged.skew_ms.median == Approx(2.0));
  CHECK(merged.skew_ms.max == Approx(4.0));

  // train: means 11, 12, 32.5/3 -> min 10.833, median 11, max 12.
  const gpuprof::MergedScope& train = scope_of(merged, "train");
  CHECK(train.per_rank[1].mean == Approx(12.0));
  CHECK(train.across_ranks.min == Approx(32.5 / 3));
  CHECK(train.across_ranks.median == Approx(11.0));
  CHECK(train.across_ranks.max == Approx(12.0));
  CHECK(train.slowest_rank == 1);
  CHECK(train.fastest_rank == 2);
  CHECK(scope_of(merged, "train/backward").depth == 1);
  CHECK(merged.notes.empty());
}

TEST_CASE("merge: a named step scope, uneven step counts and a scope only one rank ran") {
  std::vector<Report> reports = {rank_report(0, 2, {10, 12, 11}), rank_report(1, 2, {11, 10})};
  gpuprof::ScopeNode extra = reports[1].nodes[0];
  extra.path = extra.name = "checkpoint";
  reports[1].nodes.push_back(extra);
  const gpuprof::MergedReport merged = gpuprof::merge(reports, {"train/forward"});
  CHECK(merged.step_scope == "train/forward");
  REQUIRE(merged.steps.size() == 2);  // the steps both ranks have
  CHECK(merged.steps[0].skew_ms == Approx(1.0 / 3));
  REQUIRE(merged.notes.size() == 1);
  CHECK(merged.notes[0].find("first 2") != std::string::npos);
  const gpuprof::MergedScope& checkpoint = scope_of(merged, "checkpoint");
  CHECK(checkpoint.per_rank[0].n == 0);
  CHECK(checkpoint.per_rank[1].n == 1);
  CHECK(checkpoint.slowest_rank == 1);
  CHECK(checkpoint.across_ranks.n == 1);
  CHECK_THROWS_WITH_AS(gpuprof::merge(reports, {"nope"}), doctest::Contains("in none of the reports"),
                       gpuprof::Error);
}

TEST_CASE("merge: refuses the same rank twice, different world sizes, mixed or out-of-world ranks") {
  CHECK_THROWS_WITH_AS(gpuprof::merge({rank_report(0, 2, {1}), rank_report(0, 2, {1})}),
                       doctest::Contains("rank 0 appears twice"), gpuprof::Error);
  CHECK_THROWS_WITH_AS(gpuprof::merge({rank_report(0, 2, {1}), rank_report(1, 4, {1})}),
                       doctest::Contains("different world sizes"), gpuprof::Error);
  CHECK_THROWS_WITH_AS(gpuprof::merge({rank_report(0, 2, {1}), rank_report(2, 2, {1})}),
                       doctest::Contains("outside a world of 2"), gpuprof::Error);
  Report unranked = rank_report(1, 2, {1});
  unranked.rank = {};
  CHECK_THROWS_WITH_AS(gpuprof::merge({rank_report(0, 2, {1}), unranked}), doctest::Contains("have no rank"),
                       gpuprof::Error);
  CHECK_THROWS_AS(gpuprof::merge({}), gpuprof::Error);
  // Reports without any rank are ranks 0, 1, ... in order; one run given twice is refused.
  Report other_unranked = rank_report(0, 2, {2});
  other_unranked.rank = {};
  CHECK_THROWS_WITH_AS(gpuprof::merge({unranked, unranked}),
                       doctest::Contains("reports 1 and 2 are the same run"), gpuprof::InputError);
  const gpuprof::MergedReport by_order = gpuprof::merge({unranked, other_unranked});
  CHECK(by_order.ranks[1].rank.rank == 1);
  CHECK(by_order.world_size == 2);
  // Fewer ranks than the world: merged, with a note.
  CHECK(gpuprof::merge({rank_report(0, 4, {1})}).notes.at(0) == "only 1 of 4 ranks merged");
}

TEST_CASE("merge: communication vs computation per rank and per step") {
  std::vector<Report> reports = {rank_report(0, 2, {10, 10}), rank_report(1, 2, {10, 10})};
  using gpuprof_test::add_kernel;
  add_kernel(reports[0], 0, 3, "gemm", 1, 0, 300);
  add_kernel(reports[0], 0, 3, "communication", 2, 200, 500);  // 100 of 300 hidden
  add_kernel(reports[1], 1, 3, "communication", 2, 0, 100);    // all exposed
  const gpuprof::MergedReport merged = gpuprof::merge(reports);
  CHECK(merged.has_kernels);
  CHECK(merged.steps[0].comm_compute[0].overlap_ms == Approx(0.1));
  CHECK(merged.steps[0].comm_compute[0].exposed_communication_ms() == Approx(0.2));
  CHECK(merged.steps[1].comm_compute[1].exposed_communication_ms() == Approx(0.1));
  CHECK(scope_of(merged, "train").comm_compute[0].communication_ms == Approx(0.3));
  CHECK(to_table(merged).find("Communication vs computation per step") != std::string::npos);
}

TEST_CASE("rank fields: JSON round trip, unknown ones null, old files without them") {
  gpuprof_test::TemporaryDirectory dir;
  Report report = rank_report(3, 8, {1, 2});
  report.rank.local_rank = 1;
  gpuprof::write_json(report, dir.file("rank.json"));
  const Report back = gpuprof::read_report_json(dir.file("rank.json"));
  CHECK(back.rank.rank == 3);
  CHECK(back.rank.world_size == 8);
  CHECK(back.rank.local_rank == 1);

  report.rank = {};
  const std::string text = gpuprof::to_json(report);
  CHECK(text.find(R"("rank": {"rank": null, "world_size": null, "local_rank": null})") != std::string::npos);
  const Report unknown = gpuprof::detail::report_from_json(gpuprof_test::parse_json(text));
  CHECK_FALSE(unknown.rank.known());
  CHECK(unknown.rank.world_size == -1);
  CHECK(gpuprof::rank_description(back.rank) == "rank 3 of 8 (local 1)");
}

TEST_CASE("Profiler::set_rank goes into reports; a negative rank goes back to the environment") {
  gpuprof::profiler().set_rank(3, 4, 1);
  const gpuprof::RankInfo set = gpuprof::profiler().report().rank;
  CHECK(set.rank == 3);
  CHECK(set.world_size == 4);
  CHECK(set.local_rank == 1);
  setenv("RANK", "1", 1);
  gpuprof::profiler().set_rank(-1, -1);
  CHECK(gpuprof::profiler().report().rank.rank == 1);
  unsetenv("RANK");
  CHECK_FALSE(gpuprof::profiler().report().rank.known());
}

TEST_CASE("rank_from_environment: RANK, WORLD_SIZE, LOCAL_RANK; garbage is unknown") {
  setenv("RANK", "2", 1);
  setenv("WORLD_SIZE", "4", 1);
  setenv("LOCAL_RANK", "x1", 1);
  const gpuprof::RankInfo info = gpuprof::rank_from_environment();
  CHECK(info.rank == 2);
  CHECK(info.world_size == 4);
  CHECK(info.local_rank == -1);
  unsetenv("RANK");
  unsetenv("WORLD_SIZE");
  unsetenv("LOCAL_RANK");
  CHECK_FALSE(gpuprof::rank_from_environment().known());
}

TEST_CASE("rank_from_environment: a rank outside WORLD_SIZE is not trusted") {
  CHECK(gpuprof::rank_inconsistency({5, 2, -1}) == "RANK 5 outside WORLD_SIZE 2");
  CHECK(gpuprof::rank_inconsistency({1, 2, 3}) == "LOCAL_RANK 3 outside WORLD_SIZE 2");
  CHECK(gpuprof::rank_inconsistency({0, 0, -1}) == "WORLD_SIZE 0");
  CHECK(gpuprof::rank_inconsistency({1, 2, 1}).empty());
  CHECK(gpuprof::rank_inconsistency({7, -1, -1}).empty());  // no world to disagree with
  setenv("RANK", "5", 1);
  setenv("WORLD_SIZE", "2", 1);
  CHECK(gpuprof::rank_variables().rank == 5);  // as set, for launchers that report the error themselves
  const gpuprof::RankInfo info = gpuprof::rank_from_environment();
  CHECK_FALSE(info.known());
  CHECK(info.world_size == -1);
  CHECK_FALSE(gpuprof::profiler().report().rank.known());
  unsetenv("RANK");
  unsetenv("WORLD_SIZE");
}

TEST_CASE("merged writers: JSON, markdown and a trace with one set of tracks per rank") {
  gpuprof_test::TemporaryDirectory dir;
  std::vector<Report> reports = three_ranks();
  gpuprof_test::add_kernel(reports[0], 0, 2, "gemm", 1, 0, 100);
  const gpuprof::MergedReport merged = gpuprof::merge(reports);
  gpuprof::write_json(merged, dir.file("merged.json"));
  const auto json = gpuprof_test::parse_json_file(dir.file("merged.json"));
  CHECK(json["schema"].as_string() == "gpuprof.merged");
  CHECK(json["steps"][2]["skew_ms"].as_number() == Approx(4.0));
  CHECK(json["steps"][2]["slowest_rank"].as_int64() == 1);
  CHECK(json["slowest_count"][1].as_int64() == 2);
  CHECK(json["ranks"][1]["host_name"].as_string() == "node-a");

  const std::string markdown = gpuprof::to_markdown(merged);
  CHECK(markdown.find("| step | rank 0 | rank 1 | rank 2 | skew | slowest |") != std::string::npos);
  CHECK(markdown.find("slowest rank per step: rank 0 in 1 of 3, rank 1 in 2 of 3\n") != std::string::npos);

  gpuprof::write_chrome_trace(merged, reports, dir.file("trace.json"));
  const auto trace = gpuprof_test::parse_json_file(dir.file("trace.json"));
  std::set<std::string> processes;
  std::set<std::int64_t> step_pids;
  for (const auto& event : trace["traceEvents"].elements()) {
    if (event["name"].as_string() == "process_name") processes.insert(event["args"]["name"].as_string());
    if (event["name"].as_string().rfind("ProfilerStep#", 0) == 0) step_pids.insert(event["pid"].as_int64());
  }
  CHECK(processes.count("rank 0 (node-a, Synthetic GPU) Host") == 1);
  CHECK(processes.count("rank 2 (node-a, Synthetic GPU) Host") == 1);
  CHECK(processes.count("rank 2 (node-a, Synthetic GPU) GPU 0 (Synthetic GPU)") == 1);
  CHECK(step_pids == std::set<std::int64_t>{1, 10001, 20001});
}

#ifdef GPUPROF_MERGE_TOOL
TEST_CASE("gpuprof-merge: exit status 0 on matching reports, 2 on bad input") {
  gpuprof_test::TemporaryDirectory dir;
  gpuprof::write_json(rank_report(0, 2, {10, 12}), dir.file("r0.json"));
  gpuprof::write_json(rank_report(1, 2, {11, 10}), dir.file("r1.json"));
  gpuprof::write_json(rank_report(1, 4, {11, 10}), dir.file("w4.json"));
  const std::string tool = GPUPROF_MERGE_TOOL;
  using gpuprof_test::exit_status_of;
  const std::string both = " " + dir.file("r0.json") + " " + dir.file("r1.json");
  CHECK(exit_status_of(tool + both) == 0);
  CHECK(exit_status_of(tool + both + " --markdown -o " + dir.file("m.json") + " --trace " +
                       dir.file("t.json") + " --step-scope train") == 0);
  CHECK(gpuprof_test::parse_json_file(dir.file("m.json"))["steps"].elements().size() == 2);
  CHECK(gpuprof_test::parse_json_file(dir.file("t.json")).contains("traceEvents"));
  CHECK(exit_status_of(tool) == 2);
  CHECK(exit_status_of(tool + both + " --bogus") == 2);
  CHECK(exit_status_of(tool + both + " --step-scope") == 2);
  CHECK(exit_status_of(tool + both + " --step-scope missing") == 2);
  CHECK(exit_status_of(tool + " " + dir.file("r0.json") + " " + dir.file("r0.json")) == 2);  // rank 0 twice
  CHECK(exit_status_of(tool + " " + dir.file("r0.json") + " " + dir.file("w4.json")) == 2);  // world 2 vs 4
  CHECK(exit_status_of(tool + " " + dir.file("r0.json") + " " + dir.file("missing.json")) == 2);
  std::ofstream(dir.file("other.json")) << R"({"schema": "something.else"})";
  CHECK(exit_status_of(tool + " " + dir.file("other.json")) == 2);
}
#endif
