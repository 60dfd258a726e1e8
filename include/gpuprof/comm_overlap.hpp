// gpuprof/comm_overlap.hpp: communication against computation on the GPU,
// from captured kernels (Report::kernels), as Holistic Trace Analysis's
// comm/comp overlap measures it for PyTorch traces.
//
// ```cpp
// #include <gpuprof/comm_overlap.hpp>
// #include <iostream>
// void print_overlap(const gpuprof::Report& report) {
//   for (const gpuprof::CommComputeTime& step : gpuprof::comm_compute_by_step(report, "step"))
//     std::cout << step.communication_ms << " ms communication, " << step.overlap_ms << " ms of it hidden, "
//               << step.exposed_communication_ms() << " ms exposed\n";
// }
// ```
//
// Communication is the union of the intervals of NCCL's kernels, computation
// that of every other kernel but copies and memsets; the overlap is their
// intersection, exposed communication what no computation hides. A scope's
// figures include the scopes inside it; a step is one instance of the step
// scope. Definitions: docs/ranks.md#communication-vs-computation-comm_overlaphpp.
#pragma once
#include <algorithm>
#include <cstdint>
#include <iterator>
#include <map>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "config.hpp"
#include "detail/time_spans.hpp"
#include "kernel_record.hpp"
#include "report_model.hpp"

GPUPROF_NAMESPACE_BEGIN

// The intersection of two unions (sorted and disjoint, as interval_union returns).
inline std::vector<TimeInterval> interval_intersection(const std::vector<TimeInterval>& a,
                                                       const std::vector<TimeInterval>& b) {
  std::vector<TimeInterval> common;
  std::size_t i = 0, j = 0;
  while (i < a.size() && j < b.size()) {
    const std::int64_t begin = std::max(a[i].begin_ns, b[j].begin_ns);
    const std::int64_t end = std::min(a[i].end_ns, b[j].end_ns);
    if (begin < end) common.push_back({begin, end});
    (a[i].end_ns < b[j].end_ns ? i : j) += 1;
  }
  return common;
}

// Time covered by disjoint intervals.
inline std::int64_t covered_ns(const std::vector<TimeInterval>& disjoint) {
  std::int64_t total = 0;
  for (const TimeInterval& interval : disjoint) total += interval.end_ns - interval.begin_ns;
  return total;
}

struct CommComputeTime {
  double communication_ms = 0;  // union of communication kernels
  double computation_ms = 0;    // union of the other kernels (not copies, memsets, "memory")
  double overlap_ms = 0;        // both at once
  double exposed_communication_ms() const { return communication_ms - overlap_ms; }
  // Share of the communication that computation hides; 0 without communication.
  double overlap_fraction() const { return communication_ms > 0 ? overlap_ms / communication_ms : 0; }
};

inline bool is_communication(const KernelRecord& kernel) { return kernel.category == "communication"; }
inline bool is_computation(const KernelRecord& kernel) {
  return kernel.kind == ActivityKind::kernel && kernel.category != "communication" &&
         kernel.category != "memory";
}

// Communication and computation kernels' intervals, kept apart.
struct KernelIntervals {
  std::vector<TimeInterval> communication;
  std::vector<TimeInterval> computation;

  void add(const KernelRecord& kernel) {
    if (is_communication(kernel)) communication.push_back({kernel.start_ns, kernel.end_ns});
    else if (is_computation(kernel)) computation.push_back({kernel.start_ns, kernel.end_ns});
  }
  CommComputeTime time() const {
    const std::vector<TimeInterval> comm = interval_union(communication);
    const std::vector<TimeInterval> comp = interval_union(computation);
    return {static_cast<double>(covered_ns(comm)) / 1e6, static_cast<double>(covered_ns(comp)) / 1e6,
            static_cast<double>(covered_ns(interval_intersection(comm, comp))) / 1e6};
  }
};

inline CommComputeTime comm_compute_time(const std::vector<KernelRecord>& kernels) {
  KernelIntervals intervals;
  for (const KernelRecord& kernel : kernels) intervals.add(kernel);
  return intervals.time();
}

namespace detail {
inline std::unordered_map<std::uint64_t, const ScopeInstance*> instances_by_id(const Report& report) {
  std::unordered_map<std::uint64_t, const ScopeInstance*> by_id;
  for (const ScopeInstance& instance : report.instances) by_id[instance.id] = &instance;
  return by_id;
}

inline bool valid_node(const Report& report, int node) {
  return node >= 0 && static_cast<std::size_t>(node) < report.nodes.size();
}
}  // namespace detail

