// gpuprof/stats.hpp: honest statistics of a set of timing samples.
//
// summarize() turns samples into a Summary: mean, sample standard deviation,
// order statistics, a 95 % confidence interval of the mean (Student t), a
// Tukey outlier count and an "unstable" verdict that says why in words. Pure
// host code on std::vector<double>.
//
// Small and degenerate sets are defined, never NaN (n == 0, 1 and 2: see
// docs/report-schema.md#statistics-summary-gpuprofstatshpp); fewer than 2
// samples is unstable, and NaN or infinite samples are left out, counted in
// `discarded`, and make the summary unstable too.
#pragma once
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdio>
#include <limits>
#include <ostream>
#include <string>
#include <utility>
#include <vector>

#include "config.hpp"
#include "quantile_sketch.hpp"

GPUPROF_NAMESPACE_BEGIN

struct SummaryOptions {
  // A Summary is unstable when the coefficient of variation or the
  // interquartile range relative to the median exceeds these fractions.
  double unstable_cv = 0.05;
  double unstable_iqr_over_median = 0.10;
};

struct Summary {
  std::size_t n = 0;  // finite samples summarized
  double mean = 0;
  double stddev = 0;  // sample standard deviation (divides by n - 1)
  double min = 0;
  double max = 0;
  double median = 0;
  double q1 = 0;        // 25th percentile
  double q3 = 0;        // 75th percentile
  double iqr = 0;       // q3 - q1
  double cv = 0;        // stddev / |mean|; +inf when mean == 0 < stddev
  double ci95_low = 0;  // mean -/+ t(0.975, n-1) * stddev / sqrt(n)
  double ci95_high = 0;
  std::size_t outliers = 0;  // samples outside [q1 - 1.5 iqr, q3 + 1.5 iqr]
  bool unstable = false;
  // "cv 7.3% > 5%; IQR/median 12.0% > 10%", "fewer than 2 samples",
  // "1 non-finite sample dropped"; "" when stable
  std::string unstable_reason;
  std::string note;           // caveats in words ("1 sample: ..."), "" when none
  std::size_t discarded = 0;  // NaN or infinite samples that were left out
  // The finite samples, ascending: all of them, or (when `estimated` is not
  // empty) a uniform sample of them (online_summary.hpp's reservoir).
  std::vector<double> sorted;
  // "" when every figure is exact. Otherwise which figures are estimates, in
  // words: n, mean, stddev, min, max and the CI stay exact; the quantiles come
  // from `sketch`, the outlier count from `sorted` scaled to n.
  std::string estimated;
  QuantileSketch sketch;  // empty unless the quantiles are estimated

  bool exact() const { return estimated.empty(); }

  // Percentile p in [0, 100] (clamped) by linear interpolation between the
  // closest ranks, like numpy.percentile's default. 0 when n == 0.
  // Estimated summaries read the sketch: within sketch.relative_error() of a
  // sample of that rank.
  double percentile(double p) const {
    if (std::isnan(p)) return p;
    if (!exact() && sketch.count() > 0) return sketch.quantile(std::clamp(p, 0.0, 100.0) / 100.0);
    if (sorted.empty()) return 0;
    const double rank = std::clamp(p, 0.0, 100.0) / 100.0 * static_cast<double>(sorted.size() - 1);
    const std::size_t below = static_cast<std::size_t>(std::floor(rank));
    if (below + 1 >= sorted.size()) return sorted.back();
    const double fraction = rank - static_cast<double>(below);
    return sorted[below] + fraction * (sorted[below + 1] - sorted[below]);
  }
};

// Quantile of the standard normal distribution; p in (0, 1), -inf/+inf at the
// ends. Bisection on std::erfc, so it is as exact as erfc (about 1e-15).
inline double normal_quantile(double p) {
  if (std::isnan(p)) return p;
  if (p <= 0) return -std::numeric_limits<double>::infinity();
  if (p >= 1) return std::numeric_limits<double>::infinity();
  const auto cdf = [](double z) { return 0.5 * std::erfc(-z / std::sqrt(2.0)); };
  double low = -40, high = 40;
  for (int step = 0; step < 200 && high - low > 1e-15 * std::max(1.0, std::fabs(low)); ++step) {
    const double middle = 0.5 * (low + high);
    (cdf(middle) < p ? low : high) = middle;
  }
  return 0.5 * (low + high);
}

