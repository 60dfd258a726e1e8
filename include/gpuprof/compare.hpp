// gpuprof/compare.hpp: did it get faster, and can we trust that? Two runs
// compared row by row with a verdict.
//
// ```cpp
// #include <gpuprof/compare.hpp>
// #include <iostream>
// int verdict(const gpuprof::Report& base_report, const gpuprof::Report& new_report) {
//   gpuprof::Comparison c = gpuprof::compare(base_report, new_report);
//   std::cout << gpuprof::to_table(c);  // or to_markdown(c)
//   return c.regressed() ? 1 : 0;       // something got slower beyond the threshold
// }
// ```
//
// Rows: scopes by path, kernels by full name, benchmark rows by name
// (report/read_bench_json.hpp reads both kinds of file); a row only in one run
// is listed, never dropped. Each row gets the Mann-Whitney U test on its
// samples (Welch's t where only summaries are kept) and a verdict on the ratio
// of medians: slower or faster only beyond the threshold, when the test says
// it is not chance and the middle halves lie apart; otherwise same or noisy,
// with the reason. Why: docs/compare-and-html.md#the-test-and-why.
#pragma once
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "config.hpp"
#include "environment.hpp"
#include "error.hpp"
#include "kernel_summary.hpp"
#include "report_model.hpp"
#include "run_clocks.hpp"
#include "stats.hpp"
#include "terminal_text.hpp"
#include "table.hpp"

GPUPROF_NAMESPACE_BEGIN

enum class Verdict { faster, slower, same, noisy, only_in_base, only_in_new, not_measured };

inline const char* verdict_name(Verdict verdict) {
  switch (verdict) {
    case Verdict::faster: return "faster";
    case Verdict::slower: return "slower";
    case Verdict::same: return "same";
    case Verdict::noisy: return "noisy";
    case Verdict::only_in_base: return "only in base";
    case Verdict::only_in_new: return "only in new";
    case Verdict::not_measured: return "not measured";
  }
  return "?";
}

// What one run measured of one row: raw samples when it kept them, else
// summary figures only.
struct Measurement {
  std::vector<double> samples_ms;  // empty when only the figures below are known
  std::size_t n = 0;
  double median_ms = 0, mean_ms = 0, stddev_ms = 0;
  double q1_ms = 0, q3_ms = 0;  // the middle half; from figures: mean -+ 0.674 stddev
  std::string unstable_reason;  // why its statistics are unstable (stats.hpp); "" when stable
  std::string note;             // why it was not measured ("oom"), or how ("host clock")

  static Measurement from_samples(std::vector<double> samples, std::string note = {}) {
    Summary s = summarize(std::move(samples));
    Measurement m;
    m.n = s.n;
    m.median_ms = s.median;
    m.mean_ms = s.mean;
    m.stddev_ms = s.stddev;
    m.q1_ms = s.q1;
    m.q3_ms = s.q3;
    if (s.n >= 2) m.unstable_reason = std::move(s.unstable_reason);  // fewer: min_samples says it
    m.samples_ms = std::move(s.sorted);
    m.note = std::move(note);
    return m;
  }
  static Measurement from_figures(std::size_t n, double mean_ms, double stddev_ms, double median_ms) {
    Measurement m;
    m.n = n;
    m.mean_ms = mean_ms;
    m.stddev_ms = stddev_ms;
    m.median_ms = median_ms;
    const double quartile_offset = 0.6744897501960817;  // normal_quantile(0.75)
    m.q1_ms = mean_ms - quartile_offset * stddev_ms;
    m.q3_ms = mean_ms + quartile_offset * stddev_ms;
    const double cv = detail::relative_to(stddev_ms, mean_ms);
    const SummaryOptions limits;
    if (n >= 2 && cv > limits.unstable_cv)
      m.unstable_reason =
          "cv " + detail::format_percent(cv) + " > " + detail::format_threshold(limits.unstable_cv);
    return m;
  }
};

