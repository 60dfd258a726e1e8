// gpuprof/kernel_summary.hpp: the nsys-style kernel summaries of a Report, pure
// functions over its scope tree, instances and kernel records (testable
// without a GPU).
//   kern_sum(report, "forward")  nsys cuda_gpu_kern_sum over every "forward"
//                                scope's kernels (and its children's)
//   scope_kern_sum(report)       nsys nvtx_kern_sum: kernels per scope
//   scope_gpu_summary(report)    per scope: GPU projection, kernel time,
//                                CUDA-event time, category shares
//   instance_gpu_times(report)   the same per scope execution
// Where capture's window cut records (Report::kernels_cut()), the first two
// read the per (scope, kernel) aggregates, the last two the window. A filter
// "a/b" matches that path and every path ending in "/a/b"; "" is the whole
// run. Views and columns: docs/kernel-capture.md, "Summaries".
#pragma once
#include <algorithm>
#include <cstdint>
#include <map>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "config.hpp"
#include "kernel_aggregate.hpp"
#include "kernel_names.hpp"
#include "kernel_record.hpp"
#include "report_model.hpp"
#include "stats.hpp"

GPUPROF_NAMESPACE_BEGIN

enum class ScopeView { innermost, inclusive };
inline const char* to_string(ScopeView view) {
  return view == ScopeView::innermost ? "innermost" : "inclusive";
}

// How kern_sum groups records into rows: by the full demangled name (nsys's
// default) or by the base name (nsys's ":base" option), which merges the
// template instantiations of one kernel.
enum class KernelGrouping { name, base_name };

// Which activities a selection keeps. nsys's kern_sum lists kernels only;
// the category breakdown counts copies and memsets too ("memory").
enum class Activities { kernels, all };

// One row of kern_sum, with nsys cuda_gpu_kern_sum's columns.
struct KernelSummaryRow {
  double time_percent = 0;  // of the summed time of all rows
  std::int64_t total_ns = 0;
  std::uint64_t instances = 0;
  double avg_ns = 0;
  double median_ns = 0;  // mean of the two middle values for even counts
  std::int64_t min_ns = 0;
  std::int64_t max_ns = 0;
  double stddev_ns = 0;  // sample standard deviation (n - 1), 0 for one instance
  std::string name;      // the grouping key: full or base name
  std::string category;  // of the first record of the group
};

// One row of scope_kern_sum (nsys nvtx_kern_sum): a kernel within a scope.
struct ScopeKernelRow {
  std::string range;  // the scope's path
  ScopeView view = ScopeView::inclusive;
  std::uint64_t scope_instances = 0;  // executions of the scope
  KernelSummaryRow kernel;            // time_percent is of the scope's kernel time in this view
};

// Time of one category within a set of activities.
struct CategoryShare {
  std::string category;
  std::int64_t total_ns = 0;
  double percent = 0;  // of the summed time of the set
};

// GPU time of one scope execution (inclusive of nested scopes). An eager
// instance is one execution; a scope node whose work was captured into a CUDA
// graph has one execution per launch of that graph (graph_launch != 0): all
// its captured instances in that graph together.
struct InstanceGpuTime {
  std::uint64_t instance_id = 0;  // 0 for a graph execution (a node and a launch)
  int node = -1;
  std::uint32_t graph_launch = 0;   // the graph launch's correlation id; 0 for an eager execution
  std::uint64_t activities = 0;     // kernels, copies and memsets
  std::int64_t first_start_ns = 0;  // 0 when the instance launched nothing
  std::int64_t last_end_ns = 0;
  std::int64_t projection_ns = 0;  // last_end_ns - first_start_ns
  std::int64_t summed_ns = 0;      // sum of durations (exceeds the projection when streams overlap)
  double event_ms = -1;            // the instance's CUDA-event time; < 0 when not GPU-timed, and for
                                   // graph executions (their replays are separate report instances)
};

