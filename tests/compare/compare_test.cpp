// compare.hpp and gpuprof-compare on synthetic runs whose answer is known.
#include <gpuprof/compare.hpp>
#include <gpuprof/report.hpp>

#include <doctest/doctest.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include "support/exit_status.hpp"
#include "support/temporary_directory.hpp"

using doctest::Approx;
using gpuprof::Report;
using gpuprof::Verdict;
using gpuprof_test::exit_status_of;

namespace {

// `n` samples around `median_ms` with relative noise `noise` (normal), seeded.
std::vector<double> timings(double median_ms, double noise, std::size_t n, unsigned seed) {
  std::mt19937_64 random(seed);
  std::normal_distribution<double> normal(0, noise);
  std::vector<double> samples;
  for (std::size_t i = 0; i < n; ++i) samples.push_back(median_ms * (1 + normal(random)));
  return samples;
}

gpuprof::ScopeNode gpu_node(const std::string& path, int parent, std::vector<double> samples) {
  gpuprof::ScopeNode node;
  node.path = path;
  node.name = path.substr(path.rfind('/') + 1);
  node.parent = parent;
  node.depth = parent < 0 ? 0 : 1;
  node.count = samples.size();
  node.host_ms = gpuprof::summarize(samples);
  node.gpu_ms = gpuprof::summarize(std::move(samples));
  return node;
}

// A report with "step" and "step/forward", GPU-timed, and one kernel "gemm".
Report synthetic_report(double forward_ms, double noise, std::size_t n, unsigned seed,
                        const std::string& gpu = "H100") {
  Report report;
  report.timing_source = gpuprof::TimingSource::cuda_events;
  report.device_name = gpu;
  report.environment.gpu_name = gpu;
  report.nodes.push_back(gpu_node("step", -1, timings(2.0, 0.002, n, seed + 100)));
  report.nodes.push_back(gpu_node("step/forward", 0, timings(forward_ms, noise, n, seed)));
  for (double ms : timings(forward_ms / 2, noise, n, seed + 7)) {
    gpuprof::KernelRecord kernel;
    kernel.name = kernel.base_name = "gemm";
    kernel.category = "gemm";
    kernel.start_ns = 1000;
    kernel.end_ns = 1000 + static_cast<std::int64_t>(ms * 1e6);
    report.kernels.push_back(kernel);
  }
  return report;
}

const gpuprof::ComparisonRow& row_of(const gpuprof::Comparison& c, const std::string& key) {
  for (const auto& row : c.rows)
    if (row.key == key) return row;
  throw std::runtime_error("no row " + key);
}

}  // namespace

TEST_CASE("compare: Mann-Whitney U p-value matches the textbook normal approximation") {
  // U = 0 for fully separated samples of 5: z = (12.5 - 0.5) / sqrt(25 * 11 / 12), p = erfc(z / sqrt 2).
  CHECK(gpuprof::mann_whitney_u_p_value({1, 2, 3, 4, 5}, {6, 7, 8, 9, 10}) == Approx(0.012186).epsilon(1e-4));
  CHECK(gpuprof::mann_whitney_u_p_value({1, 2, 3, 4, 5}, {1, 2, 3, 4, 5}) == Approx(1.0));
  CHECK(gpuprof::mann_whitney_u_p_value({3, 3, 3}, {3, 3, 3}) == 1.0);  // all tied: no evidence
  // Symmetric in its arguments.
  CHECK(gpuprof::mann_whitney_u_p_value({1, 4, 6, 9}, {2, 3, 5}) ==
        Approx(gpuprof::mann_whitney_u_p_value({2, 3, 5}, {1, 4, 6, 9})));
}

TEST_CASE("compare: a 10% slowdown with low noise is slower, and regresses") {
  const gpuprof::Comparison c =
      gpuprof::compare(synthetic_report(1.0, 0.005, 20, 1), synthetic_report(1.1, 0.005, 20, 2));
  const auto& forward = row_of(c, "step/forward");
  CHECK(forward.verdict == Verdict::slower);
  CHECK(forward.ratio == Approx(1.1).epsilon(0.01));
  CHECK(forward.p_value < 1e-6);
  CHECK(forward.test == "Mann-Whitney U");
  CHECK(row_of(c, "gemm").verdict == Verdict::slower);
  CHECK(row_of(c, "step").verdict == Verdict::same);
  CHECK(c.regressed());
  CHECK(c.warnings.empty());
}

