// gpuprof/detail/time_spans.hpp: unions of time intervals. interval_union()
// merges [begin, end) intervals into sorted, disjoint ones (comm_overlap.hpp
// measures kernel time with it); TimeSpans asks "inside any of them?" with
// one binary search, as report() does for every scope instance against
// bench()'s warm-up spans, which may come in any order and overlap (bench()
// on two threads at once).
#pragma once
#include <algorithm>
#include <cstdint>
#include <iterator>
#include <utility>
#include <vector>

#include "../config.hpp"

GPUPROF_NAMESPACE_BEGIN

// [begin_ns, end_ns) on gpuprof's host clock.
struct TimeInterval {
  std::int64_t begin_ns = 0;
  std::int64_t end_ns = 0;
};

// The union as sorted, disjoint, non-empty intervals (touching ones joined).
inline std::vector<TimeInterval> interval_union(std::vector<TimeInterval> intervals) {
  std::sort(intervals.begin(), intervals.end(),
            [](const TimeInterval& a, const TimeInterval& b) { return a.begin_ns < b.begin_ns; });
  std::vector<TimeInterval> merged;
  for (const TimeInterval& interval : intervals) {
    if (interval.end_ns <= interval.begin_ns) continue;
    if (!merged.empty() && interval.begin_ns <= merged.back().end_ns)
      merged.back().end_ns = std::max(merged.back().end_ns, interval.end_ns);
    else merged.push_back(interval);
  }
  return merged;
}

namespace detail {

class TimeSpans {
 public:
  explicit TimeSpans(std::vector<TimeInterval> spans) : merged_(interval_union(std::move(spans))) {}
  bool contains(std::int64_t time) const {
    // The last span that begins at or before `time`.
    const auto after =
        std::upper_bound(merged_.begin(), merged_.end(), time,
                         [](std::int64_t t, const TimeInterval& span) { return t < span.begin_ns; });
    return after != merged_.begin() && time < std::prev(after)->end_ns;
  }

 private:
  std::vector<TimeInterval> merged_;
};

}  // namespace detail
GPUPROF_NAMESPACE_END
