// gpuprof/clock_rule.hpp: what a comparison does with the GPU clocks that
// bench() reads after each sample (BenchResult::clocks).
//
// ```cpp
// #include <gpuprof/bench.hpp>
// #include <gpuprof/clock_rule.hpp>
// gpuprof::Measurement at_reference_clock(const gpuprof::BenchResult& result) {
//   gpuprof::ClockRule rule;
//   rule.reference_sm_mhz = 1980;  // times as if every sample ran at 1980 MHz
//   const gpuprof::ClockedMeasurement m =
//       gpuprof::measurement_under_clock_rule(result.gpu_ms, result.clocks, rule);
//   return m.measurement;  // also: m.throttled_left_out, m.clock_spread
// }
// ```
//
// Per sample: a throttled one (ClockSample::throttled) is left out and
// counted, unless every sample was; with reference_sm_mhz > 0 a kept sample
// is scaled to that SM clock (opt-in: memory-bound work does not slow with
// it). The SM clock's spread over the kept samples is returned, and a
// comparison warns once above unlocked_spread (run_clocks.hpp). Without
// clock readings the samples pass unchanged. Rows of gpuprof.bench files get
// the same rule, without the scaling (report/read_bench_json.hpp). Why:
// docs/compare-and-html.md, "Lock the GPU clocks".
#pragma once
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "compare.hpp"
#include "config.hpp"
#include "detail/number_text.hpp"
#include "detail/nvml.hpp"
#include "error.hpp"
#include "run_clocks.hpp"

GPUPROF_NAMESPACE_BEGIN

struct ClockRule {
  bool leave_out_throttled = true;
  int reference_sm_mhz = 0;       // > 0: samples scaled to this SM clock
  double unlocked_spread = 0.02;  // SM clock spread in a run above which to warn
};

struct ClockedMeasurement {
  Measurement measurement;
  std::size_t throttled_left_out = 0;
  std::size_t throttled_kept = 0;  // throttled samples kept because every sample was
  double clock_spread = 0;         // (max - min) / median SM clock of the kept samples; 0 without clocks
  int min_sm_mhz = -1, max_sm_mhz = -1;
};

namespace detail {
// Whether the rule leaves `throttled` of `total` samples out: not when every
// sample was throttled (the run is still compared, the count says so).
inline bool leaves_out_throttled(const ClockRule& rule, std::size_t throttled, std::size_t total) {
  return rule.leave_out_throttled && throttled > 0 && throttled < total;
}

// The kept samples' SM clock range and spread, (max - min) / median; returns
// the median (0 without readings).
inline int set_clock_range(ClockedMeasurement& result, std::vector<int> kept_mhz) {
  if (kept_mhz.empty()) return 0;
  std::sort(kept_mhz.begin(), kept_mhz.end());
  result.min_sm_mhz = kept_mhz.front();
  result.max_sm_mhz = kept_mhz.back();
  result.clock_spread =
      static_cast<double>(kept_mhz.back() - kept_mhz.front()) / kept_mhz[kept_mhz.size() / 2];
  return kept_mhz[kept_mhz.size() / 2];
}
}  // namespace detail

inline ClockedMeasurement measurement_under_clock_rule(const std::vector<double>& samples_ms,
                                                       const std::vector<ClockSample>& clocks,
                                                       const ClockRule& rule = {}) {
  ClockedMeasurement result;
  if (clocks.size() != samples_ms.size()) {  // no readings (or not one per sample): nothing to apply
    result.measurement = Measurement::from_samples(samples_ms);
    return result;
  }
  const std::size_t throttled = static_cast<std::size_t>(
      std::count_if(clocks.begin(), clocks.end(), [](const ClockSample& c) { return c.throttled(); }));
  const bool leave_out = detail::leaves_out_throttled(rule, throttled, clocks.size());
  std::vector<double> kept;
  std::vector<int> kept_mhz;
  for (std::size_t i = 0; i < samples_ms.size(); ++i) {
    if (leave_out && clocks[i].throttled()) continue;
    double ms = samples_ms[i];
    if (rule.reference_sm_mhz > 0 && clocks[i].sm_mhz > 0)
      ms *= static_cast<double>(clocks[i].sm_mhz) / rule.reference_sm_mhz;
    kept.push_back(ms);
    if (clocks[i].sm_mhz > 0) kept_mhz.push_back(clocks[i].sm_mhz);
  }
  (leave_out ? result.throttled_left_out : result.throttled_kept) = throttled;
  detail::set_clock_range(result, std::move(kept_mhz));
  result.measurement = Measurement::from_samples(std::move(kept));
  return result;
}