TEST_CASE("compare: a 10% speedup is faster and no regression") {
  const gpuprof::Comparison c =
      gpuprof::compare(synthetic_report(1.0, 0.005, 20, 1), synthetic_report(0.9, 0.005, 20, 2));
  CHECK(row_of(c, "step/forward").verdict == Verdict::faster);
  CHECK_FALSE(c.regressed());
}

TEST_CASE("compare: identical distributions are the same") {
  for (unsigned seed = 0; seed < 20; ++seed) {
    const gpuprof::Comparison c =
        gpuprof::compare(synthetic_report(1.0, 0.01, 30, seed), synthetic_report(1.0, 0.01, 30, seed + 1000));
    CAPTURE(seed);
    CHECK(row_of(c, "step/forward").verdict == Verdict::same);
    CHECK_FALSE(c.regressed());
  }
}

TEST_CASE("compare: 3 samples are noisy, however large the change") {
  const gpuprof::Comparison c =
      gpuprof::compare(synthetic_report(1.0, 0.005, 3, 1), synthetic_report(2.0, 0.005, 3, 2));
  const auto& forward = row_of(c, "step/forward");
  CHECK(forward.verdict == Verdict::noisy);
  CHECK(forward.note.find("3 sample(s) < 5") != std::string::npos);
  CHECK_FALSE(c.regressed());
}

TEST_CASE("compare: a large change drowned in noise is noisy, not slower") {
  // 20% slower medians but 40% noise and few samples: the test cannot tell.
  const gpuprof::Comparison c =
      gpuprof::compare(synthetic_report(1.0, 0.4, 6, 3), synthetic_report(1.2, 0.4, 6, 4));
  const auto& forward = row_of(c, "step/forward");
  CHECK(forward.p_value >= 0.05);
  CHECK(forward.verdict == Verdict::noisy);
}

TEST_CASE("compare: rows in one run only are listed; differing machines are warned about") {
  Report base = synthetic_report(1.0, 0.005, 10, 1);
  Report next = synthetic_report(1.0, 0.005, 10, 2, "A100");
  base.nodes.push_back(gpu_node("step/old", 0, timings(0.5, 0.01, 10, 5)));
  next.nodes.push_back(gpu_node("step/new", 0, timings(0.5, 0.01, 10, 6)));
  const gpuprof::Comparison c = gpuprof::compare(base, next);
  CHECK(row_of(c, "step/old").verdict == Verdict::only_in_base);
  CHECK(row_of(c, "step/new").verdict == Verdict::only_in_new);
  REQUIRE(c.warnings.size() == 1);
  CHECK(c.warnings[0] == "the runs differ in GPU: H100 vs A100");
  const std::string text = gpuprof::to_table(c);
  CHECK(text.find("warning: the runs differ in GPU") != std::string::npos);
  CHECK(text.find("only in base") != std::string::npos);
  const std::string markdown = gpuprof::to_markdown(c);
  CHECK(markdown.find("| kind | name | base median ms |") != std::string::npos);
  CHECK(markdown.find("| scope | step/new | - |") != std::string::npos);
}

namespace {
// A run of summary-only rows (mean, std, median over n samples), as a caller
// that kept no samples builds it.
gpuprof::MeasuredRun figures_run(const std::vector<std::pair<std::string, gpuprof::Measurement>>& rows) {
  gpuprof::MeasuredRun run;
  for (const auto& [key, m] : rows) run.rows.push_back({"bench", key, m});
  return run;
}
}  // namespace

