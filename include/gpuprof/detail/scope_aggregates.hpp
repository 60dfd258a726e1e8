// gpuprof/detail/scope_aggregates.hpp: what report() keeps of the scope
// instances it has read, so that the next report reads only newer ones.
//
// Per global node, an OnlineSamples per clock (exact count, mean, variance,
// min, max; a quantile sketch; a bounded reservoir: online_summary.hpp), the
// declared work and the first begin time (siblings are ordered by it). Of
// the instances themselves only the most recent `window` are kept, for the
// timeline and the traces (0: all of them, the full trace). Memory is
// bounded by the tree's size and the window, not by the run's length.
#pragma once
#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <cstdint>
#include <deque>
#include <limits>
#include <string>
#include <vector>

#include "../clock.hpp"
#include "../config.hpp"
#include "../diagnostics.hpp"
#include "../online_summary.hpp"
#include "../work.hpp"

GPUPROF_NAMESPACE_BEGIN
namespace detail {

struct InstanceSnapshot {
  std::uint64_t id = 0;
  std::uint32_t node = 0;  // global node id
  std::uint32_t thread = 0;
  std::int64_t host_begin_ns = 0;
  std::int64_t host_end_ns = 0;
  double gpu_ms = -1;
  Work work;
};

// Instances kept for traces by default: 20,000 (1.3 MB here, about 2.2 MB
// of JSON) is 540 steps of a 37-scope training step, more than a trace
// viewer is useful on, and the newest steps are where a long run's trouble
// shows. It keeps the default JSON of such a run near 10 MB beside the
// nodes' reservoirs (docs/results.md).
inline constexpr std::size_t default_trace_window = 20'000;

// The window at start: GPUPROF_FULL_TRACE=1 keeps every instance (0),
// GPUPROF_TRACE_WINDOW=n the newest n; anything else is said on stderr and
// the default kept (failing later, in report(), would lose the run's report).
inline std::size_t trace_window_from_environment() {
  const char* full = std::getenv("GPUPROF_FULL_TRACE");
  if (full && std::strcmp(full, "1") == 0) return 0;
  if (full && *full && std::strcmp(full, "0") != 0)
    diagnose(Severity::note, "GPUPROF_FULL_TRACE='" + std::string(full) + "' is neither 0 nor 1; ignored");
  const char* text = std::getenv("GPUPROF_TRACE_WINDOW");
  if (!text || !*text) return default_trace_window;
  char* end = nullptr;
  const unsigned long long value = std::strtoull(text, &end, 10);
  if (*text < '0' || *text > '9' || *end != '\0' || value == 0 || value > 1'000'000'000ull) {
    diagnose(Severity::note,
             "GPUPROF_TRACE_WINDOW='" + std::string(text) +
                 "' is not a whole number of instances from 1 to 1000000000; ignored (keeping "
                 "the newest " +
                 std::to_string(default_trace_window) + ")");
    return default_trace_window;
  }
  return static_cast<std::size_t>(value);
}

struct NodeAggregate {
  explicit NodeAggregate(std::uint64_t seed = 1)
      : host_ms(default_reservoir_capacity, QuantileSketch::default_relative_error, seed),
        gpu_ms(default_reservoir_capacity, QuantileSketch::default_relative_error, seed + 1) {}
  std::uint64_t count = 0;
  OnlineSamples host_ms;
  OnlineSamples gpu_ms;
  Work work_sum;
  std::int64_t first_begin_ns = std::numeric_limits<std::int64_t>::max();
};

class ScopeAggregates {
 public:
  explicit ScopeAggregates(std::size_t window = default_trace_window) : window_(window) {}

  void add(const InstanceSnapshot& instance) {
    while (nodes_.size() <= instance.node)  // seeded by node: a rerun samples the same instances
      nodes_.emplace_back(0x5EED0000ull + 2 * nodes_.size());
    NodeAggregate& node = nodes_[instance.node];
    ++node.count;
    node.host_ms.add(ns_to_ms(instance.host_end_ns - instance.host_begin_ns));
    if (instance.gpu_ms >= 0) node.gpu_ms.add(instance.gpu_ms);
    else ++host_only_;
    node.work_sum.flops += instance.work.flops;
    node.work_sum.bytes += instance.work.bytes;
    node.work_sum.tokens += instance.work.tokens;
    if (instance.host_begin_ns < node.first_begin_ns) node.first_begin_ns = instance.host_begin_ns;
    ++instances_;
    recent_.push_back(instance);
    if (window_ > 0 && recent_.size() > window_) recent_.pop_front();
  }
  void clear() {
    nodes_.clear();
    recent_.clear();
    instances_ = host_only_ = 0;
  }
  // 0: keep every instance. A smaller window drops the oldest at once.
  void set_window(std::size_t window) {
    window_ = window;
    while (window_ > 0 && recent_.size() > window_) recent_.pop_front();
  }
  std::size_t window() const noexcept { return window_; }

  const std::vector<NodeAggregate>& nodes() const noexcept { return nodes_; }
  std::vector<NodeAggregate>& nodes() noexcept { return nodes_; }
  // The newest instances, in the order they were added (by thread, then end).
  const std::deque<InstanceSnapshot>& recent() const noexcept { return recent_; }
  std::uint64_t instances() const noexcept { return instances_; }
  std::uint64_t host_only() const noexcept { return host_only_; }

 private:
  std::size_t window_;
  std::vector<NodeAggregate> nodes_;  // by global node
  std::deque<InstanceSnapshot> recent_;
  std::uint64_t instances_ = 0, host_only_ = 0;
};

}  // namespace detail
GPUPROF_NAMESPACE_END