// One named row of a run: "scope", "kernel" or "bench", and its key within that kind.
struct MeasuredRow {
  std::string kind;
  std::string key;
  Measurement measurement;
  // What rows of two runs are matched on, when not the key: a bench row with
  // parameter axes matches on its benchmark and axis values, in any order.
  std::string match = {};
};

// A run as the comparison sees it.
struct MeasuredRun {
  std::vector<MeasuredRow> rows;
  Environment environment;
  // Versions of libraries whose kernels the rows time, by name ("cuDNN" ->
  // "9.14.0"), where the caller knows them: runs that differ are warned about.
  std::map<std::string, std::string> libraries;
  // What it was read from: the file's schema ("gpuprof.report") and path;
  // empty for a run built in memory. compare_runs refuses two kinds.
  std::string kind;
  std::string source;
  // What the clock rule found in its samples (clock_rule.hpp): throttled
  // samples left out, how far the SM clock moved. Warned about once per comparison.
  RunClocks clocks;
};

struct CompareOptions {
  double threshold = 0.05;      // a relative change up to this is "same"
  double alpha = 0.05;          // significance level of the test
  std::size_t min_samples = 5;  // fewer on either side: "noisy"
};

struct ComparisonRow {
  std::string kind, key;
  std::optional<Measurement> base, next;
  double ratio = std::numeric_limits<double>::quiet_NaN();  // next median / base median
  // Across rounds (compare_rounds): the ratio's confidence interval at 1 - alpha; NaN otherwise.
  double ratio_low = std::numeric_limits<double>::quiet_NaN();
  double ratio_high = std::numeric_limits<double>::quiet_NaN();
  double p_value = std::numeric_limits<double>::quiet_NaN();  // of the test; NaN when none ran
  std::string test;                                           // "Mann-Whitney U", "Welch t", "" when none ran
  Verdict verdict = Verdict::not_measured;
  std::string note;
};

struct Comparison {
  CompareOptions options;
  std::size_t rounds = 0;  // runs per side of compare_rounds; 0 for one pair of runs
  std::vector<ComparisonRow> rows;
  std::vector<std::string> warnings;  // machines or builds that differ, timing sources, clocks
  bool regressed() const { return count(Verdict::slower) > 0; }
  // Rows whose change could not be told from noise: a CI gate that must not
  // let a regression through unseen fails on these too (--strict).
  bool inconclusive() const { return count(Verdict::noisy) > 0; }
  std::size_t count(Verdict verdict) const {
    return static_cast<std::size_t>(std::count_if(
        rows.begin(), rows.end(), [&](const ComparisonRow& r) { return r.verdict == verdict; }));
  }
};

// Two-sided p-value of the Mann-Whitney U test that `a` and `b` come from the
// same distribution (normal approximation with tie and continuity
// corrections; 1 when every sample is equal). Needs both non-empty.
inline double mann_whitney_u_p_value(const std::vector<double>& a, const std::vector<double>& b) {
  const double n1 = static_cast<double>(a.size()), n2 = static_cast<double>(b.size());
  std::vector<std::pair<double, int>> all;
  for (double x : a) all.emplace_back(x, 0);
  for (double x : b) all.emplace_back(x, 1);
  std::sort(all.begin(), all.end());
  double rank_sum_a = 0, tie_term = 0;
  for (std::size_t i = 0; i < all.size();) {
    std::size_t j = i;
    while (j < all.size() && all[j].first == all[i].first) ++j;
    const double tied = static_cast<double>(j - i);
    const double mid_rank = (static_cast<double>(i + 1) + static_cast<double>(j)) / 2;  // ranks from 1
    for (std::size_t k = i; k < j; ++k)
      if (all[k].second == 0) rank_sum_a += mid_rank;
    tie_term += tied * tied * tied - tied;
    i = j;
  }
  const double n = n1 + n2;
  const double u = rank_sum_a - n1 * (n1 + 1) / 2;
  const double mean = n1 * n2 / 2;
  const double variance = n1 * n2 / 12 * ((n + 1) - tie_term / (n * (n - 1)));
  if (!(variance > 0)) return 1;
  const double z = std::max(0.0, std::fabs(u - mean) - 0.5) / std::sqrt(variance);
  return std::erfc(z / std::sqrt(2.0));
}

