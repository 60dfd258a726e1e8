// gpuprof/detail/time_spans.hpp: a set of half-open time spans [begin, end),
// merged so that report() can ask "inside any span?" with one binary search
// per scope instance. Spans may come in any order and overlap (bench() on two
// threads at once).
#pragma once
#include <algorithm>
#include <cstdint>
#include <iterator>
#include <utility>
#include <vector>

#include "../config.hpp"

GPUPROF_NAMESPACE_BEGIN
namespace detail {

class TimeSpans {
 public:
  explicit TimeSpans(std::vector<std::pair<std::int64_t, std::int64_t>> spans) {
    std::sort(spans.begin(), spans.end());
    for (const auto& span : spans) {
      if (span.second <= span.first) continue;
      if (!merged_.empty() && span.first <= merged_.back().second)
        merged_.back().second = std::max(merged_.back().second, span.second);
      else
        merged_.push_back(span);
    }
  }
  bool contains(std::int64_t time) const {
    // The last span that begins at or before `time`.
    const auto after = std::upper_bound(merged_.begin(), merged_.end(), time,
                                        [](std::int64_t t, const auto& span) { return t < span.first; });
    return after != merged_.begin() && time < std::prev(after)->second;
  }
  bool empty() const { return merged_.empty(); }

 private:
  std::vector<std::pair<std::int64_t, std::int64_t>> merged_;
};

}  // namespace detail
GPUPROF_NAMESPACE_END