// GPU time of one scope node over all its executions (inclusive).
struct ScopeGpuSummary {
  std::string path;
  std::uint64_t instances = 0;
  std::uint64_t activities = 0;
  std::int64_t projection_ns = 0;         // sum over executions of their projections
  std::int64_t summed_ns = 0;             // sum of activity durations
  double event_ms = -1;                   // summed CUDA-event time; < 0 when not GPU-timed
  std::vector<CategoryShare> categories;  // kernel_categories() order, then any user categories
};

namespace detail {
// Whether a scope filter names `path`: the path itself, or its last components.
inline bool path_matches(const std::string& path, const std::string& filter) {
  return path == filter || (path.size() > filter.size() && path[path.size() - filter.size() - 1] == '/' &&
                            path.compare(path.size() - filter.size(), filter.size(), filter) == 0);
}
// Whether `path` or one of its ancestors matches `filter`.
inline bool path_inside_match(const std::string& path, const std::string& filter) {
  for (std::size_t end = path.size(); end != std::string::npos && end > 0; end = path.rfind('/', end - 1))
    if (path_matches(path.substr(0, end), filter)) return true;
  return false;
}
// Whether `path` is `scope` or inside it.
inline bool path_within(const std::string& path, const std::string& scope) {
  return path == scope || (path.size() > scope.size() && path[scope.size()] == '/' &&
                           path.compare(0, scope.size(), scope) == 0);
}

// Which scope every activity belongs to, in both views, with instance
// nesting recovered from the scope tree and the host intervals.
class ScopeIndex {
 public:
  explicit ScopeIndex(const Report& report) : report_(report) {
    for (std::size_t i = 0; i < report.instances.size(); ++i)
      instance_index_.emplace(report.instances[i].id, static_cast<int>(i));
    link_instance_parents();
  }

  // Index into report.instances of the instance that launched `record`; -1 when
  // it ran outside any scope (or its scope is not in this report), and for
  // graph work charged to its capture node.
  int instance_of(const KernelRecord& record) const {
    if (record.scope_node >= 0) return -1;
    const auto found = instance_index_.find(record.scope_instance);
    return found == instance_index_.end() ? -1 : found->second;
  }
  // The scope node of graph work charged to its capture node; -1 otherwise.
  int graph_node_of(const KernelRecord& record) const {
    return record.scope_node >= 0 && static_cast<std::size_t>(record.scope_node) < report_.nodes.size()
               ? record.scope_node
               : -1;
  }
  int node_of(const KernelRecord& record) const {
    if (record.scope_node >= 0) return graph_node_of(record);
    const int instance = instance_of(record);
    return instance < 0 ? -1 : report_.instances[static_cast<std::size_t>(instance)].node;
  }
  // Enclosing instance of report.instances[instance] (-1 for a root).
  int parent_instance(int instance) const { return instance_parent_[static_cast<std::size_t>(instance)]; }

  // Per node: does `filter` match the node (`matched`) or one of its ancestors (`inside`)?
  std::vector<bool> matching_nodes(const std::string& filter) const {
    std::vector<bool> matched(report_.nodes.size(), false);
    for (std::size_t i = 0; i < report_.nodes.size(); ++i)
      matched[i] = path_matches(report_.nodes[i].path, filter);
    return matched;
  }
  std::vector<bool> nodes_inside(const std::vector<bool>& matched) const {
    std::vector<bool> inside = matched;
    // Nodes are depth-first, so a parent's answer is ready before its children's.
    for (std::size_t i = 0; i < report_.nodes.size(); ++i) {
      const int parent = report_.nodes[i].parent;
      if (parent >= 0 && inside[static_cast<std::size_t>(parent)]) inside[i] = true;
    }
    return inside;
  }

