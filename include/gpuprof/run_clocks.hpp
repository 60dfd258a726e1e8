// gpuprof/run_clocks.hpp: what the clock rule (clock_rule.hpp) found in a
// run's samples, kept with the run (MeasuredRun::clocks) so that a
// comparison says it once, however many rows and runs it covers.
//
// ```cpp
// #include <gpuprof/run_clocks.hpp>
// bool clocks_moved(const gpuprof::RunClocks& clocks) {
//   return clocks.widest_spread > clocks.unlocked_spread;  // the comparison warns about it
// }
// ```
//
// Its own header because both sides need it: compare.hpp turns it into
// warnings, clock_rule.hpp (which builds on compare.hpp's Measurement)
// fills it in.
#pragma once
#include <cstddef>
#include <cstdio>
#include <string>
#include <utility>
#include <vector>

#include "config.hpp"

GPUPROF_NAMESPACE_BEGIN

struct RunClocks {
  std::size_t throttled_left_out = 0;  // samples read as throttled, left out of their rows
  std::size_t throttled_kept = 0;      // ... kept: all of their row was, or the rule keeps them
  // The SM clock's spread, (max - min) / median, of the row where it was
  // widest, and that row's range; 0 and -1 without clock readings.
  double widest_spread = 0;
  int min_sm_mhz = -1, max_sm_mhz = -1;
  double unlocked_spread = 0.02;  // the rule's limit (ClockRule::unlocked_spread)

  // Adds one row's figures (a ClockedMeasurement's).
  void add_row(std::size_t left_out, std::size_t kept, double spread, int min_mhz, int max_mhz) {
    throttled_left_out += left_out;
    throttled_kept += kept;
    if (max_mhz > 0 && (max_sm_mhz < 0 || spread > widest_spread)) {
      widest_spread = spread;
      min_sm_mhz = min_mhz;
      max_sm_mhz = max_mhz;
    }
  }
};

namespace detail {

// The warning about clocks that moved, with the widest row's range.
inline std::string unlocked_clock_warning(double spread, int min_mhz, int max_mhz, double limit) {
  char text[240];
  std::snprintf(text, sizeof text,
                "the SM clock moved %d-%d MHz (%.1f%% > %g%%) within one run of a row: clocks are not "
                "locked (nvidia-smi -lgc), and a kernel's time follows its clock",
                min_mhz, max_mhz, 100 * spread, 100 * limit);
  return text;
}

// The clock warnings of a comparison, each said once over all its runs: the
// widest clock spread beyond its run's limit, and the throttled samples of
// each side.
inline std::vector<std::string> clock_warnings(const std::vector<const RunClocks*>& base,
                                               const std::vector<const RunClocks*>& next) {
  std::vector<std::string> warnings;
  const RunClocks* widest = nullptr;
  RunClocks base_total, next_total;
  for (const auto& [side, total] : {std::make_pair(&base, &base_total), std::make_pair(&next, &next_total)})
    for (const RunClocks* run : *side) {
      total->add_row(run->throttled_left_out, run->throttled_kept, 0, -1, -1);
      if (run->widest_spread > run->unlocked_spread &&
          (!widest || run->widest_spread > widest->widest_spread))
        widest = run;
    }
  if (widest)
    warnings.push_back(unlocked_clock_warning(widest->widest_spread, widest->min_sm_mhz, widest->max_sm_mhz,
                                              widest->unlocked_spread));
  if (base_total.throttled_left_out + next_total.throttled_left_out > 0)
    warnings.push_back(
        std::to_string(base_total.throttled_left_out) + " base and " +
        std::to_string(next_total.throttled_left_out) +
        " new sample(s) were taken while the GPU was throttled and are left out of the verdict");
  if (base_total.throttled_kept + next_total.throttled_kept > 0)
    warnings.push_back(std::to_string(base_total.throttled_kept) + " base and " +
                       std::to_string(next_total.throttled_kept) +
                       " new sample(s) were taken while the GPU was throttled and are kept in the verdict "
                       "(every sample of their row was, or the clock rule keeps them)");
  return warnings;
}

}  // namespace detail

GPUPROF_NAMESPACE_END