namespace detail {
// A growing union of intervals and the time it covers, kept disjoint in a
// map from begin to end: an insertion joins the intervals it overlaps, so
// each interval is joined away at most once.
class IntervalUnion {
 public:
  void insert(std::int64_t begin, std::int64_t end) {
    if (end <= begin) return;
    auto at = spans_.upper_bound(begin);
    if (at != spans_.begin() && std::prev(at)->second >= begin) --at;
    while (at != spans_.end() && at->first <= end) {
      begin = std::min(begin, at->first);
      end = std::max(end, at->second);
      covered_ns_ -= at->second - at->first;
      at = spans_.erase(at);
    }
    spans_.emplace(begin, end);
    covered_ns_ += end - begin;
  }
  void insert_all(const IntervalUnion& other) {
    for (const auto& [begin, end] : other.spans_) insert(begin, end);
  }
  std::size_t size() const { return spans_.size(); }
  std::int64_t covered_ns() const { return covered_ns_; }

 private:
  std::map<std::int64_t, std::int64_t> spans_;
  std::int64_t covered_ns_ = 0;
};

// Communication, computation and both together; the overlap is what the
// two cover minus what their union covers (the same as the intersection).
struct InclusiveIntervals {
  IntervalUnion communication, computation, either;

  void add(const KernelRecord& kernel) {
    IntervalUnion* own = is_communication(kernel) ? &communication
                         : is_computation(kernel) ? &computation
                                                  : nullptr;
    if (own == nullptr) return;
    own->insert(kernel.start_ns, kernel.end_ns);
    either.insert(kernel.start_ns, kernel.end_ns);
  }
  std::size_t size() const { return communication.size() + computation.size() + either.size(); }
  void absorb(InclusiveIntervals& other) {
    if (other.size() > size()) std::swap(*this, other);  // the smaller goes into the larger
    communication.insert_all(other.communication);
    computation.insert_all(other.computation);
    either.insert_all(other.either);
    other = {};
  }
  CommComputeTime time() const {
    const std::int64_t overlap = communication.covered_ns() + computation.covered_ns() - either.covered_ns();
    return {static_cast<double>(communication.covered_ns()) / 1e6,
            static_cast<double>(computation.covered_ns()) / 1e6, static_cast<double>(overlap) / 1e6};
  }
};
}  // namespace detail

// Per node of report.nodes (same indices), inclusive of the scopes inside it.
// Children come after their parents (read_json.hpp checks it), so each
// node's intervals are complete when the loop reaches it from the end and
// then pass to its parent, the smaller set into the larger: O(k log^2 k) for
// k kernels however deep the tree, where adding each kernel to every
// ancestor cost k times the depth.
inline std::vector<CommComputeTime> comm_compute_by_scope(const Report& report) {
  const auto by_id = detail::instances_by_id(report);
  std::vector<detail::InclusiveIntervals> per_node(report.nodes.size());
  for (const KernelRecord& kernel : report.kernels) {
    int node = kernel.scope_node;
    if (!detail::valid_node(report, node)) {
      const auto found = by_id.find(kernel.scope_instance);
      node = kernel.scope_instance != 0 && found != by_id.end() ? found->second->node : -1;
    }
    if (detail::valid_node(report, node)) per_node[static_cast<std::size_t>(node)].add(kernel);
  }
  std::vector<CommComputeTime> times(report.nodes.size());
  for (std::size_t n = report.nodes.size(); n-- > 0;) {
    times[n] = per_node[n].time();
    const int parent = report.nodes[n].parent;
    if (detail::valid_node(report, parent) && static_cast<std::size_t>(parent) < n)
      per_node[static_cast<std::size_t>(parent)].absorb(per_node[n]);
  }
  return times;
}

// The scope whose instances are the steps when none is named: the top-level
// scope with the most instances (the first of those in node order); "" when
// the report has no scopes.
inline std::string default_step_scope(const Report& report) {
  const ScopeNode* best = nullptr;
  for (const ScopeNode& node : report.nodes)
    if (node.depth == 0 && (best == nullptr || node.count > best->count)) best = &node;
  return best ? best->path : "";
}