 private:
  // An instance's parent is the instance of its node's parent, on the same
  // thread, whose host interval contains it: sweep each thread's instances in
  // begin order, keeping the currently open ones on a stack.
  void link_instance_parents() {
    const auto& instances = report_.instances;
    instance_parent_.assign(instances.size(), -1);
    std::vector<int> order(instances.size());
    for (std::size_t i = 0; i < order.size(); ++i) order[i] = static_cast<int>(i);
    const auto at = [&](int i) -> const ScopeInstance& { return instances[static_cast<std::size_t>(i)]; };
    const auto depth = [&](int i) { return report_.nodes[static_cast<std::size_t>(at(i).node)].depth; };
    std::sort(order.begin(), order.end(), [&](int a, int b) {
      if (at(a).thread != at(b).thread) return at(a).thread < at(b).thread;
      if (at(a).host_begin_ns != at(b).host_begin_ns) return at(a).host_begin_ns < at(b).host_begin_ns;
      return depth(a) < depth(b);  // a parent that began in the same nanosecond comes first
    });
    std::vector<int> open;
    for (std::size_t k = 0; k < order.size(); ++k) {
      const int i = order[k];
      if (k > 0 && at(order[k - 1]).thread != at(i).thread) open.clear();
      const int parent_node = report_.nodes[static_cast<std::size_t>(at(i).node)].parent;
      while (!open.empty() && at(open.back()).host_end_ns < at(i).host_begin_ns) open.pop_back();
      for (auto candidate = open.rbegin(); candidate != open.rend(); ++candidate) {
        if (at(*candidate).node == parent_node && at(*candidate).host_end_ns >= at(i).host_end_ns) {
          instance_parent_[static_cast<std::size_t>(i)] = *candidate;
          break;
        }
      }
      open.push_back(i);
    }
  }

  const Report& report_;
  std::unordered_map<std::uint64_t, int> instance_index_;
  std::vector<int> instance_parent_;
};

inline bool kept(ActivityKind kind, Activities activities) {
  return activities == Activities::all || kind == ActivityKind::kernel;
}
inline bool kept(const KernelRecord& record, Activities activities) { return kept(record.kind, activities); }

// Sets each row's share of `all_ns` and sorts the rows by total time
// (descending; ties by name, so the order is reproducible).
// A row whose count and exact total are set, completed by its durations'
// mean, median and spread.
inline void add_row(std::vector<KernelSummaryRow>& rows, KernelSummaryRow row, const Summary& durations) {
  row.avg_ns = static_cast<double>(row.total_ns) / static_cast<double>(row.instances);
  row.median_ns = durations.median;
  row.stddev_ns = durations.stddev;
  rows.push_back(std::move(row));
}

inline void rank_rows(std::vector<KernelSummaryRow>& rows, std::int64_t all_ns) {
  for (KernelSummaryRow& row : rows)
    row.time_percent =
        all_ns > 0 ? 100.0 * static_cast<double>(row.total_ns) / static_cast<double>(all_ns) : 0.0;
  std::sort(rows.begin(), rows.end(), [](const KernelSummaryRow& a, const KernelSummaryRow& b) {
    return a.total_ns != b.total_ns ? a.total_ns > b.total_ns : a.name < b.name;
  });
}

// report.kernels grouped by scope node, in both views (inclusive: a record is
// listed under its node and every ancestor). Records outside any scope are left out.
struct RecordsByNode {
  std::vector<std::vector<KernelRecord>> innermost, inclusive;
};
inline RecordsByNode records_by_node(const Report& report, const ScopeIndex& index, Activities activities) {
  RecordsByNode grouped;
  grouped.innermost.resize(report.nodes.size());
  grouped.inclusive.resize(report.nodes.size());
  for (const KernelRecord& record : report.kernels) {
    const int node = index.node_of(record);
    if (node < 0 || !kept(record, activities)) continue;
    grouped.innermost[static_cast<std::size_t>(node)].push_back(record);
    for (int up = node; up >= 0; up = report.nodes[static_cast<std::size_t>(up)].parent)
      grouped.inclusive[static_cast<std::size_t>(up)].push_back(record);
  }
  return grouped;
}

// The nodes a summary lists: those `filter` matches and their descendants ("" = all).
inline std::vector<bool> listed_nodes(const Report& report, const ScopeIndex& index,
                                      const std::string& filter) {
  if (filter.empty()) return std::vector<bool>(report.nodes.size(), true);
  return index.nodes_inside(index.matching_nodes(filter));
}
}  // namespace detail

