// Tests of gpuprof/stats.hpp against values computed by hand (and, for the
// t quantiles, against published tables).
#include <doctest/doctest.h>

#include <cmath>
#include <limits>
#include <sstream>
#include <vector>

#include <gpuprof/stats.hpp>

using doctest::Approx;
using gpuprof::summarize;
using gpuprof::Summary;

TEST_CASE("student_t_quantile matches published values") {
  // Two-sided 95 % points, to the digits of standard tables.
  CHECK(gpuprof::student_t_quantile(0.975, 1) == Approx(12.7062047362).epsilon(1e-9));
  CHECK(gpuprof::student_t_quantile(0.975, 2) == Approx(4.3026527297).epsilon(1e-9));
  CHECK(gpuprof::student_t_quantile(0.975, 7) == Approx(2.3646242516).epsilon(1e-9));
  CHECK(gpuprof::student_t_quantile(0.975, 9) == Approx(2.2621571628).epsilon(1e-9));
  CHECK(gpuprof::student_t_quantile(0.975, 29) == Approx(2.0452296421).epsilon(1e-9));
  CHECK(gpuprof::student_t_quantile(0.975, 100) == Approx(1.9839715185).epsilon(1e-9));
  CHECK(gpuprof::student_t_quantile(0.995, 2) == Approx(9.9248432009).epsilon(1e-9));
  CHECK(gpuprof::student_t_quantile(0.9, 5) == Approx(1.4758840488).epsilon(1e-9));
  // Symmetry, centre and the ends.
  CHECK(gpuprof::student_t_quantile(0.025, 9) == Approx(-2.2621571628).epsilon(1e-9));
  CHECK(gpuprof::student_t_quantile(0.5, 4) == 0.0);
  CHECK(std::isinf(gpuprof::student_t_quantile(1.0, 4)));
  CHECK(gpuprof::student_t_quantile(0.0, 4) < 0);
  CHECK(std::isnan(gpuprof::student_t_quantile(0.975, 0)));
}

TEST_CASE("student_t_quantile tends to the normal quantile, continuously") {
  CHECK(gpuprof::normal_quantile(0.975) == Approx(1.959963984540054).epsilon(1e-12));
  CHECK(gpuprof::normal_quantile(0.8413447460685429) == Approx(1.0).epsilon(1e-12));
  CHECK(std::fabs(gpuprof::normal_quantile(0.5)) < 1e-14);
  CHECK(gpuprof::student_t_quantile(0.975, 1000000) == Approx(1.959966).epsilon(1e-6));

  // Where the exact series hands over to the Cornish-Fisher expansion, both
  // must agree, or CIs would jump between n = 2001 and n = 2002.
  const std::size_t handover = gpuprof::detail::student_t_series_max_dof;
  for (double p : {0.9, 0.975, 0.995, 0.9999}) {
    CAPTURE(p);
    CHECK(gpuprof::detail::student_t_quantile_large_dof(p, handover) ==
          Approx(gpuprof::student_t_quantile(p, handover)).epsilon(1e-10));
  }
}

TEST_CASE("summary of no samples is all zeros and says so") {
  const Summary s = summarize({});
  CHECK(s.n == 0);
  for (double value : {s.mean, s.stddev, s.min, s.max, s.median, s.q1, s.q3, s.iqr, s.cv, s.ci95_low,
                       s.ci95_high, s.percentile(90)})
    CHECK(value == 0.0);
  CHECK(s.outliers == 0);
  CHECK(s.unstable);
  CHECK(s.unstable_reason == "fewer than 2 samples");
  CHECK(s.note == "no samples");
}

TEST_CASE("summary of one sample has no spread and a point CI") {
  const Summary s = summarize({3.5});
  CHECK(s.n == 1);
  for (double value : {s.mean, s.min, s.max, s.median, s.q1, s.q3, s.ci95_low, s.ci95_high, s.percentile(10)})
    CHECK(value == 3.5);
  CHECK(s.stddev == 0.0);
  CHECK(s.iqr == 0.0);
  CHECK(s.cv == 0.0);
  CHECK(s.outliers == 0);
  CHECK(s.unstable);  // one number says nothing about how typical it is
  CHECK(s.unstable_reason == "fewer than 2 samples");
  CHECK(s.note.find("1 sample") != std::string::npos);
}

TEST_CASE("summary of two samples") {
  const Summary s = summarize({3.0, 1.0});
  CHECK(s.n == 2);
  CHECK(s.mean == 2.0);
  CHECK(s.stddev == Approx(std::sqrt(2.0)));
  CHECK(s.median == 2.0);
  CHECK(s.q1 == 1.5);
  CHECK(s.q3 == 2.5);
  CHECK(s.iqr == 1.0);
  // half width = t(0.975, 1) * sqrt(2) / sqrt(2)
  CHECK(s.ci95_low == Approx(2.0 - 12.7062047362));
  CHECK(s.ci95_high == Approx(2.0 + 12.7062047362));
  CHECK(s.unstable);
  CHECK(s.note.empty());
}

