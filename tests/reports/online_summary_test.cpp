// Tests of online_summary.hpp and quantile_sketch.hpp: Welford against the
// two-pass figures, the sketch's error bound on heavy-tailed data, the
// reservoir's exactness below capacity and its uniformity above (also sorted
// in place between values, and after a merge), merging, and an estimated
// summary surviving JSON.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

#include <gpuprof/online_summary.hpp>
#include <gpuprof/quantile_sketch.hpp>
#include <gpuprof/report/json.hpp>
#include <gpuprof/report/read_json.hpp>
#include <gpuprof/stats.hpp>

using doctest::Approx;

namespace {
// Log-normal with a Pareto tail: what step times of a noisy run look like.
std::vector<double> heavy_tailed(std::size_t n, unsigned seed) {
  std::mt19937_64 random(seed);
  std::lognormal_distribution<double> body(0.0, 0.5);
  std::uniform_real_distribution<double> uniform(0.0, 1.0);
  std::vector<double> out(n);
  for (double& x : out)
    x = uniform(random) < 0.05 ? 3.0 / std::pow(1 - uniform(random), 1 / 1.5) : body(random);
  return out;
}
}  // namespace

TEST_CASE("below the reservoir's capacity the online summary is summarize() exactly") {
  const std::vector<double> samples = heavy_tailed(5000, 1);
  gpuprof::OnlineSamples online;
  for (double x : samples) online.add(x);
  online.add(std::nan(""));
  std::vector<double> with_nan = samples;
  with_nan.push_back(std::nan(""));
  const gpuprof::Summary expected = gpuprof::summarize(with_nan);
  const gpuprof::Summary got = online.summary();
  CHECK(got.exact());
  CHECK(got.n == expected.n);
  CHECK(got.mean == expected.mean);
  CHECK(got.stddev == expected.stddev);
  CHECK(got.median == expected.median);
  CHECK(got.q1 == expected.q1);
  CHECK(got.outliers == expected.outliers);
  CHECK(got.ci95_low == expected.ci95_low);
  CHECK(got.unstable_reason == expected.unstable_reason);
  CHECK(got.note == expected.note);
  CHECK(got.sorted == expected.sorted);
}

