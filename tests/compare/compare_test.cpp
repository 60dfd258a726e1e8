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
Report synthetic_report(double forward_ms, double noise, std::size_t n, unsigned seed, const std::string& gpu = "H100") {
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
  const gpuprof::Comparison c = gpuprof::compare(synthetic_report(1.0, 0.005, 20, 1), synthetic_report(1.1, 0.005, 20, 2));
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
  const gpuprof::Comparison c = gpuprof::compare(synthetic_report(1.0, 0.005, 20, 1), synthetic_report(0.9, 0.005, 20, 2));
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
  const gpuprof::Comparison c = gpuprof::compare(synthetic_report(1.0, 0.005, 3, 1), synthetic_report(2.0, 0.005, 3, 2));
  const auto& forward = row_of(c, "step/forward");
  CHECK(forward.verdict == Verdict::noisy);
  CHECK(forward.note.find("3 sample(s) < 5") != std::string::npos);
  CHECK_FALSE(c.regressed());
}

TEST_CASE("compare: a large change drowned in noise is noisy, not slower") {
  // 20% slower medians but 40% noise and few samples: the test cannot tell.
  const gpuprof::Comparison c = gpuprof::compare(synthetic_report(1.0, 0.4, 6, 3), synthetic_report(1.2, 0.4, 6, 4));
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
  const std::string text = gpuprof::comparison_text(c);
  CHECK(text.find("warning: the runs differ in GPU") != std::string::npos);
  CHECK(text.find("only in base") != std::string::npos);
  const std::string markdown = gpuprof::comparison_markdown(c);
  CHECK(markdown.find("| kind | name | base median ms |") != std::string::npos);
  CHECK(markdown.find("| scope | step/new | - |") != std::string::npos);
}

TEST_CASE("compare: transformer_bench rows by configuration, Welch's t test on their figures") {
  const std::string base = R"({"schema": "gpuprof.transformer_bench", "version": 1, "device": "H100", "rows": [
    {"size": "small", "ctx": 128, "batch": 4, "mode": "fwd", "precision": "bf16", "backend": "cuda", "status": "ok",
     "steps": 10, "mean_ms": 10.0, "std_ms": 0.05, "median_ms": 10.0},
    {"size": "small", "ctx": 256, "batch": 4, "mode": "fwd", "precision": "bf16", "backend": "cuda", "status": "ok",
     "steps": 10, "mean_ms": 20.0, "std_ms": 0.1, "median_ms": 20.0},
    {"size": "xl", "ctx": 1024, "batch": 4, "mode": "train", "precision": "fp32", "backend": "cuda", "status": "oom",
     "steps": 10, "mean_ms": null, "std_ms": null, "median_ms": null}]})";
  const std::string next = R"({"schema": "gpuprof.transformer_bench", "version": 1, "device": "H100", "rows": [
    {"size": "small", "ctx": 128, "batch": 4, "mode": "fwd", "precision": "bf16", "backend": "cuda", "status": "ok",
     "steps": 10, "mean_ms": 11.0, "std_ms": 0.05, "median_ms": 11.0},
    {"size": "small", "ctx": 256, "batch": 4, "mode": "fwd", "precision": "bf16", "backend": "cuda", "status": "ok",
     "steps": 10, "mean_ms": 20.02, "std_ms": 0.1, "median_ms": 20.02},
    {"size": "xl", "ctx": 1024, "batch": 4, "mode": "train", "precision": "fp32", "backend": "cuda", "status": "oom",
     "steps": 10, "mean_ms": null, "std_ms": null, "median_ms": null}]})";
  const gpuprof::Comparison c = gpuprof::compare_runs(gpuprof::measured_run_from_json(gpuprof::detail::parse_json(base)),
                                                      gpuprof::measured_run_from_json(gpuprof::detail::parse_json(next)));
  REQUIRE(c.rows.size() == 3);
  CHECK(c.rows[0].key == "size=small ctx=128 batch=4 mode=fwd precision=bf16 backend=cuda");
  CHECK(c.rows[0].test == "Welch t");
  CHECK(c.rows[0].verdict == Verdict::slower);
  CHECK(c.rows[1].verdict == Verdict::same);
  CHECK(c.rows[2].verdict == Verdict::not_measured);
  CHECK(c.rows[2].note == "base: oom");
}