// The instances of the scope with this path, in begin order: step 0, 1, ...
inline std::vector<const ScopeInstance*> step_instances(const Report& report, const std::string& step_path) {
  std::vector<const ScopeInstance*> steps;
  for (const ScopeInstance& instance : report.instances)
    if (detail::valid_node(report, instance.node) &&
        report.nodes[static_cast<std::size_t>(instance.node)].path == step_path)
      steps.push_back(&instance);
  std::stable_sort(steps.begin(), steps.end(), [](const ScopeInstance* a, const ScopeInstance* b) {
    return a->host_begin_ns < b->host_begin_ns;
  });
  return steps;
}

// A step's duration: its GPU time when it has one, else its host time
// (begin <= end within 0 .. 2^62, as read_json.hpp checks: no overflow).
inline double step_ms(const ScopeInstance& step) {
  return step.gpu_ms >= 0 ? step.gpu_ms : static_cast<double>(step.host_end_ns - step.host_begin_ns) / 1e6;
}

namespace detail {
// Steps in begin order and, for each prefix, the latest end: the first step
// that begins at or before t and ends at or after u is then one binary search
// away (the running maximum first reaches u at that step), where scanning
// every step for every kernel cost steps x kernels.
class StepFinder {
 public:
  void add(std::size_t step, const ScopeInstance& instance) {
    steps_.push_back(step);
    begins_.push_back(instance.host_begin_ns);
    latest_end_.push_back(latest_end_.empty() ? instance.host_end_ns
                                              : std::max(latest_end_.back(), instance.host_end_ns));
  }
  // The first step (in begin order) with begin <= begin_at_most and end >= end_at_least.
  std::optional<std::size_t> first_covering(std::int64_t begin_at_most, std::int64_t end_at_least) const {
    const std::size_t began = static_cast<std::size_t>(
        std::upper_bound(begins_.begin(), begins_.end(), begin_at_most) - begins_.begin());
    const std::size_t first = static_cast<std::size_t>(
        std::lower_bound(latest_end_.begin(), latest_end_.end(), end_at_least) - latest_end_.begin());
    if (first < began) return steps_[first];
    return std::nullopt;
  }

 private:
  std::vector<std::size_t> steps_;
  std::vector<std::int64_t> begins_, latest_end_;
};
}  // namespace detail

// Per instance of the step scope (step_instances' order). A kernel belongs to
// the step open when it was launched: around its launching scope instance (on
// that instance's thread), or, for work without one, around its launch time.
// Where steps overlap (several threads), the last to begin before the kernel
// is taken when it fits, else the first in begin order that does.
inline std::vector<CommComputeTime> comm_compute_by_step(const Report& report, const std::string& step_path) {
  const std::vector<const ScopeInstance*> steps = step_instances(report, step_path);
  const auto by_id = detail::instances_by_id(report);
  detail::StepFinder all_threads;
  std::unordered_map<std::uint32_t, detail::StepFinder> by_thread;
  for (std::size_t s = 0; s < steps.size(); ++s) {
    all_threads.add(s, *steps[s]);
    by_thread[steps[s]->thread].add(s, *steps[s]);
  }
  std::vector<KernelIntervals> per_step(steps.size());
  for (const KernelRecord& kernel : report.kernels) {
    const auto found = by_id.find(kernel.scope_instance);
    const ScopeInstance* launcher =
        kernel.scope_instance != 0 && found != by_id.end() ? found->second : nullptr;
    if (launcher == nullptr && kernel.launch_ns == 0) continue;
    const std::int64_t anchor_ns = launcher ? launcher->host_begin_ns : kernel.launch_ns;
    const std::int64_t until_ns = launcher ? launcher->host_end_ns : kernel.launch_ns;
    const auto inside = [&](const ScopeInstance& step) {
      return (launcher == nullptr || launcher->thread == step.thread) && step.host_begin_ns <= anchor_ns &&
             until_ns <= step.host_end_ns;
    };
    const auto after =
        std::upper_bound(steps.begin(), steps.end(), anchor_ns,
                         [](std::int64_t t, const ScopeInstance* step) { return t < step->host_begin_ns; });
    std::optional<std::size_t> step;
    if (after != steps.begin() && inside(**(after - 1))) {
      step = static_cast<std::size_t>(after - 1 - steps.begin());
    } else if (launcher == nullptr) {
      step = all_threads.first_covering(anchor_ns, until_ns);
    } else if (const auto thread = by_thread.find(launcher->thread); thread != by_thread.end()) {
      step = thread->second.first_covering(anchor_ns, until_ns);
    }
    if (step) per_step[*step].add(kernel);
  }
  std::vector<CommComputeTime> times;
  for (const KernelIntervals& intervals : per_step) times.push_back(intervals.time());
  return times;
}

GPUPROF_NAMESPACE_END
