// The verdict's error rates, measured: many A/A pairs at realistic noise and
// many pairs with a known shift, on synthetic samples with fixed seeds (so the
// counts are the same on every run). The rates asserted here are the ones
// docs/compare-and-html.md states.
//
// A run's samples: a median of 1 ms times lognormal noise of the given cv,
// and 3 % of samples hit by an outlier of 1.5x to 3x (preemption, a clock
// dip), as host- and GPU-timed steps show. The runs of a pair are independent:
// the offset between two real runs of one program (what interleaving and more
// runs fight, see the doc) is not modelled, as no test on one pair of runs can
// tell it from a real change.
#include <gpuprof/compare.hpp>

#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <random>
#include <vector>

using gpuprof::Verdict;

namespace {

std::vector<double> noisy_run(std::mt19937_64& random, double median_ms, double cv, std::size_t n) {
  std::normal_distribution<double> normal(0, 1);
  std::uniform_real_distribution<double> uniform(0, 1);
  const double sigma = std::sqrt(std::log(1 + cv * cv));  // lognormal with this cv, median median_ms
  std::vector<double> samples;
  for (std::size_t i = 0; i < n; ++i) {
    double x = median_ms * std::exp(sigma * normal(random));
    if (uniform(random) < 0.03) x *= 1.5 + 1.5 * uniform(random);
    samples.push_back(x);
  }
  return samples;
}

Verdict verdict_of(const std::vector<double>& base, const std::vector<double>& next) {
  return gpuprof::compare_measurements("scope", "step", gpuprof::Measurement::from_samples(base),
                                       gpuprof::Measurement::from_samples(next))
      .verdict;
}

struct Rates {
  double slower = 0, faster = 0;
};

// `pairs` pairs of runs, the new one `shift` times the base; the share of
// slower and faster verdicts.
Rates verdict_rates(double shift, double cv, std::size_t n, int pairs, unsigned seed) {
  std::mt19937_64 random(seed);
  int slower = 0, faster = 0;
  for (int i = 0; i < pairs; ++i) {
    const std::vector<double> base = noisy_run(random, 1.0, cv, n);
    const Verdict verdict = verdict_of(base, noisy_run(random, shift, cv, n));
    slower += verdict == Verdict::slower;
    faster += verdict == Verdict::faster;
  }
  return {static_cast<double>(slower) / pairs, static_cast<double>(faster) / pairs};
}

constexpr int pairs = 1000;

// One fixed seed per case, sample count and noise level.
unsigned seed_of(unsigned test, std::size_t n, double cv) {
  return test * 100000 + static_cast<unsigned>(n) * 100 + static_cast<unsigned>(std::lround(100 * cv));
}

}  // namespace

TEST_CASE("compare statistics: A/A pairs at 5-20% noise are rarely called slower or faster") {
  // Stated: at most 2.5 % per direction with 10 samples a side, at most 1 %
  // with 20 or more (measured: at most 1.6 % and 0.3 %).
  for (const std::size_t n : {10, 20, 30}) {
    for (const double cv : {0.05, 0.10, 0.15, 0.20}) {
      const Rates rates = verdict_rates(1.0, cv, n, pairs, seed_of(1, n, cv));
      const double stated = n < 20 ? 0.025 : 0.01;
      CAPTURE(n);
      CAPTURE(cv);
      CHECK(rates.slower <= stated);
      CHECK(rates.faster <= stated);
    }
  }
}

