// Tests of gpuprof::write(model, path[, options]): for every model, each
// extension writes exactly what that format's to_X gives, the longest
// matching extension wins, and any other name is an error that lists the
// known extensions and leaves nothing behind.
#include <doctest/doctest.h>

#include <algorithm>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include <gpuprof/kernel_summary.hpp>
#include <gpuprof/merge.hpp>
#include <gpuprof/report.hpp>
#include <gpuprof/report/bench_json.hpp>
#include <gpuprof/report/gbench_json.hpp>
#include <gpuprof/report/kernel_summary_writers.hpp>
#include <gpuprof/report/merged.hpp>

#include "support/json_parse.hpp"
#include "support/synthetic_report.hpp"
#include "support/temporary_directory.hpp"

using gpuprof_test::TemporaryDirectory;

namespace {

// write(model, name) into `dir` must give `expected`, byte for byte.
template <class Write>
void check_written(TemporaryDirectory& dir, const std::string& name, const std::string& expected,
                   const Write& write) {
  CAPTURE(name);
  write(dir.file(name));
  CHECK(gpuprof_test::read_text_file(dir.file(name)) == expected);
}

// write(model, name) must refuse, naming the file and every extension it knows.
template <class Write>
void check_refused(TemporaryDirectory& dir, const std::string& name, const std::vector<std::string>& known,
                   const Write& write) {
  CAPTURE(name);
  const auto sorted_entries = [&] {
    std::vector<std::string> entries = dir.entries();
    std::sort(entries.begin(), entries.end());
    return entries;
  };
  const std::vector<std::string> before = sorted_entries();
  try {
    write(dir.file(name));
    FAIL("no exception for " << name);
  } catch (const gpuprof::Error& error) {
    const std::string message = error.what();
    CHECK(message.find(name) != std::string::npos);
    for (const std::string& extension : known) CHECK(message.find(extension) != std::string::npos);
  }
  CHECK(sorted_entries() == before);
}

}  // namespace

TEST_CASE("write(report, path) picks the format by the longest matching extension") {
  const gpuprof::Report report = gpuprof_test::synthetic_training_report();
  gpuprof::ReportFileOptions options;
  options.html.title = "by extension";
  options.chrome_trace.step_scope = "step";
  options.roofline_svg.title = "roof";
  options.memory_timeline_svg.title = "memory";
  TemporaryDirectory dir;
  const auto write = [&](const std::string& path) { gpuprof::write(report, path, options); };

  check_written(dir, "r.json", gpuprof::to_json(report), write);
  check_written(dir, "r.trace.json", gpuprof::to_chrome_trace(report, options.chrome_trace), write);
  check_written(dir, "r.csv", gpuprof::to_csv(report), write);
  check_written(dir, "r.md", gpuprof::to_markdown(report), write);
  check_written(dir, "r.txt", gpuprof::to_table(report), write);
  check_written(dir, "r.html", gpuprof::to_html(report, options.html), write);
  check_written(dir, "r.roofline.svg", gpuprof::to_roofline_svg(report, options.roofline_svg), write);
  check_written(dir, "r.memory.svg",
                gpuprof::to_memory_timeline_svg(report.memory_timeline, options.memory_timeline_svg), write);
  CHECK(gpuprof::to_chrome_trace(report, options.chrome_trace).find("ProfilerStep#0") != std::string::npos);
  CHECK(gpuprof::to_html(report, options.html).find("<title>by extension</title>") != std::string::npos);

  const std::vector<std::string> known = {".json", ".trace.json", ".csv",          ".md",
                                          ".txt",  ".html",       ".roofline.svg", ".memory.svg"};
  for (const char* name : {"r.svg", "r.xml", "report", "r.JSON"}) check_refused(dir, name, known, write);
}

TEST_CASE("print_table streams to_table") {
  const gpuprof::Report report = gpuprof_test::synthetic_training_report();
  std::ostringstream out;
  gpuprof::print_table(report, out);
  CHECK(out.str() == gpuprof::to_table(report));
  CHECK(out.str().rfind("gpuprof report: timing by CUDA events", 0) == 0);
}

TEST_CASE("write(rows, path): the kernel summaries as CSV, markdown or JSON") {
  const gpuprof::Report report = gpuprof_test::synthetic_training_report();
  const std::vector<gpuprof::KernelSummaryRow> rows = gpuprof::kern_sum(report, "");
  const std::vector<gpuprof::ScopeGpuSummary> summaries = gpuprof::scope_gpu_summary(report, "");
  REQUIRE_FALSE(rows.empty());
  TemporaryDirectory dir;
  const auto write_rows = [&](const std::string& path) { gpuprof::write(rows, path); };
  check_written(dir, "k.csv", gpuprof::to_csv(rows), write_rows);
  check_written(dir, "k.md", gpuprof::to_markdown(rows), write_rows);
  check_written(dir, "k.json", gpuprof::to_json(rows), write_rows);
  check_written(dir, "g.json", gpuprof::to_json(summaries),
                [&](const std::string& path) { gpuprof::write(summaries, path); });
  CHECK(gpuprof::to_csv(rows).rfind("\"Time (%)\",\"Total Time (ns)\"", 0) == 0);
  check_refused(dir, "k.txt", {".csv", ".md", ".json"}, write_rows);
}

TEST_CASE("write(merged, path) and write(runs, path, options)") {
  const gpuprof::Report report = gpuprof_test::synthetic_training_report();
  const gpuprof::MergedReport merged = gpuprof::merge({report});
  TemporaryDirectory dir;
  const auto write_merged = [&](const std::string& path) { gpuprof::write(merged, path); };
  check_written(dir, "m.json", gpuprof::to_json(merged), write_merged);
  check_written(dir, "m.md", gpuprof::to_markdown(merged), write_merged);
  check_written(dir, "m.txt", gpuprof::to_table(merged), write_merged);
  check_refused(dir, "m.html", {".json", ".md", ".txt"}, write_merged);

  gpuprof::BenchResult result;
  result.host_ms = {1.0, 1.5, 2.0};
  result.host = gpuprof::summarize(result.host_ms);
  const std::vector<gpuprof::NamedBenchResult> runs = {{"step", result}};
  gpuprof::BenchFileOptions options;
  options.environment.host_name = "given-host";
  const auto write_runs = [&](const std::string& path) { gpuprof::write(runs, path, options); };
  check_written(dir, "b.json", gpuprof::to_bench_json(runs, options), write_runs);
  check_written(dir, "b.gbench.json", gpuprof::to_gbench_json(runs, options), write_runs);
  // The environment is the caller's: nothing probed behind its back.
  CHECK(gpuprof_test::parse_json(gpuprof::to_bench_json(runs, options))["environment"]["host_name"]
            .as_string() == "given-host");
  check_refused(dir, "b.csv", {".json", ".gbench.json"}, write_runs);
}