TEST_CASE("compare: transformer_bench rows of two attentions stay apart; a cuDNN change is warned about") {
  const auto document = [](const char* cudnn, double fused_ms, double cudnn_ms) {
    char text[1024];
    std::snprintf(text, sizeof text, R"({"schema": "gpuprof.transformer_bench", "version": 1, "device": "H100",
      "cudnn": %s, "rows": [
      {"size": "small", "ctx": 512, "batch": 4, "mode": "step", "precision": "bf16", "attention": "fused",
       "backend": "cuda", "status": "ok", "steps": 10, "mean_ms": %g, "std_ms": 0.01, "median_ms": %g},
      {"size": "small", "ctx": 512, "batch": 4, "mode": "step", "precision": "bf16", "attention": "cudnn",
       "backend": "cuda", "status": "ok", "steps": 10, "mean_ms": %g, "std_ms": 0.01, "median_ms": %g}]})",
                  cudnn, fused_ms, fused_ms, cudnn_ms, cudnn_ms);
    return gpuprof::measured_run_from_json(gpuprof::detail::parse_json(text));
  };
  const gpuprof::Comparison c = gpuprof::compare_runs(document(R"("9.14.0")", 5.74, 5.65),
                                                      document(R"("9.19.0")", 5.74, 5.20));
  REQUIRE(c.rows.size() == 2);
  CHECK(c.rows[0].key == "size=small ctx=512 batch=4 mode=step precision=bf16 attention=fused backend=cuda");
  CHECK(c.rows[0].verdict == Verdict::same);
  CHECK(c.rows[1].key == "size=small ctx=512 batch=4 mode=step precision=bf16 attention=cudnn backend=cuda");
  CHECK(c.rows[1].verdict == Verdict::faster);
  REQUIRE(c.warnings.size() == 1);
  CHECK(c.warnings[0] == "the runs differ in cuDNN: 9.14.0 vs 9.19.0");
  // A file without the field (older, or a build without cuDNN) against one with it.
  const gpuprof::Comparison unknown = gpuprof::compare_runs(document("null", 5.74, 5.65), document(R"("9.14.0")", 5.74, 5.65));
  REQUIRE(unknown.warnings.size() == 1);
  CHECK(unknown.warnings[0] == "the runs differ in cuDNN: ? vs 9.14.0");
  CHECK(gpuprof::compare_runs(document(R"("9.14.0")", 5.74, 5.65), document(R"("9.14.0")", 5.74, 5.65)).warnings.empty());
}

#ifdef GPUPROF_COMPARE_TOOL  // the tool is built unless GPUPROF_BUILD_TOOLS is off
TEST_CASE("gpuprof-compare: exit status 1 on a regression beyond the threshold, 0 otherwise, 2 on bad input") {
  gpuprof_test::TemporaryDirectory dir;
  synthetic_report(1.0, 0.005, 20, 1).write_json(dir.file("base.json"));
  synthetic_report(1.1, 0.005, 20, 2).write_json(dir.file("slower.json"));
  synthetic_report(1.0, 0.005, 20, 3).write_json(dir.file("same.json"));
  const std::string tool = GPUPROF_COMPARE_TOOL;
  CHECK(exit_status_of(tool + " " + dir.file("base.json") + " " + dir.file("slower.json")) == 1);
  CHECK(exit_status_of(tool + " " + dir.file("base.json") + " " + dir.file("slower.json") + " --threshold 15%") == 0);
  CHECK(exit_status_of(tool + " " + dir.file("base.json") + " " + dir.file("same.json") + " --markdown") == 0);
  CHECK(exit_status_of(tool + " " + dir.file("base.json") + " " + dir.file("same.json") + " --strict") == 0);
  // A change drowned in noise: "noisy", which only --strict fails on.
  synthetic_report(1.0, 0.4, 6, 3).write_json(dir.file("noisy_base.json"));
  synthetic_report(1.2, 0.4, 6, 4).write_json(dir.file("noisy_new.json"));
  CHECK(exit_status_of(tool + " " + dir.file("noisy_base.json") + " " + dir.file("noisy_new.json")) == 0);
  CHECK(exit_status_of(tool + " " + dir.file("noisy_base.json") + " " + dir.file("noisy_new.json") + " --strict") == 1);
  CHECK(exit_status_of(tool + " " + dir.file("base.json")) == 2);
  CHECK(exit_status_of(tool + " " + dir.file("base.json") + " " + dir.file("missing.json")) == 2);
  CHECK(exit_status_of(tool + " " + dir.file("base.json") + " " + dir.file("same.json") + " --threshold five") == 2);
  std::ofstream(dir.file("other.json")) << R"({"schema": "something.else"})";
  CHECK(exit_status_of(tool + " " + dir.file("base.json") + " " + dir.file("other.json")) == 2);
}
#endif