// The scope node (index into report.nodes) of every record of report.kernels,
// in order: the innermost scope that launched it; -1 for a record launched
// outside any scope of this report.
inline std::vector<int> kernel_nodes(const Report& report) {
  const detail::ScopeIndex index(report);
  std::vector<int> nodes;
  nodes.reserve(report.kernels.size());
  for (const KernelRecord& record : report.kernels) nodes.push_back(index.node_of(record));
  return nodes;
}

// The activities of the scopes `filter` selects ("" = the whole run) in `view`.
inline std::vector<KernelRecord> select_kernels(const Report& report, const std::string& filter = "",
                                                ScopeView view = ScopeView::inclusive,
                                                Activities activities = Activities::kernels) {
  std::vector<KernelRecord> selected;
  if (filter.empty()) {
    for (const KernelRecord& record : report.kernels)
      if (detail::kept(record, activities)) selected.push_back(record);
    return selected;
  }
  const detail::ScopeIndex index(report);
  const std::vector<bool> matched = index.matching_nodes(filter);
  const std::vector<bool> wanted = view == ScopeView::inclusive ? index.nodes_inside(matched) : matched;
  for (const KernelRecord& record : report.kernels) {
    const int node = index.node_of(record);
    if (node >= 0 && wanted[static_cast<std::size_t>(node)] && detail::kept(record, activities))
      selected.push_back(record);
  }
  return selected;
}

// nsys cuda_gpu_kern_sum over `records`: one row per name, sorted by total
// time (descending; ties by name, so the order is reproducible).
inline std::vector<KernelSummaryRow> kern_sum(const std::vector<KernelRecord>& records,
                                              KernelGrouping grouping = KernelGrouping::name) {
  std::map<std::string, std::vector<const KernelRecord*>> groups;
  std::int64_t all_ns = 0;
  for (const KernelRecord& record : records) {
    groups[grouping == KernelGrouping::name ? record.name : record.base_name].push_back(&record);
    all_ns += record.duration_ns();
  }
  std::vector<KernelSummaryRow> rows;
  for (const auto& [name, members] : groups) {
    KernelSummaryRow row;
    row.name = name;
    row.category = members.front()->category;
    row.instances = members.size();
    std::vector<double> durations;
    durations.reserve(members.size());
    row.min_ns = members.front()->duration_ns();
    row.max_ns = row.min_ns;
    for (const KernelRecord* member : members) {
      const std::int64_t duration = member->duration_ns();
      row.total_ns += duration;  // summed exactly in integers, not through doubles
      row.min_ns = std::min(row.min_ns, duration);
      row.max_ns = std::max(row.max_ns, duration);
      durations.push_back(static_cast<double>(duration));
    }
    detail::add_row(rows, std::move(row), summarize(std::move(durations)));
  }
  detail::rank_rows(rows, all_ns);
  return rows;
}

// kern_sum over aggregates (Report::kernel_aggregates): count, total, mean,
// min, max and standard deviation exact, the median from the sketch.
inline std::vector<KernelSummaryRow> kern_sum(const std::vector<KernelAggregate>& aggregates,
                                              KernelGrouping grouping = KernelGrouping::name) {
  std::map<std::string, KernelAggregate> groups;
  std::int64_t all_ns = 0;
  for (const KernelAggregate& aggregate : aggregates) {
    const auto [group, added] =
        groups.emplace(grouping == KernelGrouping::name ? aggregate.name : aggregate.base_name, aggregate);
    if (!added) group->second.merge(aggregate);
    all_ns += aggregate.total_ns;
  }
  std::vector<KernelSummaryRow> rows;
  for (const auto& [name, group] : groups) {
    KernelSummaryRow row;
    row.name = name;
    row.category = group.category;
    row.instances = group.count;
    row.total_ns = group.total_ns;
    row.min_ns = group.min_ns;
    row.max_ns = group.max_ns;
    detail::add_row(rows, std::move(row), group.durations_ns.summary());
  }
  detail::rank_rows(rows, all_ns);
  return rows;
}

