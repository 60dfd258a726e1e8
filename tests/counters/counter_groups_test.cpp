// A scope measurement's metric groups (detail/counter_groups.hpp): which
// metrics go with the duration, and the join of the groups' ranges.
#include <doctest/doctest.h>

#include <gpuprof/counter_data.hpp>
#include <gpuprof/detail/counter_groups.hpp>
#include <gpuprof/error.hpp>

#include <string>
#include <utility>
#include <vector>

namespace {

namespace metric = gpuprof::metric;
using Groups = std::vector<std::vector<std::string>>;

gpuprof::CounterRange range(const std::string& name, std::vector<gpuprof::MetricValue> values) {
  return {name, std::move(values)};
}

using Values = std::vector<std::pair<std::string, double>>;
Values values_of(const gpuprof::CounterRange& r) {
  Values out;
  for (const gpuprof::MetricValue& v : r.values) out.emplace_back(v.metric, v.value);
  return out;
}

}  // namespace

TEST_CASE("the duration goes apart, with the DRAM byte counts, only where scope ranges would stretch") {
  const std::vector<std::string> mixed = {metric::l2_hit_rate_pct, metric::duration_ns,
                                          metric::achieved_occupancy_pct};
  CHECK(gpuprof::detail::counter_metric_groups(mixed, true) ==
        Groups{{metric::duration_ns, metric::dram_bytes_read, metric::dram_bytes_written},
               {metric::l2_hit_rate_pct, metric::achieved_occupancy_pct}});
  CHECK(gpuprof::detail::counter_metric_groups(mixed, false) == Groups{mixed});  // kernel ranges
  const std::vector<std::string> untimed = {metric::dram_bytes_read, metric::achieved_occupancy_pct};
  CHECK(gpuprof::detail::counter_metric_groups(untimed, true) == Groups{untimed});
  const std::vector<std::string> plain = {metric::dram_bytes_written, metric::duration_ns};
  CHECK(gpuprof::detail::counter_metric_groups(plain, true) == Groups{plain});
}

TEST_CASE("the groups' ranges join by path, in the first group's order, with the metrics asked for") {
  const std::vector<std::vector<gpuprof::CounterRange>> groups = {
      {range("step", {{metric::duration_ns, 10}, {metric::dram_bytes_read, 1}}),
       range("step/fma", {{metric::duration_ns, 2}, {metric::dram_bytes_read, 0}}),
       range("step/copy", {{metric::duration_ns, 3}, {metric::dram_bytes_read, 4}})},
      {range("step/fma", {{metric::l2_hit_rate_pct, 50}}), range("step", {{metric::l2_hit_rate_pct, 70}}),
       range("step/copy", {{metric::l2_hit_rate_pct, 60}})}};
  const std::vector<gpuprof::CounterRange> joined =
      gpuprof::detail::join_metric_groups(groups, {metric::l2_hit_rate_pct, metric::duration_ns});
  REQUIRE(joined.size() == 3);
  CHECK(joined[0].name == "step");
  CHECK(values_of(joined[0]) == Values{{metric::l2_hit_rate_pct, 70}, {metric::duration_ns, 10}});
  CHECK(joined[1].name == "step/fma");
  CHECK(values_of(joined[1]) == Values{{metric::l2_hit_rate_pct, 50}, {metric::duration_ns, 2}});
  CHECK(joined[2].name == "step/copy");
  CHECK(values_of(joined[2]) == Values{{metric::l2_hit_rate_pct, 60}, {metric::duration_ns, 3}});
}

TEST_CASE("groups that saw other scopes are an error, not a guess") {
  const std::vector<std::vector<gpuprof::CounterRange>> groups = {
      {range("step", {{metric::duration_ns, 10}}), range("step/fma", {{metric::duration_ns, 2}})},
      {range("step", {{metric::l2_hit_rate_pct, 70}}), range("step/copy", {{metric::l2_hit_rate_pct, 50}})}};
  CHECK_THROWS_WITH_AS(gpuprof::detail::join_metric_groups(groups, {metric::duration_ns}),
                       doctest::Contains("other scopes"), gpuprof::Error);
  const std::vector<std::vector<gpuprof::CounterRange>> fewer = {
      {range("step", {{metric::duration_ns, 10}}), range("step/fma", {{metric::duration_ns, 2}})},
      {range("step", {{metric::l2_hit_rate_pct, 70}})}};
  CHECK_THROWS_AS(gpuprof::detail::join_metric_groups(fewer, {metric::duration_ns}), gpuprof::Error);
}
