// merge_by_name(): ranges of one name measured apart become one,
// counts added, rates and throughputs exact for the whole, ratios weighted by
// duration. Plain data: no GPU, no CUPTI.
#include <gpuprof/counter_data.hpp>

#include <doctest/doctest.h>

namespace {

gpuprof::CounterRange range(const char* name, double duration_ns, double bytes, double throughput_pct,
                            double bytes_per_second, double hit_pct) {
  return {name,
          {{gpuprof::metric::duration_ns, duration_ns},
           {gpuprof::metric::dram_bytes_read, bytes},
           {gpuprof::metric::memory_throughput_pct, throughput_pct},
           {"dram__bytes_read.sum.per_second", bytes_per_second},
           {gpuprof::metric::l2_hit_rate_pct, hit_pct},
           {"sm__warps_active.max", hit_pct}}};
}

double value(const gpuprof::CounterRange& r, const char* metric) {
  const double* found = r.find(metric);
  REQUIRE(found);
  return *found;
}

}  // namespace

TEST_CASE("merge_by_name adds counts and weighs ratios by duration, in order of first appearance") {
  // Two openings of step/forward: 100 ns reading 1000 bytes at 25 % of peak, 300 ns reading 5000 at 50 %.
  const std::vector<gpuprof::CounterRange> ranges = {range("step", 1000, 9000, 40, 9e9, 90),
                                                     range("step/forward", 100, 1000, 25, 1e10, 80),
                                                     range("step/backward", 500, 2000, 10, 4e9, 70),
                                                     range("step/forward", 300, 5000, 50, 5000 / 300e-9, 20)};
  const std::vector<gpuprof::CounterRange> merged = gpuprof::merge_by_name(ranges);
  REQUIRE(merged.size() == 3);
  CHECK(merged[0].name == "step");
  CHECK(merged[1].name == "step/forward");
  CHECK(merged[2].name == "step/backward");
  // A range seen once is unchanged.
  CHECK(value(merged[0], gpuprof::metric::dram_bytes_read) == 9000);
  CHECK(value(merged[2], gpuprof::metric::l2_hit_rate_pct) == 70);
  const gpuprof::CounterRange& forward = merged[1];
  CHECK(value(forward, gpuprof::metric::duration_ns) == 400);
  CHECK(value(forward, gpuprof::metric::dram_bytes_read) == 6000);
  // % of peak over elapsed time: (25·100 + 50·300) / 400, the whole's throughput.
  CHECK(value(forward, gpuprof::metric::memory_throughput_pct) == doctest::Approx(43.75));
  // A rate: 6000 bytes in 400 ns.
  CHECK(value(forward, "dram__bytes_read.sum.per_second") == doctest::Approx(6000 / 400e-9));
  CHECK(value(forward, gpuprof::metric::l2_hit_rate_pct) == doctest::Approx((80 * 100 + 20 * 300) / 400.0));
  CHECK(value(forward, "sm__warps_active.max") == 80);
}

TEST_CASE(
    "merge_by_name: without durations the mean is plain; a metric one range lacks merges over the others") {
  const std::vector<gpuprof::CounterRange> ranges = {
      {"fwd", {{gpuprof::metric::l2_hit_rate_pct, 80}, {gpuprof::metric::fp32_ffma, 10}}},
      {"fwd", {{gpuprof::metric::l2_hit_rate_pct, 40}}},
      {"fwd",
       {{gpuprof::metric::l2_hit_rate_pct, 30}, {gpuprof::metric::fp32_ffma, 5}, {"lts__t_sectors.min", 7}}}};
  const std::vector<gpuprof::CounterRange> merged = gpuprof::merge_by_name(ranges);
  REQUIRE(merged.size() == 1);
  CHECK(value(merged[0], gpuprof::metric::l2_hit_rate_pct) == doctest::Approx(50));
  CHECK(value(merged[0], gpuprof::metric::fp32_ffma) == 15);
  CHECK(value(merged[0], "lts__t_sectors.min") == 7);
  CHECK(gpuprof::merge_by_name({}).empty());
}

TEST_CASE("metric_merge reads the rollup of an ncu metric name") {
  CHECK(gpuprof::metric_merge("gpu__time_duration.sum") == gpuprof::MetricMerge::sum);
  CHECK(gpuprof::metric_merge("dram__bytes_read.sum.per_second") == gpuprof::MetricMerge::duration_weighted);
  CHECK(gpuprof::metric_merge("sm__throughput.avg.pct_of_peak_sustained_elapsed") ==
        gpuprof::MetricMerge::duration_weighted);
  CHECK(gpuprof::metric_merge("lts__t_sector_hit_rate.pct") == gpuprof::MetricMerge::duration_weighted);
  CHECK(gpuprof::metric_merge("sm__cycles_active.max") == gpuprof::MetricMerge::max);
  CHECK(gpuprof::metric_merge("sm__cycles_active.min") == gpuprof::MetricMerge::min);
  CHECK(gpuprof::metric_merge("no_rollup") == gpuprof::MetricMerge::duration_weighted);
}
