// gpuprof/compare_rounds.hpp: a verdict from many runs of each side, run in
// rounds, instead of from the samples inside one run.
//
// ```cpp
// #include <gpuprof/compare_rounds.hpp>
// // base[i] and next[i]: the runs of round i (gpuprof-compare --run makes them, ABBA order).
// int verdict(const std::vector<gpuprof::MeasuredRun>& base, const std::vector<gpuprof::MeasuredRun>& next) {
//   const gpuprof::Comparison c = gpuprof::compare_rounds(base, next);
//   return c.regressed() ? 1 : 0;  // each row: "1.070x [1.041, 1.100]", a paired t test on rounds
// }
// ```
//
// The unit is the run: each run's median of a row is one observation, and
// Student's paired t test on the rounds' log ratios asks whether new/base
// differs from 1 (ratio: the geometric mean, with its interval). Within-run
// statistics only annotate. Why, and the verdicts:
// docs/compare-and-html.md#interleaved-runs---run
#pragma once
#include <cmath>
#include <cstdio>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "compare.hpp"
#include "config.hpp"
#include "error.hpp"
#include "stats.hpp"

GPUPROF_NAMESPACE_BEGIN

// One row over rounds: base[i] and next[i] are that row in round i's runs
// (nullopt where the run lacks it).
inline ComparisonRow compare_row_over_rounds(std::string kind, std::string key,
                                             const std::vector<std::optional<Measurement>>& base,
                                             const std::vector<std::optional<Measurement>>& next,
                                             const CompareOptions& options = {}) {
  if (base.size() != next.size())
    throw Error("compare_row_over_rounds: base and new have different round counts");
  ComparisonRow row;
  row.kind = std::move(kind);
  row.key = std::move(key);
  struct Side {
    std::vector<double> medians;
    std::size_t present = 0, unstable = 0;
  } base_side, next_side;
  std::string unmeasured;
  const auto take = [&unmeasured](const std::optional<Measurement>& run, const char* name, std::size_t round,
                                  Side& side) {
    if (!run) return;
    ++side.present;
    if (!run->unstable_reason.empty()) ++side.unstable;
    if (run->n > 0) side.medians.push_back(run->median_ms);
    else if (unmeasured.empty())
      unmeasured = std::string(name) + " run " + std::to_string(round) + ": " +
                   (run->note.empty() ? std::string("no samples") : run->note);
  };
  for (std::size_t i = 0; i < base.size(); ++i) {
    take(base[i], "base", i + 1, base_side);
    take(next[i], "new", i + 1, next_side);
  }
  const std::size_t rounds = base.size();
  const std::size_t base_present = base_side.present, next_present = next_side.present;
  if (base_present > 0) row.base = Measurement::from_samples(base_side.medians);
  if (next_present > 0) row.next = Measurement::from_samples(next_side.medians);
  if (base_present == 0 || next_present == 0) {
    row.verdict = base_present > 0 ? Verdict::only_in_base : Verdict::only_in_new;
    return row;
  }
  if (!unmeasured.empty()) {
    row.verdict = Verdict::not_measured;
    row.note = unmeasured;
    return row;
  }
  if (base_present < rounds || next_present < rounds) {
    row.verdict = Verdict::noisy;
    row.note = "missing from " + std::to_string(rounds - base_present) + " base and " +
               std::to_string(rounds - next_present) + " new run(s) of " + std::to_string(rounds);
    return row;
  }
  std::vector<double> log_ratios;
  for (std::size_t i = 0; i < rounds; ++i) {
    const double base_median = base_side.medians[i], next_median = next_side.medians[i];
    if (!(base_median > 0) || !(next_median > 0)) {
      row.verdict = Verdict::noisy;
      row.note = "a run's median is not positive (round " + std::to_string(i + 1) + ")";
      return row;
    }
    log_ratios.push_back(std::log(next_median / base_median));
  }
  double mean = 0;
  for (double d : log_ratios) mean += d;
  mean /= static_cast<double>(rounds);
  row.ratio = std::exp(mean);
  char text[200];
  if (rounds < 2) {
    row.verdict = Verdict::noisy;
    row.note = "1 round: nothing shows how far runs lie apart";
    return row;
  }
  double squares = 0;
  for (double d : log_ratios) squares += (d - mean) * (d - mean);
  const double standard_error =
      std::sqrt(squares / static_cast<double>(rounds - 1) / static_cast<double>(rounds));
  const std::size_t dof = rounds - 1;
  const double t_critical = student_t_quantile(1 - options.alpha / 2, dof);
  row.ratio_low = std::exp(mean - t_critical * standard_error);
  row.ratio_high = std::exp(mean + t_critical * standard_error);
  row.p_value = standard_error > 0
                    ? 1 - detail::student_t_two_sided_probability(std::fabs(mean) / standard_error, dof)
                    : (mean == 0 ? 1.0 : 0.0);
  row.test = "paired t on rounds";
  const bool significant = row.p_value < options.alpha;
  if (detail::judged_same(row, significant, options)) {
    // "same": set
  } else if (!significant) {
    row.verdict = Verdict::noisy;
    std::snprintf(text, sizeof text, "change not significant across %zu rounds (p = %.3g >= %g)", rounds,
                  row.p_value, options.alpha);
    row.note = text;
  } else {
    row.verdict = row.ratio > 1 ? Verdict::slower : Verdict::faster;
  }
  if (row.verdict != Verdict::same && base_side.unstable + next_side.unstable > 0)
    row.note += (row.note.empty() ? "" : "; ") + std::string("unstable within ") +
                std::to_string(base_side.unstable) + " base and " + std::to_string(next_side.unstable) +
                " new run(s)";
  return row;
}