// Two-sided p-value of Welch's t test on two means from their figures alone.
inline double welch_t_p_value(const Measurement& a, const Measurement& b) {
  const double n1 = static_cast<double>(a.n), n2 = static_cast<double>(b.n);
  const double v1 = a.stddev_ms * a.stddev_ms / n1, v2 = b.stddev_ms * b.stddev_ms / n2;
  if (!(v1 + v2 > 0)) return a.mean_ms == b.mean_ms ? 1.0 : 0.0;
  const double t = std::fabs(b.mean_ms - a.mean_ms) / std::sqrt(v1 + v2);
  const double dof =
      (v1 + v2) * (v1 + v2) / (v1 * v1 / std::max(1.0, n1 - 1) + v2 * v2 / std::max(1.0, n2 - 1));
  // Bounded before the conversion (counts from a file can be near 2^64; NaN
  // counts as 1): past 2000 the test uses the normal anyway.
  const double bounded_dof = dof >= 1e12 ? 1e12 : dof >= 1 ? std::floor(dof) : 1.0;
  const auto whole_dof = static_cast<std::size_t>(bounded_dof);
  return 1 - detail::student_t_two_sided_probability(t, whole_dof);
}

namespace detail {
// A change within the threshold is "same", significant or not (the note says
// when it was): true when it set that verdict.
inline bool judged_same(ComparisonRow& row, bool significant, const CompareOptions& options) {
  if (!(std::fabs(row.ratio - 1) <= options.threshold)) return false;
  row.verdict = Verdict::same;
  if (significant) {
    char text[100];
    std::snprintf(text, sizeof text, "significant, but within the %g%% threshold", 100 * options.threshold);
    row.note = text;
  }
  return true;
}
}  // namespace detail

inline ComparisonRow compare_measurements(std::string kind, std::string key, std::optional<Measurement> base,
                                          std::optional<Measurement> next,
                                          const CompareOptions& options = {}) {
  ComparisonRow row;
  row.kind = std::move(kind);
  row.key = std::move(key);
  row.base = std::move(base);
  row.next = std::move(next);
  if (!row.base || !row.next) {
    row.verdict = row.base ? Verdict::only_in_base : Verdict::only_in_new;
    return row;
  }
  const Measurement& a = *row.base;
  const Measurement& b = *row.next;
  if (a.n == 0 || b.n == 0) {
    row.verdict = Verdict::not_measured;
    row.note = a.n == 0 ? "base: " + (a.note.empty() ? std::string("no samples") : a.note)
                        : "new: " + (b.note.empty() ? std::string("no samples") : b.note);
    return row;
  }
  row.ratio = a.median_ms > 0 ? b.median_ms / a.median_ms : std::numeric_limits<double>::quiet_NaN();
  if (a.n < options.min_samples || b.n < options.min_samples) {
    row.verdict = Verdict::noisy;
    row.note = std::to_string(std::min(a.n, b.n)) + " sample(s) < " + std::to_string(options.min_samples);
    return row;
  }
  const bool raw = !a.samples_ms.empty() && !b.samples_ms.empty();
  row.test = raw ? "Mann-Whitney U" : "Welch t";
  row.p_value = raw ? mann_whitney_u_p_value(a.samples_ms, b.samples_ms) : welch_t_p_value(a, b);
  const bool significant = row.p_value < options.alpha;
  char text[200];
  if (!std::isfinite(row.ratio)) {
    row.verdict = Verdict::noisy;
    row.note = "base median is not positive";
  } else if (detail::judged_same(row, significant, options)) {
    // "same": set
  } else if (!significant) {
    row.verdict = Verdict::noisy;
    std::snprintf(text, sizeof text, "change not significant (p = %.3g >= %g)", row.p_value, options.alpha);
    row.note = text;
  } else if (const bool up = row.ratio > 1; (up ? b.q1_ms <= a.q3_ms : a.q1_ms <= b.q3_ms)) {
    // `quicker` should lie wholly below `slower_side` for the change to count.
    const Measurement& quicker = up ? a : b;
    const Measurement& slower_side = up ? b : a;
    row.verdict = Verdict::noisy;
    std::snprintf(text, sizeof text,
                  "change inside the noise: the middle halves overlap (%s q3 %.4g ms >= %s q1 %.4g ms)",
                  up ? "base" : "new", quicker.q3_ms, up ? "new" : "base", slower_side.q1_ms);
    row.note = text;
  } else if (!a.unstable_reason.empty() || !b.unstable_reason.empty()) {
    // One pair cannot show how far two runs of one program lie apart; a side
    // that is not even stable within its run leaves no basis for a verdict.
    row.verdict = Verdict::noisy;
    row.note = "one pair of runs with an unstable side (interleave runs: gpuprof-compare --run)";
  } else {
    row.verdict = row.ratio > 1 ? Verdict::slower : Verdict::faster;
  }
  const auto add_note = [&row](const std::string& more) {
    row.note += (row.note.empty() ? "" : "; ") + more;
  };
  if (row.verdict != Verdict::same) {
    if (!a.unstable_reason.empty()) add_note("base unstable: " + a.unstable_reason);
    if (!b.unstable_reason.empty()) add_note("new unstable: " + b.unstable_reason);
  }
  if (!a.note.empty() && a.note == b.note) add_note(a.note);
  return row;
}