// The aggregates of the scopes `filter` selects ("" = the whole run, activity
// outside any scope included) in `view`: select_kernels' choice, by path.
inline std::vector<KernelAggregate> select_kernel_aggregates(const Report& report,
                                                             const std::string& filter = "",
                                                             ScopeView view = ScopeView::inclusive,
                                                             Activities activities = Activities::kernels) {
  std::vector<KernelAggregate> selected;
  for (const KernelAggregate& aggregate : report.kernel_aggregates) {
    if (!detail::kept(aggregate.kind, activities)) continue;
    if (filter.empty() ||
        (view == ScopeView::inclusive ? detail::path_inside_match(aggregate.scope_path, filter)
                                      : detail::path_matches(aggregate.scope_path, filter)))
      selected.push_back(aggregate);
  }
  return selected;
}

// kern_sum over the kernels of the scopes `filter` selects (inclusive), or of
// the whole run for "".
inline std::vector<KernelSummaryRow> kern_sum(const Report& report, const std::string& filter = "",
                                              KernelGrouping grouping = KernelGrouping::name) {
  if (report.kernels_cut())
    return kern_sum(select_kernel_aggregates(report, filter, ScopeView::inclusive, Activities::kernels),
                    grouping);
  return kern_sum(select_kernels(report, filter, ScopeView::inclusive, Activities::kernels), grouping);
}

// Time per category of `records`, in kernel_categories() order followed by
// any other category (user rules) in name order; categories with no time are
// listed too, so tables line up across scopes.
inline std::vector<CategoryShare> category_breakdown(const std::vector<KernelRecord>& records) {
  std::map<std::string, std::int64_t> by_category;
  std::int64_t all_ns = 0;
  for (const KernelRecord& record : records) {
    by_category[record.category] += record.duration_ns();
    all_ns += record.duration_ns();
  }
  std::vector<CategoryShare> shares;
  const auto add = [&](const std::string& category, std::int64_t ns) {
    const double percent = all_ns > 0 ? 100.0 * static_cast<double>(ns) / static_cast<double>(all_ns) : 0.0;
    shares.push_back({category, ns, percent});
  };
  const std::vector<std::string>& known = kernel_categories();
  for (const std::string& category : known) {
    const auto found = by_category.find(category);
    add(category, found == by_category.end() ? 0 : found->second);
  }
  for (const auto& [category, ns] : by_category)
    if (std::find(known.begin(), known.end(), category) == known.end()) add(category, ns);
  return shares;
}

// Per scope node selected by `filter` (its matches and their descendants;
// "" = every node), in node order: kern_sum of its kernels in the innermost
// view, then in the inclusive view. Nodes without kernels in a view get no rows.
inline std::vector<ScopeKernelRow> scope_kern_sum(const Report& report, const std::string& filter = "",
                                                  KernelGrouping grouping = KernelGrouping::name) {
  const detail::ScopeIndex index(report);
  const std::vector<bool> listed = detail::listed_nodes(report, index, filter);
  const bool cut = report.kernels_cut();
  const detail::RecordsByNode grouped =
      cut ? detail::RecordsByNode{} : detail::records_by_node(report, index, Activities::kernels);
  // Where records left the window, each node's aggregates in the view.
  const auto aggregates_in = [&](const std::string& path, ScopeView view) {
    std::vector<KernelAggregate> selected;
    for (const KernelAggregate& aggregate : report.kernel_aggregates)
      if (aggregate.kind == ActivityKind::kernel &&
          (view == ScopeView::innermost ? aggregate.scope_path == path
                                        : detail::path_within(aggregate.scope_path, path)))
        selected.push_back(aggregate);
    return selected;
  };
  std::vector<ScopeKernelRow> rows;
  for (std::size_t node = 0; node < report.nodes.size(); ++node) {
    if (!listed[node]) continue;
    const ScopeNode& scope = report.nodes[node];
    for (const ScopeView view : {ScopeView::innermost, ScopeView::inclusive}) {
      std::vector<KernelSummaryRow> kernels =
          cut ? kern_sum(aggregates_in(scope.path, view), grouping)
              : kern_sum(view == ScopeView::innermost ? grouped.innermost[node] : grouped.inclusive[node],
                         grouping);
      for (KernelSummaryRow& kernel : kernels)
        rows.push_back({scope.path, view, scope.count, std::move(kernel)});
    }
  }
  return rows;
}