namespace detail {
// Above this many degrees of freedom the Cornish-Fisher expansion around the
// normal quantile (A&S 26.7.5, terms to dof^-4) agrees with the exact series to
// about 1e-12 for the usual p, and costs nothing, where the series grows with dof.
constexpr std::size_t student_t_series_max_dof = 2000;

// P(|T| <= t) for Student's t with an integer number of degrees of freedom, by
// the finite series of Abramowitz & Stegun 26.7.3-4 (exact up to rounding; all
// terms positive, so the sum is stable) up to student_t_series_max_dof. Past it
// the series would take dof / 2 terms (a count read from a file may be 1e18),
// and t is normal after A&S 26.7.8's change of scale to within about 1e-6.
inline double student_t_two_sided_probability(double t, std::size_t dof) {
  if (dof > student_t_series_max_dof) {
    const double v = static_cast<double>(dof);
    const double z = t * (1 - 1 / (4 * v)) / std::sqrt(1 + t * t / (2 * v));
    return std::erf(z / std::sqrt(2.0));
  }
  const double theta = std::atan(t / std::sqrt(static_cast<double>(dof)));
  const double cos2 = std::cos(theta) * std::cos(theta);
  const double pi = 3.14159265358979323846;
  double term = 1, sum = 1;  // terms of the cos^(2k) series, first one is 1
  if (dof % 2 == 0) {
    for (std::size_t k = 1; 2 * k <= dof - 2; ++k) {
      term *= cos2 * static_cast<double>(2 * k - 1) / static_cast<double>(2 * k);
      sum += term;
    }
    return std::sin(theta) * sum;
  }
  if (dof == 1) return 2 * theta / pi;
  for (std::size_t k = 1; 2 * k + 1 <= dof - 2; ++k) {
    term *= cos2 * static_cast<double>(2 * k) / static_cast<double>(2 * k + 1);
    sum += term;
  }
  return 2 / pi * (theta + std::sin(theta) * std::cos(theta) * sum);
}

inline double student_t_quantile_large_dof(double p, std::size_t dof) {
  const double z = normal_quantile(p), v = static_cast<double>(dof);
  const double z2 = z * z;
  const double g1 = z * (z2 + 1) / 4;
  const double g2 = z * ((5 * z2 + 16) * z2 + 3) / 96;
  const double g3 = z * (((3 * z2 + 19) * z2 + 17) * z2 - 15) / 384;
  const double g4 = z * ((((79 * z2 + 776) * z2 + 1482) * z2 - 1920) * z2 - 945) / 92160;
  return z + (g1 + (g2 + (g3 + g4 / v) / v) / v) / v;
}
}  // namespace detail

// Quantile of Student's t distribution with `dof` degrees of freedom; p in
// (0, 1), -inf/+inf at the ends, NaN when dof == 0.
// Examples: t(0.975, 1) = 12.7062, t(0.975, 9) = 2.2622, t(0.975, inf) = 1.95996.
inline double student_t_quantile(double p, std::size_t dof) {
  if (dof == 0 || std::isnan(p)) return std::numeric_limits<double>::quiet_NaN();
  if (p <= 0) return -std::numeric_limits<double>::infinity();
  if (p >= 1) return std::numeric_limits<double>::infinity();
  if (p < 0.5) return -student_t_quantile(1 - p, dof);
  if (p == 0.5) return 0;

  if (dof > detail::student_t_series_max_dof) return detail::student_t_quantile_large_dof(p, dof);

  // Bracket, then bisect P(|T| <= t) = 2p - 1 down to the last bit.
  const double target = 2 * p - 1;
  double low = 0, high = 1;
  while (detail::student_t_two_sided_probability(high, dof) < target && high < 1e300) {
    low = high;
    high *= 2;
  }
  for (int step = 0; step < 200 && high - low > 1e-15 * high; ++step) {
    const double middle = 0.5 * (low + high);
    (detail::student_t_two_sided_probability(middle, dof) < target ? low : high) = middle;
  }
  return 0.5 * (low + high);
}

namespace detail {
// "7.3%" for 0.073: one decimal is enough to judge a verdict.
inline std::string format_percent(double fraction) {
  if (std::isinf(fraction)) return "inf%";
  char text[32];
  std::snprintf(text, sizeof text, "%.1f%%", 100 * fraction);
  return text;
}
// "5%" for 0.05, "2.5%" for 0.025: thresholds as the user wrote them.
inline std::string format_threshold(double fraction) {
  char text[32];
  std::snprintf(text, sizeof text, "%g%%", 100 * fraction);
  return text;
}
// a / |b|, with 0/0 = 0 and x/0 = +inf, so spread around zero still reads as spread.
inline double relative_to(double a, double b) {
  if (b != 0) return a / std::fabs(b);
  return a == 0 ? 0.0 : std::numeric_limits<double>::infinity();
}
}  // namespace detail