TEST_CASE("Welford's figures match the two-pass ones past the reservoir") {
  const std::vector<double> samples = heavy_tailed(50'000, 2);
  gpuprof::OnlineSamples online(1000);
  for (double x : samples) online.add(1000 + x);  // an offset that sum(x^2) - n mean^2 would lose
  std::vector<double> shifted(samples);
  for (double& x : shifted) x += 1000;
  const gpuprof::Summary exact = gpuprof::summarize(shifted);
  const gpuprof::Summary got = online.summary();
  CHECK_FALSE(got.exact());
  CHECK(got.n == 50'000);
  CHECK(got.sorted.size() == 1000);
  CHECK(got.mean == Approx(exact.mean).epsilon(1e-12));
  CHECK(got.stddev == Approx(exact.stddev).epsilon(1e-9));
  CHECK(got.min == exact.min);
  CHECK(got.max == exact.max);
  CHECK(got.ci95_low == Approx(exact.ci95_low).epsilon(1e-12));
  CHECK(got.estimated.find("sketch") != std::string::npos);
}

TEST_CASE("sketch quantiles are within the stated relative error of the exact order statistic") {
  const std::vector<double> samples = heavy_tailed(100'000, 3);
  gpuprof::QuantileSketch sketch;
  for (double x : samples) sketch.add(x);
  std::vector<double> sorted(samples);
  std::sort(sorted.begin(), sorted.end());
  for (double q : {0.0, 0.01, 0.1, 0.25, 0.5, 0.75, 0.9, 0.99, 0.999, 1.0}) {
    const double exact = sorted[static_cast<std::size_t>(q * static_cast<double>(sorted.size() - 1))];
    CAPTURE(q);
    CHECK(std::fabs(sketch.quantile(q) - exact) <= sketch.relative_error() * exact * (1 + 1e-12));
  }
}

TEST_CASE("sketches and online samples merge as if one had seen everything") {
  const std::vector<double> samples = heavy_tailed(30'000, 4);
  gpuprof::OnlineSamples whole(500), left(500, gpuprof::QuantileSketch::default_relative_error, 7),
      right(500, gpuprof::QuantileSketch::default_relative_error, 9);
  for (std::size_t i = 0; i < samples.size(); ++i) {
    whole.add(samples[i]);
    (i % 3 == 0 ? left : right).add(samples[i]);
  }
  left.merge(right);
  const gpuprof::Summary a = whole.summary(), b = left.summary();
  CHECK(b.n == a.n);
  CHECK(b.mean == Approx(a.mean).epsilon(1e-12));
  CHECK(b.stddev == Approx(a.stddev).epsilon(1e-12));
  CHECK(b.median == a.median);  // the sketch's merge is exact
  CHECK(b.percentile(99) == a.percentile(99));
  CHECK(left.reservoir().samples().size() == 500);
  CHECK(left.reservoir().seen() == 30'000);
}

namespace {
// 100 values offered 2000 times each into reservoirs of 10, sorted in place
// every `sort_every` values (0: never): how often each value was kept.
std::vector<int> kept_per_value(int sort_every) {
  std::vector<int> kept(100, 0);
  for (std::uint64_t seed = 1; seed <= 2000; ++seed) {
    gpuprof::SampleReservoir reservoir(10, seed);
    for (int v = 0; v < 100; ++v) {
      reservoir.add(v);
      if (sort_every > 0 && v % sort_every == 0) (void)reservoir.sorted();
    }
    for (double v : reservoir.samples()) ++kept[static_cast<std::size_t>(v)];
  }
  return kept;
}
}  // namespace

TEST_CASE("the reservoir samples uniformly past its capacity, sorted in place between values or not") {
  // Every value should be kept about 2000 * 10 / 100 = 200 times; sorting
  // (a report every few steps) moves the slots a replacement takes.
  for (int sort_every : {0, 7}) {
    CAPTURE(sort_every);
    const std::vector<int> kept = kept_per_value(sort_every);
    double chi_square = 0;
    for (int count : kept) chi_square += (count - 200.0) * (count - 200.0) / 200.0;
    // 99 degrees of freedom: P(chi2 > 150) is about 0.0007.
    CHECK(chi_square < 150);
    CHECK(*std::min_element(kept.begin(), kept.end()) > 120);
  }
}

TEST_CASE("sorted() merges what changed and equals a full sort; incremental_summary() equals summary()") {
  const std::vector<double> samples = heavy_tailed(200'000, 6);
  gpuprof::OnlineSamples online(1000);
  std::size_t checks = 0;
  for (std::size_t i = 0; i < samples.size(); ++i) {
    online.add(samples[i]);
    if (i % 997 == 0 || i == 999 || i == 1000) {
      const gpuprof::Summary incremental = online.incremental_summary();
      const gpuprof::Summary full = online.summary();
      std::vector<double> expected = online.reservoir().samples();
      std::sort(expected.begin(), expected.end());
      CHECK(expected == online.reservoir().samples());  // sorted in place
      CHECK(incremental.sorted == full.sorted);
      CHECK(incremental.outliers == full.outliers);
      CHECK(incremental.median == full.median);
      ++checks;
    }
  }
  CHECK(checks > 200);
  CHECK(online.reservoir().seen() == samples.size());
  // Algorithm L draws at replacements only: about k ln(n / k) of them, far
  // fewer than n. What was kept is still spread like the data.
  const gpuprof::Summary s = online.incremental_summary();
  const gpuprof::Summary all = gpuprof::summarize(samples);
  CHECK(s.percentile(50) == Approx(all.median).epsilon(0.01));
  double kept_median = s.sorted[s.sorted.size() / 2];
  CHECK(kept_median == Approx(all.median).epsilon(0.1));
}

TEST_CASE("a merged or restored reservoir goes on sampling uniformly") {
  // Two reservoirs of 10 over values 0-49 and 50-99, merged, then 100 more
  // values: every one of the 200 should be kept about 10 / 200 of the time.
  std::vector<int> kept(200, 0);
  const int runs = 4000;
  for (int seed = 1; seed <= runs; ++seed) {
    gpuprof::SampleReservoir left(10, static_cast<std::uint64_t>(seed)),
        right(10, static_cast<std::uint64_t>(seed) + 100'000);
    for (int v = 0; v < 50; ++v) left.add(v);
    for (int v = 50; v < 100; ++v) right.add(v);
    left.merge(right);
    for (int v = 100; v < 200; ++v) left.add(v);
    CHECK(left.seen() == 200);
    for (double v : left.samples()) ++kept[static_cast<std::size_t>(v)];
  }
  const double expected = runs * 10.0 / 200;
  double early = 0, late = 0;
  for (int v = 0; v < 100; ++v) early += kept[static_cast<std::size_t>(v)];
  for (int v = 100; v < 200; ++v) late += kept[static_cast<std::size_t>(v)];
  // Half the values came before the merge: half the sample, within a few percent.
  CHECK(early / (early + late) == Approx(0.5).epsilon(0.05));
  CHECK(*std::min_element(kept.begin(), kept.end()) > expected * 0.6);
  CHECK(*std::max_element(kept.begin(), kept.end()) < expected * 1.4);
}

TEST_CASE("an estimated summary reads back from JSON with its exact figures and sketch") {
  gpuprof::OnlineSamples online(200);
  for (double x : heavy_tailed(20'000, 5)) online.add(x);
  gpuprof::Report report;
  gpuprof::ScopeNode node;
  node.path = node.name = "step";
  node.count = 20'000;
  node.host_ms = online.summary();
  report.nodes.push_back(node);
  report.recorded_instances = 20'000;
  const gpuprof::Report back =
      gpuprof::detail::report_from_json(gpuprof::detail::parse_json(gpuprof::to_json(report)));
  const gpuprof::Summary& s = back.nodes.at(0).host_ms;
  CHECK_FALSE(s.exact());
  CHECK(s.n == 20'000);
  CHECK(s.mean == node.host_ms.mean);
  CHECK(s.median == node.host_ms.median);
  CHECK(s.percentile(99) == node.host_ms.percentile(99));
  CHECK(s.sorted == node.host_ms.sorted);
  CHECK(back.recorded_instances == 20'000);
  CHECK(back.trace_note() == "trace: last 0 of 20000 instances");
}

TEST_CASE("a version 1 report (every sample, no recorded_instances) still reads") {
  const char* version_1 = R"({"schema": "gpuprof.report", "version": 1, "timing_source": "host_clock",
    "timing_note": "", "device": "", "nodes": [{"path": "a", "name": "a", "parent": -1, "depth": 0,
    "count": 3, "host_ms": {"n": 3, "samples_ms": [1, 2, 3]}, "gpu_ms": null,
    "work": {"flops": 0, "bytes": 0, "tokens": 0}}],
    "instances": [{"id": 1, "node": 0, "thread": 0, "host_begin_ns": 0, "host_end_ns": 1000000}],
    "kernels": [], "dropped_kernel_records": 0})";
  const gpuprof::Report back = gpuprof::detail::report_from_json(gpuprof::detail::parse_json(version_1));
  CHECK(back.nodes.at(0).host_ms.exact());
  CHECK(back.nodes.at(0).host_ms.median == 2);
  CHECK(back.recorded_instances == 1);
  CHECK(back.trace_note().empty());
}

TEST_CASE("a sketch that contradicts n is refused") {
  gpuprof::OnlineSamples online(10);
  for (int i = 1; i <= 100; ++i) online.add(i);
  gpuprof::Report report;
  gpuprof::ScopeNode node;
  node.path = node.name = "a";
  node.count = 100;
  node.host_ms = online.summary();
  report.nodes.push_back(node);
  std::string text = gpuprof::to_json(report);
  const std::size_t n_at = text.find("\"n\": 100");
  REQUIRE(n_at != std::string::npos);
  text.replace(n_at, 8, "\"n\": 101");
  CHECK_THROWS_AS(gpuprof::detail::report_from_json(gpuprof::detail::parse_json(text)), gpuprof::InputError);
}
