// ab.hpp (in-process A/B, interleaved) and clock_rule.hpp (throttled
// samples, a reference clock, unlocked clocks), on host work and synthetic
// clock readings.
#include <gpuprof/ab.hpp>
#include <gpuprof/clock_rule.hpp>

#include <doctest/doctest.h>

#include <cstdint>
#include <string>
#include <vector>

using doctest::Approx;
using gpuprof::ClockSample;
using gpuprof::Verdict;

namespace {

ClockSample clock_at(int sm_mhz, bool throttled = false) {
  ClockSample clock;
  clock.sm_mhz = sm_mhz;
  clock.memory_mhz = 2619;
  clock.throttle_reasons = throttled ? gpuprof::throttle_reason::slows_samples : 0;
  return clock;
}

std::uint64_t spin(std::uint64_t rounds) {
  std::uint64_t x = 0x9E3779B97F4A7C15ull;
  for (std::uint64_t i = 0; i < rounds; ++i) {
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
  }
  return x;
}

}  // namespace

TEST_CASE("clock rule: throttled samples are left out and counted, unless every sample was") {
  const std::vector<double> samples = {1.0, 1.0, 3.0, 1.0, 3.0};
  const std::vector<ClockSample> clocks = {clock_at(1980), clock_at(1980), clock_at(990, true),
                                           clock_at(1980), clock_at(990, true)};
  const gpuprof::ClockedMeasurement kept = gpuprof::measurement_under_clock_rule(samples, clocks);
  CHECK(kept.throttled_left_out == 2);
  CHECK(kept.measurement.n == 3);
  CHECK(kept.measurement.median_ms == 1.0);
  CHECK(kept.clock_spread == 0);

  gpuprof::ClockRule keep_all;
  keep_all.leave_out_throttled = false;
  CHECK(gpuprof::measurement_under_clock_rule(samples, clocks, keep_all).measurement.n == 5);

  const std::vector<ClockSample> all_throttled(3, clock_at(990, true));
  const gpuprof::ClockedMeasurement all = gpuprof::measurement_under_clock_rule({2, 2, 2}, all_throttled);
  CHECK(all.measurement.n == 3);
  CHECK(all.throttled_left_out == 0);
  CHECK(all.throttled_kept == 3);

  // Without one reading per sample the samples pass unchanged.
  CHECK(gpuprof::measurement_under_clock_rule(samples, {}).measurement.n == 5);
}

TEST_CASE("clock rule: a reference clock scales each sample by its own clock; the spread is measured") {
  gpuprof::ClockRule rule;
  rule.reference_sm_mhz = 2000;
  // A kernel of 1 ms at 2000 MHz, run at 2000, 1600 and 1000 MHz.
  const gpuprof::ClockedMeasurement m = gpuprof::measurement_under_clock_rule(
      {1.0, 1.25, 2.0}, {clock_at(2000), clock_at(1600), clock_at(1000)}, rule);
  CHECK(m.measurement.samples_ms.front() == Approx(1.0));
  CHECK(m.measurement.samples_ms.back() == Approx(1.0));
  CHECK(m.min_sm_mhz == 1000);
  CHECK(m.max_sm_mhz == 2000);
  CHECK(m.clock_spread == Approx(1000.0 / 1600));
}

TEST_CASE("ab: blocks alternate in ABBA order, each side warmed up first") {
  std::string calls;
  gpuprof::AbOptions options;
  options.rounds = 4;
  options.bench.warmup = 2;
  options.bench.iters = 3;
  const gpuprof::AbResult r = gpuprof::ab([&] { calls += 'A'; }, [&] { calls += 'B'; }, options);
  // Round 1: A then B, each a cold call, 2 warm-up calls and 3 samples;
  // later blocks: a cold call and 3 samples.
  CHECK(calls == std::string(6, 'A') + std::string(6, 'B') + std::string(4, 'B') + std::string(4, 'A') +
                     std::string(4, 'A') + std::string(4, 'B') + std::string(4, 'B') + std::string(4, 'A'));
  CHECK(r.base_blocks.size() == 4);
  CHECK(r.new_blocks.size() == 4);
  CHECK(r.comparison.rounds == 4);
  REQUIRE(r.comparison.rows.size() == 1);
  CHECK(r.comparison.rows[0].key == "ab");
  CHECK(r.comparison.rows[0].test == "paired t on rounds");
}

TEST_CASE("ab: twice the work is slower, with an interval above 1") {
  volatile std::uint64_t sink = 0;
  volatile std::uint64_t base_rounds = 40000, new_rounds = 80000;  // volatile: never folded away
  gpuprof::AbOptions options;
  options.rounds = 6;
  options.bench.iters = 15;
  options.name = "spin";
  const gpuprof::AbResult r =
      gpuprof::ab([&] { sink = sink + spin(base_rounds); }, [&] { sink = sink + spin(new_rounds); }, options);
  const gpuprof::ComparisonRow& row = r.comparison.rows.at(0);
  CAPTURE(gpuprof::to_table(r.comparison));
  CHECK(row.verdict == Verdict::slower);
  CHECK(row.ratio_low > 1.0);
  CHECK(row.ratio == Approx(2.0).epsilon(0.35));
}

TEST_CASE("ab: options it cannot honour are refused") {
  gpuprof::AbOptions options;
  options.rounds = 1;
  CHECK_THROWS_AS(gpuprof::ab([] {}, [] {}, options), gpuprof::Error);
  options.rounds = 2;
  options.bench.target_rel_noise = 0.02;
  CHECK_THROWS_AS(gpuprof::ab([] {}, [] {}, options), gpuprof::Error);
}

TEST_CASE("ab: an unlocked clock warning reads well") {
  CHECK(gpuprof::detail::unlocked_clock_warning(0.25, 1500, 1980, 0.02) ==
        "the SM clock moved 1500-1980 MHz (25.0% > 2%) within one run of a row: clocks are not "
        "locked (nvidia-smi -lgc), and a kernel's time follows its clock");
}