// Rows matched by (kind, key) across every run; base[i] and next[i] are
// round i's runs. Warnings compare the first runs of each side, and say
// once what the clocks did in all of them.
inline Comparison compare_rounds(const std::vector<MeasuredRun>& base, const std::vector<MeasuredRun>& next,
                                 const CompareOptions& options = {}) {
  if (base.size() != next.size() || base.empty())
    throw Error("compare_rounds: needs as many base runs as new runs, at least one each (got " +
                std::to_string(base.size()) + " and " + std::to_string(next.size()) + ")");
  Comparison comparison;
  comparison.options = options;
  comparison.rounds = base.size();
  comparison.warnings = detail::run_differences(base.front(), next.front());
  std::vector<const MeasuredRun*> runs;
  std::vector<std::map<detail::RowId, const Measurement*>> base_rows, next_rows;
  for (const MeasuredRun& run : base) {
    detail::require_same_kind(base.front(), run);
    base_rows.push_back(detail::rows_by_id(run, "base"));
    runs.push_back(&run);
  }
  for (const MeasuredRun& run : next) {
    detail::require_same_kind(base.front(), run);
    next_rows.push_back(detail::rows_by_id(run, "new"));
    runs.push_back(&run);
  }
  std::vector<const RunClocks*> base_clocks, next_clocks;
  for (const MeasuredRun& run : base) base_clocks.push_back(&run.clocks);
  for (const MeasuredRun& run : next) next_clocks.push_back(&run.clocks);
  for (std::string& warning : detail::clock_warnings(base_clocks, next_clocks))
    comparison.warnings.push_back(std::move(warning));
  const auto row_in = [](const std::vector<std::map<detail::RowId, const Measurement*>>& side,
                         const detail::RowId& id) {
    std::vector<std::optional<Measurement>> found;
    for (const auto& rows : side) {
      const auto at = rows.find(id);
      found.push_back(at == rows.end() ? std::nullopt : std::optional<Measurement>(*at->second));
    }
    return found;
  };
  for (const MeasuredRow* row : detail::rows_in_order(runs)) {
    const detail::RowId id = detail::row_id(*row);
    comparison.rows.push_back(
        compare_row_over_rounds(row->kind, row->key, row_in(base_rows, id), row_in(next_rows, id), options));
  }
  return comparison;
}

GPUPROF_NAMESPACE_END
