// gpuprof/merge.hpp: the reports of a multi-process (data-parallel) run,
// one per rank, combined: which rank is the straggler, by how much per step,
// and how much of the communication computation hides.
//
// ```cpp
// #include <gpuprof/merge.hpp>
// #include <gpuprof/report/read_json.hpp>
// #include <iostream>
// void straggler() {
//   std::vector<gpuprof::Report> reports = {gpuprof::read_report_json("rank0.json"),
//                                           gpuprof::read_report_json("rank1.json")};
//   gpuprof::MergedReport merged = gpuprof::merge(reports);  // or merge(reports, {"train/step"})
//   for (const gpuprof::MergedStep& step : merged.steps)
//     std::cout << "rank " << step.slowest_rank << " slowest by " << step.skew_ms << " ms\n";
// }
// ```
//
// Ranks come from each report's RankInfo, or the order given when no report
// has one; mismatched inputs (a rank twice, the same run twice, different
// world sizes) throw gpuprof::InputError. A step is the i-th instance of the
// step scope, compared over the steps every rank has; its skew is its slowest
// rank's time minus its fastest's. The rules and the step scope's default:
// docs/ranks.md#merging-mergehpp-reportmergedhpp-gpuprof-merge. Writers:
// report/merged.hpp.
#pragma once
#include <algorithm>
#include <cstddef>
#include <map>
#include <string>
#include <vector>

#include "comm_overlap.hpp"
#include "config.hpp"
#include "online_summary.hpp"
#include "terminal_text.hpp"
#include "error.hpp"
#include "rank.hpp"
#include "report_model.hpp"
#include "stats.hpp"

GPUPROF_NAMESPACE_BEGIN

struct MergeOptions {
  std::string step_scope;  // path of the step scope; "" picks default_step_scope(lowest rank's report)
};

// One merged input: its rank and where it ran.
struct MergedRank {
  RankInfo rank;
  std::string host_name;
  std::string device_name;
  std::size_t source = 0;  // index of its report in merge()'s argument
};

struct MergedScope {
  std::string path;
  int depth = 0;
  // Per rank, in MergedReport::ranks' order: the scope's primary statistics
  // (n == 0 where that rank never ran it) and its communication/computation
  // (inclusive; zeros without kernel capture).
  std::vector<Summary> per_rank;
  std::vector<CommComputeTime> comm_compute;
  // min / median / max (etc.) of the per-rank means, over the ranks that ran it.
  Summary across_ranks;
  // Every rank's instances as one distribution: n, mean, stddev, min, max
  // merged exactly, quantile sketches merged (online_summary.hpp), the
  // reservoirs drawn from in proportion to each rank's count; exactly
  // summarize() of all the samples while they fit one reservoir.
  Summary pooled;
  int slowest_rank = -1;  // rank (not position) with the largest mean
  int fastest_rank = -1;
};

struct MergedStep {
  std::size_t index = 0;            // i: the i-th instance of the step scope
  std::vector<double> per_rank_ms;  // MergedReport::ranks' order
  std::vector<CommComputeTime> comm_compute;
  double skew_ms = 0;  // slowest minus fastest
  int slowest_rank = -1;
  int fastest_rank = -1;
};

struct MergedReport {
  std::vector<MergedRank> ranks;           // ascending rank
  int world_size = -1;                     // -1 when no report says
  std::string step_scope;                  // "" without steps
  std::vector<MergedScope> scopes;         // the lowest rank's node order, then paths only other ranks have
  std::vector<MergedStep> steps;           // the steps every rank has
  std::vector<std::size_t> slowest_count;  // per rank (ranks' order): steps it was slowest in
  Summary skew_ms;                         // of the steps' skews
  bool has_kernels = false;                // some report captured kernels
  std::vector<std::string> notes;          // what the merge could not compare, and why

  // Index into ranks of rank `rank`; throws when it is not merged.
  std::size_t position_of(int rank) const {
    for (std::size_t i = 0; i < ranks.size(); ++i)
      if (ranks[i].rank.rank == rank) return i;
    throw Error("rank " + std::to_string(rank) + " is not in the merged report");
  }
};