namespace detail {
// Rows of a report and of a bench file never match, so comparing them would
// list everything as "only in base" / "only in new" and pass a CI gate.
inline void require_same_kind(const MeasuredRun& base, const MeasuredRun& next) {
  if (base.kind.empty() || next.kind.empty() || base.kind == next.kind) return;
  const auto named = [](const MeasuredRun& run) {
    return (run.source.empty() ? std::string() : run.source + " is ") + "a " + run.kind + " file";
  };
  throw InputError("cannot compare two kinds of file: " + named(base) + ", " + named(next));
}
}  // namespace detail

namespace detail {
// Warnings about what differs between two runs: machine, build, libraries.
inline std::vector<std::string> run_differences(const MeasuredRun& base, const MeasuredRun& next) {
  std::vector<std::string> warnings;
  for (const std::string& difference : environment_differences(base.environment, next.environment))
    warnings.push_back("the runs differ in " + difference);
  std::map<std::string, std::pair<std::string, std::string>> libraries;
  for (const auto& [name, version] : base.libraries) libraries[name].first = version;
  for (const auto& [name, version] : next.libraries) libraries[name].second = version;
  for (const auto& [name, versions] : libraries)
    if (versions.first != versions.second)
      warnings.push_back("the runs differ in " + difference_text(name, versions.first, versions.second));
  return warnings;
}

using RowId = std::pair<std::string, std::string>;  // kind, key (or match)

inline RowId row_id(const MeasuredRow& row) { return {row.kind, row.match.empty() ? row.key : row.match}; }

// A run's rows by (kind, key). A row named twice in one run is refused:
// comparing only one of the two would hide the other's regression.
inline std::map<RowId, const Measurement*> rows_by_id(const MeasuredRun& run, const char* which) {
  std::map<RowId, const Measurement*> rows;
  for (const MeasuredRow& row : run.rows)
    if (!rows.emplace(row_id(row), &row.measurement).second)
      throw InputError(std::string(which) + (run.source.empty() ? "" : " " + run.source) + " has two " +
                       row.kind + " rows named " + terminal_safe(row.key));
  return rows;
}

// The first row of each row id in the runs, in the order met.
inline std::vector<const MeasuredRow*> rows_in_order(const std::vector<const MeasuredRun*>& runs) {
  std::vector<const MeasuredRow*> first;
  std::set<RowId> seen;
  for (const MeasuredRun* run : runs)
    for (const MeasuredRow& row : run->rows)
      if (seen.insert(row_id(row)).second) first.push_back(&row);
  return first;
}
}  // namespace detail