namespace detail {
inline void add_note(Summary& s, const std::string& text) { s.note += (s.note.empty() ? "" : "; ") + text; }
inline void add_unstable_reason(Summary& s, const std::string& text) {
  s.unstable = true;
  s.unstable_reason += (s.unstable_reason.empty() ? "" : "; ") + text;
}

// The figures that follow from n, mean, stddev and the quartiles: IQR, cv,
// outliers (counted in `sorted`, scaled to n when it is a sample), the CI and
// the unstable verdict. Shared by summarize() and the online summary.
inline void judge_summary(Summary& s, const SummaryOptions& options) {
  const double count = static_cast<double>(s.n);
  s.iqr = s.q3 - s.q1;
  s.cv = detail::relative_to(s.stddev, s.mean);

  const double fence_low = s.q1 - 1.5 * s.iqr, fence_high = s.q3 + 1.5 * s.iqr;
  s.outliers = static_cast<std::size_t>(std::count_if(
      s.sorted.begin(), s.sorted.end(), [&](double x) { return x < fence_low || x > fence_high; }));
  if (!s.sorted.empty() && s.sorted.size() < s.n)
    s.outliers = static_cast<std::size_t>(
        std::llround(static_cast<double>(s.outliers) * count / static_cast<double>(s.sorted.size())));

  if (s.n == 1) {
    s.ci95_low = s.ci95_high = s.mean;
    add_note(s, "1 sample: no spread or confidence interval can be estimated");
    return;
  }
  const double half_width = student_t_quantile(0.975, s.n - 1) * s.stddev / std::sqrt(count);
  s.ci95_low = s.mean - half_width;
  s.ci95_high = s.mean + half_width;

  const double iqr_over_median = detail::relative_to(s.iqr, s.median);
  if (s.cv > options.unstable_cv)
    add_unstable_reason(
        s, "cv " + detail::format_percent(s.cv) + " > " + detail::format_threshold(options.unstable_cv));
  if (iqr_over_median > options.unstable_iqr_over_median)
    add_unstable_reason(s, "IQR/median " + detail::format_percent(iqr_over_median) + " > " +
                               detail::format_threshold(options.unstable_iqr_over_median));
}
}  // namespace detail

inline Summary summarize(std::vector<double> samples, const SummaryOptions& options = {}) {
  Summary s;
  const auto first_non_finite =
      std::remove_if(samples.begin(), samples.end(), [](double x) { return !std::isfinite(x); });
  s.discarded = static_cast<std::size_t>(samples.end() - first_non_finite);
  samples.erase(first_non_finite, samples.end());
  std::sort(samples.begin(), samples.end());
  s.sorted = std::move(samples);
  s.n = s.sorted.size();
  if (s.discarded > 0) s.note = std::to_string(s.discarded) + " non-finite sample(s) left out";
  if (s.n < 2) detail::add_unstable_reason(s, "fewer than 2 samples");
  if (s.discarded > 0)
    detail::add_unstable_reason(
        s, std::to_string(s.discarded) + " non-finite sample" + (s.discarded == 1 ? "" : "s") + " dropped");
  if (s.n == 0) {
    detail::add_note(s, "no samples");
    return s;
  }

  const double count = static_cast<double>(s.n);
  s.min = s.sorted.front();
  s.max = s.sorted.back();
  double sum = 0;
  for (double x : s.sorted) sum += x;
  // Clamped because rounding can push the mean of equal samples an ulp past
  // them; equal samples then give exactly mean = sample, stddev = 0.
  s.mean = std::clamp(sum / count, s.min, s.max);
  if (s.n > 1 && s.min != s.max) {
    double squares = 0;  // two-pass: no cancellation as in sum(x^2) - n mean^2
    for (double x : s.sorted) squares += (x - s.mean) * (x - s.mean);
    s.stddev = std::sqrt(squares / (count - 1));
  }
  s.median = s.percentile(50);
  s.q1 = s.percentile(25);
  s.q3 = s.percentile(75);
  detail::judge_summary(s, options);
  return s;
}

// One line for humans, unit-free:
// "n=10 mean 1.234 ± 0.012 [95% CI 1.225, 1.243] median 1.23 p10 1.22 p90 1.25
//  min 1.21 max 1.27 cv 1.0%" followed by " UNSTABLE (reason)" when unstable.
inline std::ostream& operator<<(std::ostream& out, const Summary& s) {
  char text[320];
  std::snprintf(text, sizeof text,
                "n=%zu mean %.4g \xC2\xB1 %.3g [95%% CI %.4g, %.4g] median %.4g p10 %.4g p90 %.4g "
                "min %.4g max %.4g cv %s",
                s.n, s.mean, s.stddev, s.ci95_low, s.ci95_high, s.median, s.percentile(10), s.percentile(90),
                s.min, s.max, detail::format_percent(s.cv).c_str());
  out << text;
  if (s.unstable) out << " UNSTABLE (" << s.unstable_reason << ")";
  return out;
}

GPUPROF_NAMESPACE_END