TEST_CASE(
    "compare statistics: one pair finds a 10% slowdown in stable runs, and never rules on unstable ones") {
  // Stable runs (cv 1-3 %, no outliers, as stats.hpp's limits allow): a 10 %
  // slowdown with 10 samples a side is slower in at least 95 % of pairs
  // (measured at least 99.1 %). Runs at 10 % noise with outliers are unstable (cv >
  // 5 %): one pair of them cannot show the offset between runs, so a 30 %
  // slowdown there is noisy, never slower, and the note says why.
  for (const std::size_t n : {10, 20, 30}) {
    for (const double cv : {0.01, 0.02, 0.03}) {
      std::mt19937_64 random(seed_of(2, n, cv));
      std::normal_distribution<double> normal(0, cv);
      int slower = 0, faster = 0;
      for (int i = 0; i < pairs; ++i) {
        std::vector<double> base, next;
        for (std::size_t k = 0; k < n; ++k) base.push_back(1.0 * (1 + normal(random)));
        for (std::size_t k = 0; k < n; ++k) next.push_back(1.1 * (1 + normal(random)));
        const Verdict verdict = verdict_of(base, next);
        slower += verdict == Verdict::slower;
        faster += verdict == Verdict::faster;
      }
      CAPTURE(n);
      CAPTURE(cv);
      CHECK(slower >= 0.95 * pairs);
      CHECK(faster == 0);
    }
  }
  std::mt19937_64 random(3);
  const std::vector<double> base = noisy_run(random, 1.0, 0.10, 30);
  const gpuprof::ComparisonRow row =
      gpuprof::compare_measurements("scope", "step", gpuprof::Measurement::from_samples(base),
                                    gpuprof::Measurement::from_samples(noisy_run(random, 1.3, 0.10, 30)));
  CHECK(row.verdict == Verdict::noisy);
  CHECK(row.note.find("one pair of runs with an unstable side") == 0);
  CHECK(row.note.find("unstable: cv") != std::string::npos);
}

TEST_CASE(
    "compare statistics: a run-level offset inside the samples' spread is noisy, and the note says why") {
  // Two runs 12 % apart whose samples spread by 20 %: the test alone calls this
  // significant with enough samples; the overlapping middle halves do not.
  std::mt19937_64 random(5);
  const std::vector<double> base = noisy_run(random, 1.0, 0.2, 200);
  const std::vector<double> next = noisy_run(random, 1.12, 0.2, 200);
  const gpuprof::ComparisonRow row = gpuprof::compare_measurements(
      "scope", "step", gpuprof::Measurement::from_samples(base), gpuprof::Measurement::from_samples(next));
  CHECK(row.p_value < 0.05);
  CHECK(row.verdict == Verdict::noisy);
  CHECK(row.note.find("change inside the noise: the middle halves overlap (base q3") == 0);
  CHECK(row.note.find("base unstable: cv") != std::string::npos);
  CHECK(row.note.find("new unstable: cv") != std::string::npos);
}

// A count read from a file can be 1e18 (a fuzzed bench file): the p-value must
// not take a term per degree of freedom, and must still be right.
TEST_CASE(
    "compare statistics: Welch's p-value at any sample count is quick and matches the series at the switch") {
  using gpuprof::detail::student_t_series_max_dof;
  using gpuprof::detail::student_t_two_sided_probability;
  for (const double t : {0.0, 0.5, 1.0, 1.96, 3.0, 6.0}) {
    const double series = student_t_two_sided_probability(t, student_t_series_max_dof);
    const double scaled = student_t_two_sided_probability(t, student_t_series_max_dof + 1);
    CHECK(std::fabs(series - scaled) < 1e-5);
  }
  gpuprof::Measurement a, b;
  a.n = b.n = 999999999999999910ull;
  a.mean_ms = 10.0;
  b.mean_ms = 10.0 + 1e-9;
  a.stddev_ms = b.stddev_ms = 0.05;
  const double p = gpuprof::welch_t_p_value(a, b);
  const double t = 1e-9 / std::sqrt(2 * 0.05 * 0.05 / 999999999999999910.0);
  CHECK(p == doctest::Approx(std::erfc(t / std::sqrt(2.0))).epsilon(1e-6));
  // Degrees of freedom past 2^64 (both counts near it): bounded, not converted out of range.
  a.n = b.n = ~std::uint64_t{0};
  const double far = gpuprof::welch_t_p_value(a, b);
  CHECK(far >= 0.0);
  CHECK(far <= 1.0);
}