// Rows matched by (kind, key), in base order, then the new run's own rows.
inline Comparison compare_runs(const MeasuredRun& base, const MeasuredRun& next,
                               const CompareOptions& options = {}) {
  detail::require_same_kind(base, next);
  Comparison comparison;
  comparison.options = options;
  comparison.warnings = detail::run_differences(base, next);
  for (std::string& warning : detail::clock_warnings({&base.clocks}, {&next.clocks}))
    comparison.warnings.push_back(std::move(warning));
  const auto in_base = detail::rows_by_id(base, "base");
  const auto in_next = detail::rows_by_id(next, "new");
  const auto measured = [](const auto& rows, const detail::RowId& id) {
    const auto found = rows.find(id);
    return found == rows.end() ? std::optional<Measurement>() : std::optional<Measurement>(*found->second);
  };
  for (const MeasuredRow* row : detail::rows_in_order({&base, &next})) {
    const detail::RowId id = detail::row_id(*row);
    comparison.rows.push_back(
        compare_measurements(row->kind, row->key, measured(in_base, id), measured(in_next, id), options));
  }
  return comparison;
}

// A report's rows: every scope (GPU time when it was GPU-timed, else host
// time) and every kernel name (one sample per execution, its GPU duration).
inline MeasuredRun measured_run(const Report& report) {
  MeasuredRun run;
  run.environment = report.environment;
  if (run.environment.gpu_name.empty()) run.environment.gpu_name = report.device_name;
  for (const ScopeNode& node : report.nodes)
    run.rows.push_back(
        {"scope", node.path,
         Measurement::from_samples(node.primary_ms().sorted, node.gpu_timed() ? "" : "host clock")});
  if (report.kernels_cut()) {  // records left capture's window: the aggregates cover them all
    for (const KernelSummaryRow& row :
         kern_sum(select_kernel_aggregates(report, "", ScopeView::inclusive, Activities::all)))
      run.rows.push_back({"kernel", row.name,
                          Measurement::from_figures(static_cast<std::size_t>(row.instances), row.avg_ns / 1e6,
                                                    row.stddev_ns / 1e6, row.median_ns / 1e6)});
    return run;
  }
  std::map<std::string, std::vector<double>> kernel_samples;
  std::vector<std::string> kernel_order;
  for (const KernelRecord& kernel : report.kernels) {
    auto [entry, inserted] = kernel_samples.try_emplace(kernel.name);
    if (inserted) kernel_order.push_back(kernel.name);
    entry->second.push_back(static_cast<double>(kernel.duration_ns()) / 1e6);
  }
  for (const std::string& name : kernel_order)
    run.rows.push_back({"kernel", name, Measurement::from_samples(kernel_samples[name])});
  return run;
}

inline Comparison compare(const Report& base, const Report& next, const CompareOptions& options = {}) {
  Comparison comparison = compare_runs(measured_run(base), measured_run(next), options);
  if (base.timing_source != next.timing_source)
    comparison.warnings.push_back(std::string("timing differs: base ") +
                                  timing_source_name(base.timing_source) + ", new " +
                                  timing_source_name(next.timing_source));
  return comparison;
}

