// gpuprof/detail/counter_groups.hpp: a scope measurement's metric groups,
// measured one after the other, and the join of their ranges. Beside the
// per-SM metrics (occupancy, throughputs) a range read 10-90 us more than
// its kernels on an H200; beside the DRAM byte counts alone it read what
// CUDA events do. So the duration goes with those two only (kept even when
// not asked for: the duration alone over several nesting levels is
// mis-measured by CUPTI), and the rest in a group of its own
// (docs/counters.md#the-duration-apart).
#pragma once
#include <algorithm>
#include <cstddef>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "../config.hpp"
#include "../counter_data.hpp"
#include "../error.hpp"

GPUPROF_NAMESPACE_BEGIN
namespace detail {

inline bool in_duration_group(const std::string& metric_name) {
  return metric_name == metric::duration_ns || metric_name == metric::dram_bytes_read ||
         metric_name == metric::dram_bytes_written;
}

// One group (the metrics as given) unless scope ranges time themselves
// beside metrics that would lengthen them.
inline std::vector<std::vector<std::string>> counter_metric_groups(const std::vector<std::string>& metrics,
                                                                   bool scope_ranges) {
  const bool timed = std::find(metrics.begin(), metrics.end(), metric::duration_ns) != metrics.end();
  std::vector<std::string> rest;
  for (const std::string& name : metrics)
    if (!in_duration_group(name)) rest.push_back(name);
  if (!scope_ranges || !timed || rest.empty()) return {metrics};
  return {{metric::duration_ns, metric::dram_bytes_read, metric::dram_bytes_written}, rest};
}

// One range per range of the first group, with the metrics asked for, in
// their order, from whichever group measured each. The k-th range of a name
// in one group is the k-th of that name in every other (runs of the same
// work); gpuprof::Error when the groups saw different ranges.
inline std::vector<CounterRange> join_metric_groups(const std::vector<std::vector<CounterRange>>& groups,
                                                    const std::vector<std::string>& metrics) {
  if (groups.size() == 1) return groups.front();
  using RangesByName = std::map<std::string, std::vector<const CounterRange*>>;
  std::vector<RangesByName> by_name(groups.size());
  for (std::size_t group = 0; group < groups.size(); ++group) {
    for (const CounterRange& range : groups[group]) by_name[group][range.name].push_back(&range);
    bool same = by_name[group].size() == by_name.front().size();
    for (const auto& [name, ranges] : by_name.front())
      same = same && by_name[group].count(name) && by_name[group].at(name).size() == ranges.size();
    if (!same)
      throw Error("the work opened other scopes in another run: counters need the same scopes every run");
  }
  std::map<std::string, std::size_t> seen;
  std::vector<CounterRange> joined;
  for (const CounterRange& first : groups.front()) {
    const std::size_t occurrence = seen[first.name]++;
    CounterRange range;
    range.name = first.name;
    for (const std::string& name : metrics)
      for (const RangesByName& group : by_name)
        if (const double* value = group.at(first.name)[occurrence]->find(name)) {
          range.values.push_back({name, *value});
          break;
        }
    joined.push_back(std::move(range));
  }
  return joined;
}

}  // namespace detail
GPUPROF_NAMESPACE_END
