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
// The rule, per sample (samples and clock readings in the order taken):
//  - A sample read as throttled (power, thermal or slowdown reasons that slow
//    kernels: ClockSample::throttled) is left out and counted: it measured
//    the cooling, not the code. When every sample was throttled none is left
//    out (the count says so), so a throttled run is still compared.
//  - With reference_sm_mhz > 0 each kept sample is scaled by its SM clock /
//    the reference: the time it would have taken at the reference clock.
//    That holds for work bound by the SM clock (compute); memory-bound work
//    does not slow with the SM clock, so normalising is opt-in.
//  - The SM clock's spread over the kept samples, (max - min) / median, is
//    returned; above unlocked_spread the clocks were evidently not locked
//    (nvidia-smi -lgc), which callers warn about once.
// Without clock readings (host timing, no NVML) the samples pass unchanged.
#pragma once
#include <algorithm>
#include <string>
#include <vector>

#include "compare.hpp"
#include "config.hpp"
#include "detail/nvml.hpp"

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
  const bool leave_out = rule.leave_out_throttled && throttled < clocks.size();
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
  if (!kept_mhz.empty()) {
    std::sort(kept_mhz.begin(), kept_mhz.end());
    result.min_sm_mhz = kept_mhz.front();
    result.max_sm_mhz = kept_mhz.back();
    result.clock_spread =
        static_cast<double>(kept_mhz.back() - kept_mhz.front()) / kept_mhz[kept_mhz.size() / 2];
  }
  result.measurement = Measurement::from_samples(std::move(kept));
  return result;
}

GPUPROF_NAMESPACE_END