namespace detail {
inline std::string format_ms(double ms) {
  char text[32];
  std::snprintf(text, sizeof text, "%.4g", ms);
  return text;
}
inline std::string format_ratio(const ComparisonRow& row) {
  if (!std::isfinite(row.ratio)) return "";
  char text[64];
  if (std::isfinite(row.ratio_low) && std::isfinite(row.ratio_high))
    std::snprintf(text, sizeof text, "%.3fx [%.3f, %.3f]", row.ratio, row.ratio_low, row.ratio_high);
  else std::snprintf(text, sizeof text, "%.3fx (%+.1f%%)", row.ratio, 100 * (row.ratio - 1));
  return text;
}
inline std::string format_p(const ComparisonRow& row) {
  if (!std::isfinite(row.p_value)) return "";
  char text[32];
  std::snprintf(text, sizeof text, "%.2g", row.p_value);
  return text;
}
// The cells of one row: kind, name, base, new, ratio, p, verdict, note.
inline std::vector<std::string> comparison_cells(const ComparisonRow& row) {
  const auto median = [](const std::optional<Measurement>& m) {
    return m && m->n > 0 ? format_ms(m->median_ms) + " (n=" + std::to_string(m->n) + ")" : std::string("-");
  };
  std::string p = format_p(row);
  if (!p.empty()) p += row.test == "Welch t" ? " (t)" : row.test == "Mann-Whitney U" ? " (U)" : " (paired t)";
  return {row.kind,          row.key, median(row.base),          median(row.next),
          format_ratio(row), p,       verdict_name(row.verdict), row.note};
}
inline const std::vector<std::string>& comparison_headers() {
  static const std::vector<std::string> headers = {"kind",     "name", "base median ms", "new median ms",
                                                   "new/base", "p",    "verdict",        "note"};
  return headers;
}
inline std::string comparison_tally(const Comparison& c) {
  std::string text;
  for (Verdict v : {Verdict::slower, Verdict::faster, Verdict::same, Verdict::noisy, Verdict::only_in_base,
                    Verdict::only_in_new, Verdict::not_measured})
    if (c.count(v) > 0)
      text += (text.empty() ? "" : ", ") + std::to_string(c.count(v)) + " " + verdict_name(v);
  char rule[160];
  if (c.rounds > 0)
    std::snprintf(rule, sizeof rule, " (threshold %g%%, alpha %g, %zu rounds: per-run medians, paired t)",
                  100 * c.options.threshold, c.options.alpha, c.rounds);
  else
    std::snprintf(rule, sizeof rule, " (threshold %g%%, alpha %g, at least %zu samples)",
                  100 * c.options.threshold, c.options.alpha, c.options.min_samples);
  return (text.empty() ? std::string("no rows") : text) + rule;
}
}  // namespace detail

namespace detail {
// One row per comparison row. For a terminal long names are cut (kernel
// names run long); in markdown a significant verdict is bold.
inline Table comparison_table(const Comparison& c, bool markdown) {
  Table table;
  for (const std::string& header : comparison_headers()) table.add_column({header});
  for (const ComparisonRow& row : c.rows) {
    std::vector<std::string> cells = comparison_cells(row);
    if (!markdown && cells[1].size() > 72) cells[1] = cells[1].substr(0, 69) + "...";
    if (markdown && (row.verdict == Verdict::slower || row.verdict == Verdict::faster))
      cells[6] = "**" + cells[6] + "**";
    table.add_row(std::move(cells));
  }
  return table;
}
}  // namespace detail

// Aligned plain-text table, warnings first, a tally last.
inline std::string to_table(const Comparison& c) {
  std::string text;
  for (const std::string& warning : c.warnings) text += "warning: " + terminal_safe(warning) + "\n";
  return text + detail::comparison_table(c, false).text() + detail::comparison_tally(c) + "\n";
}

// GitHub markdown, for a pull-request comment.
inline std::string to_markdown(const Comparison& c) {
  std::string text = "**gpuprof compare**: " + detail::comparison_tally(c) + "\n\n";
  for (const std::string& warning : c.warnings) text += "> warning: " + detail::markdown_cell(warning) + "\n";
  if (!c.warnings.empty()) text += "\n";
  return text + detail::comparison_table(c, true).markdown();
}

GPUPROF_NAMESPACE_END
