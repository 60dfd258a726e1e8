// gpuprof/detail/root_warmup.hpp: Profiler::set_warmup(n) and GPUPROF_WARMUP,
// the first n instances of each root scope (a training loop's first steps)
// left out of the statistics with everything inside them, the way bench()
// leaves out its warm-up.
//
// Scopes pay nothing for it: report() sorts out the finished instances. A root
// instance is warm-up the first time a report sees it finished while fewer
// than n of its node have been taken; the instances inside it go with it, and
// later reports leave out the same ones. The first left-out instance of each
// node keeps its time (ScopeNode::cold_ms). The rules, reset() and a count
// changed midway: docs/profiling.md#warm-up-outside-bench.
#pragma once
#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <mutex>
#include <string>
#include <tuple>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "../config.hpp"
#include "../diagnostics.hpp"
#include "../error.hpp"
#include "build_report.hpp"
#include "recorder.hpp"

GPUPROF_NAMESPACE_BEGIN
namespace detail {

// GPUPROF_WARMUP's value: -1 when unset or empty; gpuprof::Error for anything
// but a whole number from 0 to 1,000,000.
inline long warmup_from_environment() {
  const char* text = std::getenv("GPUPROF_WARMUP");
  if (!text || !*text) return -1;
  char* end = nullptr;
  errno = 0;
  const long value = std::strtol(text, &end, 10);
  if (*text < '0' || *text > '9' || errno != 0 || *end != '\0' || value > 1'000'000)
    throw Error(std::string("GPUPROF_WARMUP='") + text +
                "' is not a whole number of root-scope instances from 0 to 1000000");
  return value;
}

class RootWarmup {
 public:
  // Reads GPUPROF_WARMUP. A bad value is said on stderr at once and ignored:
  // failing later, in report(), would lose the run's report.
  RootWarmup() {
    try {
      environment_ = warmup_from_environment();
    } catch (const Error& error) {
      diagnose(Severity::note, std::string(error.what()) + "; ignored (no warm-up is left out)");
    }
  }
  RootWarmup(const RootWarmup&) = delete;
  RootWarmup& operator=(const RootWarmup&) = delete;

  // The count in force: set() if it was called, else GPUPROF_WARMUP, else 0.
  long count() const {
    const std::lock_guard<std::mutex> lock(mutex_);
    return count_locked();
  }
  void set(long n) {
    if (n < 0) throw Error("gpuprof: set_warmup(" + std::to_string(n) + "): the count must be >= 0");
    const std::lock_guard<std::mutex> lock(mutex_);
    // Another count starts over: the records still held are sorted out anew.
    if (n != count_locked()) forget_all_locked();
    set_ = n;
  }
  // reset(): the records are gone; what was taken per root stays taken.
  void forget_instances() {
    const std::lock_guard<std::mutex> lock(mutex_);
    left_out_ids_.clear();
    cold_ms_.clear();
  }

  // Removes the warm-up instances from `instances` and returns how many it
  // removed; `cold_ms` (by global node, -1: none) gets the first left-out
  // instance's primary time of each node.
  std::uint64_t leave_out(std::vector<InstanceSnapshot>& instances, const std::vector<GlobalNode>& nodes,
                          std::vector<double>& cold_ms) {
    const std::lock_guard<std::mutex> lock(mutex_);
    const long n = count_locked();
    if (n == 0 && left_out_ids_.empty()) return 0;
    std::sort(instances.begin(), instances.end(), [](const InstanceSnapshot& a, const InstanceSnapshot& b) {
      return std::tie(a.host_begin_ns, a.id) < std::tie(b.host_begin_ns, b.id);
    });
    // Newly finished roots, in the order they began, while their node has
    // room. A root passed over once is passed over for good: its node was full.
    struct Span {
      std::uint32_t thread;
      std::int64_t begin_ns, end_ns;
    };
    std::vector<Span> new_roots;
    for (const InstanceSnapshot& instance : instances) {
      const bool root = instance.node < nodes.size() && nodes[instance.node].parent == root_node;
      if (!root || left_out_ids_.count(instance.id)) continue;
      std::uint64_t& taken = taken_[instance.node];
      if (taken >= static_cast<std::uint64_t>(n)) continue;
      ++taken;
      new_roots.push_back({instance.thread, instance.host_begin_ns, instance.host_end_ns});
    }
    for (const InstanceSnapshot& instance : instances)
      for (const Span& span : new_roots)
        if (instance.thread == span.thread && instance.host_begin_ns >= span.begin_ns &&
            instance.host_begin_ns <= span.end_ns)
          left_out_ids_.insert(instance.id);

    cold_ms.assign(nodes.size(), -1);
    std::vector<InstanceSnapshot> kept;
    kept.reserve(instances.size());
    std::uint64_t removed = 0;
    for (const InstanceSnapshot& instance : instances) {
      if (!left_out_ids_.count(instance.id)) {
        kept.push_back(instance);
        continue;
      }
      ++removed;
      const double ms =
          instance.gpu_ms >= 0 ? instance.gpu_ms : ns_to_ms(instance.host_end_ns - instance.host_begin_ns);
      cold_ms_.emplace(instance.node, ms);  // the first one a report saw stays
    }
    for (const auto& [node, ms] : cold_ms_)
      if (node < cold_ms.size()) cold_ms[node] = ms;
    instances = std::move(kept);
    return removed;
  }

 private:
  long count_locked() const { return set_ >= 0 ? set_ : environment_ >= 0 ? environment_ : 0; }
  void forget_all_locked() {
    taken_.clear();
    left_out_ids_.clear();
    cold_ms_.clear();
  }

  mutable std::mutex mutex_;
  long set_ = -1;          // set_warmup's count; -1: not called
  long environment_ = -1;  // GPUPROF_WARMUP's; -1: unset (or refused)

  std::unordered_map<std::uint32_t, std::uint64_t> taken_;  // root node -> instances taken as warm-up
  std::unordered_set<std::uint64_t> left_out_ids_;          // warm-up instances whose records may remain
  std::unordered_map<std::uint32_t, double> cold_ms_;       // node -> its first left-out instance's time
};

}  // namespace detail
GPUPROF_NAMESPACE_END