namespace detail {
// Two reports of one run: the same scope instances at the same times. Two
// processes never time the same instants, so this is one file given twice
// (or a copy of it), which would merge as two ranks that agree perfectly.
inline bool same_run(const Report& a, const Report& b) {
  return !a.instances.empty() && a.instances.size() == b.instances.size() &&
         std::equal(a.instances.begin(), a.instances.end(), b.instances.begin(),
                    [](const ScopeInstance& x, const ScopeInstance& y) {
                      return x.id == y.id && x.node == y.node && x.thread == y.thread &&
                             x.host_begin_ns == y.host_begin_ns && x.host_end_ns == y.host_end_ns;
                    });
}

// Ranks in ascending order, checked against each other.
inline std::vector<MergedRank> merged_ranks(const std::vector<Report>& reports, int& world_size) {
  std::size_t ranked = 0;
  for (const Report& report : reports) ranked += report.rank.known() ? 1 : 0;
  if (ranked != 0 && ranked != reports.size())
    throw InputError(std::to_string(reports.size() - ranked) + " of " + std::to_string(reports.size()) +
                     " reports have no rank (Profiler::set_rank, or RANK in the environment)");
  // Ranked reports given twice meet "rank N appears twice" below; unranked
  // ones would be numbered by position, so they are compared here.
  for (std::size_t i = 0; ranked == 0 && i < reports.size(); ++i)
    for (std::size_t j = i + 1; j < reports.size(); ++j)
      if (same_run(reports[i], reports[j]))
        throw InputError("reports " + std::to_string(i + 1) + " and " + std::to_string(j + 1) +
                         " are the same run (identical scope instances): one file given twice?");
  std::vector<MergedRank> ranks;
  world_size = -1;
  for (std::size_t i = 0; i < reports.size(); ++i) {
    RankInfo rank = reports[i].rank;
    if (ranked == 0) rank = {static_cast<int>(i), static_cast<int>(reports.size()), -1};
    if (rank.world_size > 0) {
      if (world_size > 0 && rank.world_size != world_size)
        throw InputError("reports of different world sizes: " + std::to_string(world_size) + " and " +
                         std::to_string(rank.world_size));
      world_size = rank.world_size;
    }
    const std::string& device =
        reports[i].device_name.empty() ? reports[i].environment.gpu_name : reports[i].device_name;
    ranks.push_back({rank, reports[i].environment.host_name, device, i});
  }
  std::sort(ranks.begin(), ranks.end(),
            [](const MergedRank& a, const MergedRank& b) { return a.rank.rank < b.rank.rank; });
  for (std::size_t i = 0; i < ranks.size(); ++i) {
    if (i > 0 && ranks[i].rank.rank == ranks[i - 1].rank.rank)
      throw InputError("rank " + std::to_string(ranks[i].rank.rank) + " appears twice (reports " +
                       std::to_string(ranks[i - 1].source + 1) + " and " +
                       std::to_string(ranks[i].source + 1) + ")");
    if (world_size > 0 && ranks[i].rank.rank >= world_size)
      throw InputError("rank " + std::to_string(ranks[i].rank.rank) + " is outside a world of " +
                       std::to_string(world_size));
  }
  return ranks;
}

// The rank (not position) with the largest / smallest value among `present`.
template <class Value>
void extremes(const std::vector<MergedRank>& ranks, const std::vector<Value>& values,
              const std::vector<bool>& present, int& slowest, int& fastest) {
  std::size_t hi = ranks.size(), lo = ranks.size();
  for (std::size_t r = 0; r < ranks.size(); ++r) {
    if (!present[r]) continue;
    if (hi == ranks.size() || values[r] > values[hi]) hi = r;
    if (lo == ranks.size() || values[r] < values[lo]) lo = r;
  }
  slowest = hi < ranks.size() ? ranks[hi].rank.rank : -1;
  fastest = lo < ranks.size() ? ranks[lo].rank.rank : -1;
}
}  // namespace detail