TEST_CASE("compare: summary-only rows get Welch's t test on their figures; an unmeasured row says why") {
  using gpuprof::Measurement;
  Measurement oom;
  oom.note = "oom";
  const gpuprof::MeasuredRun base =
      figures_run({{"small ctx=128", Measurement::from_figures(10, 10.0, 0.05, 10.0)},
                   {"small ctx=256", Measurement::from_figures(10, 20.0, 0.1, 20.0)},
                   {"xl ctx=1024", oom}});
  const gpuprof::MeasuredRun next =
      figures_run({{"small ctx=128", Measurement::from_figures(10, 11.0, 0.05, 11.0)},
                   {"small ctx=256", Measurement::from_figures(10, 20.02, 0.1, 20.02)},
                   {"xl ctx=1024", oom}});
  const gpuprof::Comparison c = gpuprof::compare_runs(base, next);
  REQUIRE(c.rows.size() == 3);
  CHECK(c.rows[0].key == "small ctx=128");
  CHECK(c.rows[0].test == "Welch t");
  CHECK(c.rows[0].verdict == Verdict::slower);
  CHECK(c.rows[1].verdict == Verdict::same);
  CHECK(c.rows[2].verdict == Verdict::not_measured);
  CHECK(c.rows[2].note == "base: oom");
}

TEST_CASE("compare: runs that name different library versions are warned about") {
  const auto run = [](const char* cudnn) {
    gpuprof::MeasuredRun r =
        figures_run({{"attention=cudnn", gpuprof::Measurement::from_figures(10, 5.65, 0.01, 5.65)}});
    if (cudnn != nullptr) r.libraries["cuDNN"] = cudnn;
    return r;
  };
  const gpuprof::Comparison c = gpuprof::compare_runs(run("9.14.0"), run("9.19.0"));
  REQUIRE(c.warnings.size() == 1);
  CHECK(c.warnings[0] == "the runs differ in cuDNN: 9.14.0 vs 9.19.0");
  // A run that does not know the version against one that does.
  const gpuprof::Comparison unknown = gpuprof::compare_runs(run(nullptr), run("9.14.0"));
  REQUIRE(unknown.warnings.size() == 1);
  CHECK(unknown.warnings[0] == "the runs differ in cuDNN: ? vs 9.14.0");
  CHECK(gpuprof::compare_runs(run("9.14.0"), run("9.14.0")).warnings.empty());
}

#ifdef GPUPROF_COMPARE_TOOL  // the tool is built unless GPUPROF_BUILD_TOOLS is off
TEST_CASE(
    "gpuprof-compare: exit status 1 on a regression beyond the threshold, 0 otherwise, 2 on bad input") {
  gpuprof_test::TemporaryDirectory dir;
  gpuprof::write_json(synthetic_report(1.0, 0.005, 20, 1), dir.file("base.json"));
  gpuprof::write_json(synthetic_report(1.1, 0.005, 20, 2), dir.file("slower.json"));
  gpuprof::write_json(synthetic_report(1.0, 0.005, 20, 3), dir.file("same.json"));
  const std::string tool = GPUPROF_COMPARE_TOOL;
  CHECK(exit_status_of(tool + " " + dir.file("base.json") + " " + dir.file("slower.json")) == 1);
  CHECK(exit_status_of(tool + " " + dir.file("base.json") + " " + dir.file("slower.json") +
                       " --threshold 15%") == 0);
  CHECK(exit_status_of(tool + " " + dir.file("base.json") + " " + dir.file("same.json") + " --markdown") ==
        0);
  CHECK(exit_status_of(tool + " " + dir.file("base.json") + " " + dir.file("same.json") + " --strict") == 0);
  // A change drowned in noise: "noisy", which only --strict fails on.
  gpuprof::write_json(synthetic_report(1.0, 0.4, 6, 3), dir.file("noisy_base.json"));
  gpuprof::write_json(synthetic_report(1.2, 0.4, 6, 4), dir.file("noisy_new.json"));
  CHECK(exit_status_of(tool + " " + dir.file("noisy_base.json") + " " + dir.file("noisy_new.json")) == 0);
  CHECK(exit_status_of(tool + " " + dir.file("noisy_base.json") + " " + dir.file("noisy_new.json") +
                       " --strict") == 1);
  CHECK(exit_status_of(tool + " " + dir.file("base.json")) == 2);
  CHECK(exit_status_of(tool + " " + dir.file("base.json") + " " + dir.file("missing.json")) == 2);
  CHECK(exit_status_of(tool + " " + dir.file("base.json") + " " + dir.file("same.json") +
                       " --threshold five") == 2);
  std::ofstream(dir.file("other.json")) << R"({"schema": "something.else"})";
  CHECK(exit_status_of(tool + " " + dir.file("base.json") + " " + dir.file("other.json")) == 2);
}
#endif