// GPU time of every scope execution (inclusive of nested scopes): each
// instance of report.instances once, in order (eager work; the replay
// instances of captured scopes list no activities), then the graph
// executions, node by node in node order, each node's launches in order of
// their first record. A graph record counts for its capture node and that
// node's ancestors, each keyed by the same launch.
inline std::vector<InstanceGpuTime> instance_gpu_times(const Report& report) {
  const detail::ScopeIndex index(report);
  const auto add = [](InstanceGpuTime& time, const KernelRecord& record) {
    time.first_start_ns =
        time.activities == 0 ? record.start_ns : std::min(time.first_start_ns, record.start_ns);
    time.last_end_ns = time.activities == 0 ? record.end_ns : std::max(time.last_end_ns, record.end_ns);
    time.summed_ns += record.duration_ns();
    ++time.activities;
  };
  std::vector<InstanceGpuTime> times(report.instances.size());
  // Per node: its graph executions in order of first record, found by (node, launch).
  std::vector<std::vector<InstanceGpuTime>> launches_of(report.nodes.size());
  std::unordered_map<std::uint64_t, std::size_t> launch_at;
  for (const KernelRecord& record : report.kernels) {
    for (int up = index.instance_of(record); up >= 0; up = index.parent_instance(up))
      add(times[static_cast<std::size_t>(up)], record);
    for (int up = index.graph_node_of(record); up >= 0;
         up = report.nodes[static_cast<std::size_t>(up)].parent) {
      std::vector<InstanceGpuTime>& launches = launches_of[static_cast<std::size_t>(up)];
      const auto [slot, added] = launch_at.emplace(
          (std::uint64_t(static_cast<std::uint32_t>(up)) << 32) | record.graph_launch, launches.size());
      if (added) {
        launches.emplace_back();
        launches.back().node = up;
        launches.back().graph_launch = record.graph_launch;
      }
      add(launches[slot->second], record);
    }
  }
  for (std::size_t i = 0; i < report.instances.size(); ++i) {
    times[i].instance_id = report.instances[i].id;
    times[i].node = report.instances[i].node;
    times[i].event_ms = report.instances[i].gpu_ms;
  }
  for (const std::vector<InstanceGpuTime>& launches : launches_of)
    times.insert(times.end(), launches.begin(), launches.end());
  for (InstanceGpuTime& time : times) time.projection_ns = time.last_end_ns - time.first_start_ns;
  return times;
}

// Per scope node selected by `filter` ("" = every node), in node order: GPU
// projection, summed activity time and event time over all its executions,
// and the category breakdown of its activities (copies and memsets included).
inline std::vector<ScopeGpuSummary> scope_gpu_summary(const Report& report, const std::string& filter = "") {
  const detail::ScopeIndex index(report);
  const std::vector<bool> listed = detail::listed_nodes(report, index, filter);
  const detail::RecordsByNode grouped = detail::records_by_node(report, index, Activities::all);
  std::vector<ScopeGpuSummary> by_node(report.nodes.size());
  for (const InstanceGpuTime& time : instance_gpu_times(report)) {
    ScopeGpuSummary& summary = by_node[static_cast<std::size_t>(time.node)];
    summary.projection_ns += time.projection_ns;
    summary.summed_ns += time.summed_ns;
    summary.activities += time.activities;
  }
  std::vector<ScopeGpuSummary> summaries;
  for (std::size_t node = 0; node < report.nodes.size(); ++node) {
    if (!listed[node]) continue;
    ScopeGpuSummary summary = std::move(by_node[node]);
    const ScopeNode& scope = report.nodes[node];
    summary.path = scope.path;
    summary.instances = scope.count;
    summary.event_ms = scope.gpu_timed() ? scope.gpu_ms.mean * static_cast<double>(scope.gpu_ms.n) : -1.0;
    summary.categories = category_breakdown(grouped.inclusive[node]);
    summaries.push_back(std::move(summary));
  }
  return summaries;
}

GPUPROF_NAMESPACE_END