inline MergedReport merge(const std::vector<Report>& reports, const MergeOptions& options = {}) {
  if (reports.empty()) throw Error("nothing to merge: no reports");
  MergedReport merged;
  merged.ranks = detail::merged_ranks(reports, merged.world_size);
  if (merged.world_size > 0 && merged.ranks.size() < static_cast<std::size_t>(merged.world_size))
    merged.notes.push_back("only " + std::to_string(merged.ranks.size()) + " of " +
                           std::to_string(merged.world_size) + " ranks merged");
  const std::size_t rank_count = merged.ranks.size();
  const auto report_at = [&](std::size_t position) -> const Report& {
    return reports[merged.ranks[position].source];
  };
  for (const Report& report : reports) merged.has_kernels = merged.has_kernels || !report.kernels.empty();

  // Scopes, by path.
  std::map<std::string, std::size_t> scope_of_path;
  for (std::size_t r = 0; r < rank_count; ++r) {
    const Report& report = report_at(r);
    const std::vector<CommComputeTime> comm = comm_compute_by_scope(report);
    for (std::size_t n = 0; n < report.nodes.size(); ++n) {
      const ScopeNode& node = report.nodes[n];
      auto [found, added] = scope_of_path.emplace(node.path, merged.scopes.size());
      if (added) {
        MergedScope scope;
        scope.path = node.path;
        scope.depth = node.depth;
        scope.per_rank.resize(rank_count);
        scope.comm_compute.resize(rank_count);
        merged.scopes.push_back(std::move(scope));
      }
      MergedScope& scope = merged.scopes[found->second];
      scope.per_rank[r] = node.primary_ms();
      scope.comm_compute[r] = comm[n];
    }
  }
  for (MergedScope& scope : merged.scopes) {
    std::vector<double> means(rank_count, 0.0);
    std::vector<bool> present(rank_count, false);
    std::vector<double> ran;
    for (std::size_t r = 0; r < rank_count; ++r) {
      present[r] = scope.per_rank[r].n > 0;
      means[r] = scope.per_rank[r].mean;
      if (present[r]) ran.push_back(means[r]);
    }
    scope.across_ranks = summarize(ran);
    OnlineSamples pooled;
    for (const Summary& summary : scope.per_rank)
      if (summary.n > 0) pooled.merge(OnlineSamples::from_summary(summary));
    scope.pooled = pooled.summary();
    detail::extremes(merged.ranks, means, present, scope.slowest_rank, scope.fastest_rank);
  }

  // Steps.
  merged.step_scope = options.step_scope.empty() ? default_step_scope(report_at(0)) : options.step_scope;
  merged.slowest_count.assign(rank_count, 0);
  if (merged.step_scope.empty()) return merged;
  if (scope_of_path.count(merged.step_scope) == 0)
    throw Error("step scope \"" + terminal_safe(merged.step_scope) + "\" is in none of the reports");
  std::vector<std::vector<const ScopeInstance*>> steps(rank_count);
  std::vector<std::vector<CommComputeTime>> step_comm(rank_count);
  std::size_t common = static_cast<std::size_t>(-1), most = 0;
  for (std::size_t r = 0; r < rank_count; ++r) {
    steps[r] = step_instances(report_at(r), merged.step_scope);
    step_comm[r] = comm_compute_by_step(report_at(r), merged.step_scope);
    common = std::min(common, steps[r].size());
    most = std::max(most, steps[r].size());
  }
  if (common < most)
    merged.notes.push_back("ranks ran " + std::to_string(common) + " to " + std::to_string(most) +
                           " instances of " + merged.step_scope + "; the first " + std::to_string(common) +
                           " are compared");
  const std::vector<bool> everyone(rank_count, true);
  std::vector<double> skews;
  for (std::size_t s = 0; s < common; ++s) {
    MergedStep step;
    step.index = s;
    for (std::size_t r = 0; r < rank_count; ++r) {
      step.per_rank_ms.push_back(step_ms(*steps[r][s]));
      step.comm_compute.push_back(step_comm[r][s]);
    }
    detail::extremes(merged.ranks, step.per_rank_ms, everyone, step.slowest_rank, step.fastest_rank);
    step.skew_ms = *std::max_element(step.per_rank_ms.begin(), step.per_rank_ms.end()) -
                   *std::min_element(step.per_rank_ms.begin(), step.per_rank_ms.end());
    ++merged.slowest_count[merged.position_of(step.slowest_rank)];
    skews.push_back(step.skew_ms);
    merged.steps.push_back(std::move(step));
  }
  merged.skew_ms = summarize(skews);
  return merged;
}

GPUPROF_NAMESPACE_END
