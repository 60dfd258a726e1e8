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
// their order, from whichever group measured each. CUPTI gives one range per
// scope path (the openings summed), so a path names one range in every group
// that ran the same work; gpuprof::Error when the groups saw different paths.
inline std::vector<CounterRange> join_metric_groups(const std::vector<std::vector<CounterRange>>& groups,
                                                    const std::vector<std::string>& metrics) {
  if (groups.size() == 1) return groups.front();
  std::vector<std::map<std::string, const CounterRange*>> by_name(groups.size());
  for (std::size_t group = 0; group < groups.size(); ++group) {
    for (const CounterRange& range : groups[group]) by_name[group][range.name] = &range;
    bool same = by_name[group].size() == by_name.front().size();
    for (const auto& [name, range] : by_name.front()) same = same && by_name[group].count(name);
    if (!same)
      throw Error("the work opened other scopes in another run: counters need the same scopes every run");
  }
  std::vector<CounterRange> joined;
  for (const CounterRange& first : groups.front()) {
    CounterRange range;
    range.name = first.name;
    for (const std::string& name : metrics)
      for (const auto& group : by_name)
        if (const double* value = group.at(first.name)->find(name)) {
          range.values.push_back({name, *value});
          break;
        }
    joined.push_back(std::move(range));
  }
  return joined;
}

}  // namespace detail
GPUPROF_NAMESPACE_END