// The SM clock readings of a row read back from a file, in sample order.
struct SampleClocks {
  std::vector<int> sm_mhz;      // -1 where unknown
  std::vector<bool> throttled;  // as many as sm_mhz (a missing flag reads as not throttled)
};

// The rule for a row read back from a gpuprof.bench file, whose samples are
// stored in ascending order and so no longer beside their clock readings:
// the samples read as throttled are named by their times (throttled_ms, each
// one of samples_ms; InputError otherwise). With a reference clock the row is
// scaled by the median of the readings kept, the pairing of each time with
// its clock being lost; the spread is that of the readings the rule keeps.
inline ClockedMeasurement measurement_under_clock_rule(std::vector<double> samples_ms,
                                                       const std::vector<double>& throttled_ms,
                                                       const SampleClocks& clocks,
                                                       const ClockRule& rule = {}) {
  ClockedMeasurement result;
  const bool leave_out = detail::leaves_out_throttled(rule, throttled_ms.size(), samples_ms.size());
  std::sort(samples_ms.begin(), samples_ms.end());
  std::vector<double> throttled = throttled_ms;
  for (const double ms : throttled)  // NaN would break the sort's ordering
    if (!std::isfinite(ms)) throw InputError("throttled sample " + detail::shortest_decimal(ms) + " ms");
  std::sort(throttled.begin(), throttled.end());
  // Both ascending: one walk matches each throttled time to a sample of its
  // own (a time listed twice names two samples).
  const auto not_a_sample = [](double ms) {
    return InputError("throttled sample " + detail::shortest_decimal(ms) +
                      " ms is not one of the row's samples (or is listed more often)");
  };
  std::vector<double> kept;
  std::size_t next_throttled = 0;
  for (const double ms : samples_ms) {
    if (next_throttled < throttled.size() && throttled[next_throttled] < ms)
      throw not_a_sample(throttled[next_throttled]);
    if (next_throttled < throttled.size() && throttled[next_throttled] == ms) {
      ++next_throttled;
      if (leave_out) continue;
    }
    kept.push_back(ms);
  }
  if (next_throttled < throttled.size()) throw not_a_sample(throttled[next_throttled]);
  (leave_out ? result.throttled_left_out : result.throttled_kept) = throttled_ms.size();
  std::vector<int> kept_mhz;
  for (std::size_t i = 0; i < clocks.sm_mhz.size(); ++i)
    if (clocks.sm_mhz[i] > 0 && !(leave_out && i < clocks.throttled.size() && clocks.throttled[i]))
      kept_mhz.push_back(clocks.sm_mhz[i]);
  const int median_mhz = detail::set_clock_range(result, std::move(kept_mhz));
  if (rule.reference_sm_mhz > 0 && median_mhz > 0) {
    const double scale = static_cast<double>(median_mhz) / rule.reference_sm_mhz;
    for (double& ms : kept) ms *= scale;
  }
  result.measurement = Measurement::from_samples(std::move(kept));
  return result;
}

// Adds a row's clock figures to its run's (MeasuredRun::clocks), and the
// rule's limit.
inline void add_row_clocks(RunClocks& run, const ClockedMeasurement& row, const ClockRule& rule) {
  run.unlocked_spread = rule.unlocked_spread;
  run.add_row(row.throttled_left_out, row.throttled_kept, row.clock_spread, row.min_sm_mhz, row.max_sm_mhz);
}

GPUPROF_NAMESPACE_END