TEST_CASE("summary matches hand-computed statistics") {
  // sum of squared deviations from the mean 5 is 32; variance 32 / 7.
  const Summary s = summarize({9, 4, 5, 2, 4, 7, 4, 5});
  CHECK(s.n == 8);
  CHECK(s.sorted == std::vector<double>{2, 4, 4, 4, 5, 5, 7, 9});
  CHECK(s.mean == 5.0);
  CHECK(s.stddev == Approx(std::sqrt(32.0 / 7.0)).epsilon(1e-14));
  CHECK(s.min == 2.0);
  CHECK(s.max == 9.0);
  CHECK(s.median == 4.5);  // rank 3.5: halfway between 4 and 5
  CHECK(s.q1 == 4.0);      // rank 1.75 between 4 and 4
  CHECK(s.q3 == 5.5);      // rank 5.25: 5 + 0.25 * (7 - 5)
  CHECK(s.iqr == 1.5);
  CHECK(s.cv == Approx(std::sqrt(32.0 / 7.0) / 5.0));
  const double half_width = 2.3646242516 * std::sqrt(32.0 / 7.0) / std::sqrt(8.0);
  CHECK(s.ci95_low == Approx(5.0 - half_width).epsilon(1e-9));
  CHECK(s.ci95_high == Approx(5.0 + half_width).epsilon(1e-9));
  // Fences 4 - 2.25 = 1.75 and 5.5 + 2.25 = 7.75: only 9 is outside.
  CHECK(s.outliers == 1);
  CHECK(s.unstable);
  CHECK(s.unstable_reason == "cv 42.8% > 5%; IQR/median 33.3% > 10%");
}

TEST_CASE("equal samples have exactly zero spread and are stable") {
  const Summary s = summarize(std::vector<double>(10, 0.7));
  CHECK(s.mean == 0.7);
  CHECK(s.stddev == 0.0);
  CHECK(s.cv == 0.0);
  CHECK(s.iqr == 0.0);
  CHECK(s.ci95_low == 0.7);
  CHECK(s.ci95_high == 0.7);
  CHECK(s.outliers == 0);
  CHECK_FALSE(s.unstable);
}

TEST_CASE("percentile interpolates linearly like numpy") {
  const Summary s = summarize({4, 1, 3, 2});
  CHECK(s.percentile(0) == 1.0);
  CHECK(s.percentile(10) == Approx(1.3));
  CHECK(s.percentile(50) == Approx(2.5));
  CHECK(s.percentile(90) == Approx(3.7));
  CHECK(s.percentile(100) == 4.0);
  CHECK(s.percentile(-5) == 1.0);   // clamped
  CHECK(s.percentile(150) == 4.0);  // clamped
  CHECK(std::isnan(s.percentile(std::numeric_limits<double>::quiet_NaN())));
}

TEST_CASE("outliers are counted outside the Tukey fences on both sides") {
  std::vector<double> samples(8, 10.0);
  samples.push_back(100.0);
  CHECK(summarize(samples).outliers == 1);
  samples.push_back(1.0);
  CHECK(summarize(samples).outliers == 2);
}

TEST_CASE("unstable verdicts give their reason") {
  SUBCASE("coefficient of variation alone") {
    std::vector<double> samples(9, 10.0);
    samples.push_back(20.0);  // mean 11, stddev sqrt(10), IQR 0
    const Summary s = summarize(samples);
    CHECK(s.unstable);
    CHECK(s.unstable_reason == "cv 28.7% > 5%");
  }
  SUBCASE("IQR over median alone, with the caller's thresholds") {
    // cv 11.5 % is under the 50 % asked for; IQR/median is 20 / 100.
    const Summary s = summarize({90, 90, 110, 110}, {0.5, 0.1});
    CHECK(s.unstable);
    CHECK(s.unstable_reason == "IQR/median 20.0% > 10%");
  }
  SUBCASE("thresholds are printed as given") {
    const Summary s = summarize({100, 103, 100, 103}, {0.01, 0.5});
    CHECK(s.unstable_reason == "cv 1.7% > 1%");
  }
  SUBCASE("quiet samples are stable") {
    const Summary s = summarize({100, 101, 99, 100, 100.5});
    CHECK_FALSE(s.unstable);
    CHECK(s.unstable_reason.empty());
  }
}

TEST_CASE("non-finite samples are left out and counted") {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const double inf = std::numeric_limits<double>::infinity();
  const Summary s = summarize({1.0, nan, 3.0, inf, -inf});
  CHECK(s.n == 2);
  CHECK(s.discarded == 3);
  CHECK(s.mean == 2.0);
  CHECK(s.note.find("3 non-finite") != std::string::npos);
  CHECK(s.unstable);
  CHECK(s.unstable_reason == "3 non-finite samples dropped; cv 70.7% > 5%; IQR/median 50.0% > 10%");

  const Summary one_nan = summarize({2.0, 2.0, 2.0, nan});
  CHECK(one_nan.unstable);
  CHECK(one_nan.unstable_reason == "1 non-finite sample dropped");
  const Summary all_nan = summarize({nan, inf});
  CHECK(all_nan.n == 0);
  CHECK(all_nan.unstable_reason == "fewer than 2 samples; 2 non-finite samples dropped");
}

TEST_CASE("a summary prints on one line with its verdict") {
  std::ostringstream text;
  text << summarize({1, 3});
  CHECK(text.str().find("n=2 mean 2 ") == 0);
  CHECK(text.str().find("UNSTABLE (cv 70.7% > 5%") != std::string::npos);
  CHECK(text.str().find('\n') == std::string::npos);
}
