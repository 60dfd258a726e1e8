// gpuprof/detail/kernel_aggregates.hpp: what kernel capture keeps of the
// activity records it has folded, so that a run left on for a million steps
// captures in memory bounded by its distinct (scope, kernel) pairs.
//
// Per (scope path, kernel name, kind), a KernelAggregate (exact count, total,
// min, max, mean and variance; a sketch for the median). Of the records
// themselves only the newest `window` are kept, for the traces and the
// per-record views (0: all of them), with the same default and switches as
// the scope trace window (GPUPROF_FULL_TRACE, GPUPROF_TRACE_WINDOW). Records
// are folded at report time, when they are joined to their scopes: the
// newest `window` are re-joined at every report as before, the older ones
// folded once, so a report costs the window and the pairs, not the run.
// While no record has left the window the summaries read the records,
// exactly as without a window.
#pragma once
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <tuple>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "../config.hpp"
#include "../kernel_aggregate.hpp"
#include "../kernel_record.hpp"
#include "../kernel_summary.hpp"
#include "../report_model.hpp"
#include "scope_aggregates.hpp"

GPUPROF_NAMESPACE_BEGIN

namespace detail {

class KernelAggregates {
 public:
  explicit KernelAggregates(std::size_t window = trace_window_from_environment()) : window_(window) {}

  // `unfolded`: every record not folded yet, oldest first, joined against
  // `report` (whose kernels are not set yet). Folds all but the newest
  // `window` into the aggregates for good (their scope is fixed then), and
  // fills the report: the rest as its kernels, the count of every record,
  // and the aggregates of all of them. Returns how many of the oldest
  // records were folded: the caller drops them. Until one is, the report is
  // exactly what it was without a window, re-joined at every report.
  std::size_t contribute(Report& report, std::vector<KernelRecord> unfolded) {
    report.kernels = std::move(unfolded);
    const std::vector<std::string> paths = scope_paths(report);
    const std::size_t fold =
        window_ > 0 && report.kernels.size() > window_ ? report.kernels.size() - window_ : 0;
    for (std::size_t k = 0; k < fold; ++k) add(folded_, report.kernels[k], paths[k]);
    folded_records_ += fold;
    std::vector<Pair> all = folded_;
    for (std::size_t k = fold; k < report.kernels.size(); ++k) add(all, report.kernels[k], paths[k]);
    forget_instance_paths(report.kernels, fold);
    report.kernels.erase(report.kernels.begin(), report.kernels.begin() + static_cast<std::ptrdiff_t>(fold));
    report.recorded_kernels = folded_records_ + report.kernels.size();
    report.kernel_aggregates.clear();
    for (Pair& pair : all) report.kernel_aggregates.push_back(std::move(pair.aggregate));
    return fold;
  }
  void clear() {
    folded_.clear();
    folded_records_ = 0;
    instance_paths_.clear();
  }
  // 0: keep every record. A smaller window folds the oldest at the next report.
  void set_window(std::size_t window) noexcept { window_ = window; }
  std::size_t window() const noexcept { return window_; }
  // Records folded for good since the start or clear().
  std::uint64_t folded_records() const noexcept { return folded_records_; }

 private:
  struct Pair {
    std::tuple<std::string, std::string, int> key;
    KernelAggregate aggregate;
  };
  // The scope path of each record of report.kernels ("" outside any scope).
  // A record launched in a scope instance keeps the path a report found for
  // it: when a step launches fewer kernels than it opens scopes, a record
  // leaves the kernel window (and is folded) after its instance has left the
  // scope trace window, so the report that folds it no longer holds that
  // instance, while an earlier report did.
  std::vector<std::string> scope_paths(const Report& report) {
    const std::vector<int> nodes = kernel_nodes(report);
    std::vector<std::string> paths(report.kernels.size());
    for (std::size_t k = 0; k < paths.size(); ++k) {
      const KernelRecord& record = report.kernels[k];
      const bool by_instance = record.scope_node < 0 && record.scope_instance != 0;
      if (nodes[k] >= 0) {
        paths[k] = report.nodes[static_cast<std::size_t>(nodes[k])].path;
        if (by_instance) instance_paths_.try_emplace(record.scope_instance, paths[k]);
      } else if (by_instance) {
        const auto found = instance_paths_.find(record.scope_instance);
        if (found != instance_paths_.end()) paths[k] = found->second;
      }
    }
    return paths;
  }
  // The instances of the `folded` oldest `records` that no kept record
  // shares: no record will ask for their path again.
  void forget_instance_paths(const std::vector<KernelRecord>& records, std::size_t folded) {
    if (folded == 0 || instance_paths_.empty()) return;
    std::unordered_set<std::uint64_t> still_used;
    for (std::size_t k = folded; k < records.size(); ++k) still_used.insert(records[k].scope_instance);
    for (std::size_t k = 0; k < folded; ++k)
      if (still_used.count(records[k].scope_instance) == 0) instance_paths_.erase(records[k].scope_instance);
  }

  // Pairs stay few (distinct scope and kernel names): a linear search from
  // the newest keeps first-seen order without an index to keep in step.
  static void add(std::vector<Pair>& pairs, const KernelRecord& record, const std::string& scope_path) {
    auto key = std::make_tuple(scope_path, record.name, static_cast<int>(record.kind));
    auto found =
        std::find_if(pairs.rbegin(), pairs.rend(), [&](const Pair& pair) { return pair.key == key; });
    if (found == pairs.rend()) {
      Pair fresh{std::move(key), {}};
      fresh.aggregate.scope_path = scope_path;
      fresh.aggregate.kind = record.kind;
      fresh.aggregate.name = record.name;
      fresh.aggregate.base_name = record.base_name;
      fresh.aggregate.category = record.category;
      pairs.push_back(std::move(fresh));
      found = pairs.rbegin();
    }
    found->aggregate.add(record);
  }

  std::size_t window_;
  std::vector<Pair> folded_;
  std::uint64_t folded_records_ = 0;
  // Scope instance id -> path, for the instances of records not folded yet.
  std::unordered_map<std::uint64_t, std::string> instance_paths_;
};

}  // namespace detail
GPUPROF_NAMESPACE_END
