// gpuprof/detail/kernel_capture_join.hpp: what a KernelCapture holds to join
// its kernel records to scopes, and the join itself. Plain host code without
// CUPTI: the activity side (detail/kernel_capture_activity.hpp) fills it, the
// report side (detail/kernel_capture_report.hpp) reads it.
//
// Holds the records not folded yet, the correlation tables, the launches the
// launch callbacks noted and the scope each graph node was captured in; the
// join by correlation id and graph node is detail/cupti_join.hpp's. Three
// locks, as three kinds of thread write it: records and correlations are
// guarded by the caller's buffer mutex (CUPTI delivers buffers on its own
// thread), launches and graph nodes by mutexes of their own (launching and
// capturing threads), so a launch never waits for a buffer being read.
#pragma once
#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <unordered_set>
#include <utility>
#include <vector>

#include "../config.hpp"
#include "../kernel_record.hpp"
#include "cupti_join.hpp"
#include "graph_intervals.hpp"

GPUPROF_NAMESPACE_BEGIN
namespace detail {

class KernelCaptureJoin {
 public:
  // --- The activity buffers' side; caller holds the buffer mutex.
  void add_record(KernelRecord record) { records_.push_back(std::move(record)); }
  void add_api_call(std::uint32_t correlation_id, std::int64_t start_ns) {
    correlations_.add_api_call(correlation_id, start_ns);
  }
  void add_external(std::uint32_t correlation_id, std::uint64_t scope_instance) {
    correlations_.add_external(correlation_id, scope_instance);
  }

  // A launching call entered (launch callbacks, on the launching thread): its
  // correlation id, which the work it launches repeats, the innermost scope
  // open on this thread and the call's start. A runtime call and the driver
  // call inside it share the id (the join keeps the earlier start). Takes only
  // launches_mutex_, so a launch never waits for a buffer being read.
  void launch_entered(std::uint32_t correlation_id, std::uint64_t scope_instance,
                      std::int64_t start_ns) noexcept {
    const Launch launch{correlation_id, scope_instance, start_ns};
    try {
      const std::lock_guard<std::mutex> lock(launches_mutex_);
      launches_.push_back(launch);
    } catch (...) {  // no memory: that launch's work finds no scope
      lost_launches_.fetch_add(1, std::memory_order_relaxed);
    }
  }

  // CUPTI's resource callbacks, on the thread that creates (captures) or
  // clones (instantiates) a graph node. Take only graph_nodes_mutex_, never
  // the buffer mutex, so node creation does not wait for a buffer being read.
  void graph_node_created(std::uint64_t node_id, std::uint32_t scope_node, std::uint64_t scope_instance) {
    const std::lock_guard<std::mutex> lock(graph_nodes_mutex_);
    graph_nodes_.add_created(node_id, scope_node, scope_instance);
  }
  void graph_node_cloned(std::uint64_t clone_id, std::uint64_t original_id) {
    const std::lock_guard<std::mutex> lock(graph_nodes_mutex_);
    graph_nodes_.add_clone(clone_id, original_id);
  }
  // A node no memory was left to note: its work falls back to the scope
  // around its launch.
  void graph_node_lost() noexcept { lost_graph_nodes_.fetch_add(1, std::memory_order_relaxed); }
  std::uint64_t lost_graph_nodes() const { return lost_graph_nodes_.load(); }

  // --- Reading; caller holds the buffer mutex.

  // The launches the callbacks noted so far join the correlation tables.
  // Returns how many launches had no memory to be noted (dropped records).
  std::uint64_t take_launches() {
    std::vector<Launch> noted;
    {
      const std::lock_guard<std::mutex> lock(launches_mutex_);
      noted.swap(launches_);
    }
    for (const Launch& launch : noted) {
      if (launch.scope_instance != 0)
        correlations_.add_external(launch.correlation_id, launch.scope_instance);
      correlations_.add_api_call(launch.correlation_id, launch.start_ns);
    }
    return lost_launches_.exchange(0, std::memory_order_relaxed);
  }

  // Every record not folded yet, joined to its scope (detail/cupti_join.hpp).
  std::vector<KernelRecord> joined(const std::vector<int>& report_node_of_scope) {
    std::vector<KernelRecord> joined = records_;
    const std::lock_guard<std::mutex> nodes_lock(graph_nodes_mutex_);
    join_correlations(joined, correlations_, graph_nodes_, report_node_of_scope);
    return joined;
  }

  // Replays of scopes captured without stamps, from the graph work kept
  // (folded or not).
  std::vector<GraphInterval> graph_intervals(const std::vector<CapturedScope>& scopes) {
    const std::lock_guard<std::mutex> nodes_lock(graph_nodes_mutex_);
    if (folded_graph_records_.empty()) return graph_scope_intervals(records_, graph_nodes_, scopes);
    std::vector<KernelRecord> graph_work = folded_graph_records_;
    graph_work.insert(graph_work.end(), records_.begin(), records_.end());
    return graph_scope_intervals(graph_work, graph_nodes_, scopes);
  }

  std::size_t record_count() const { return records_.size(); }

  // Drops the `folded` oldest records, now in the aggregates, with their
  // correlations unless a record still kept shares them. Folded graph work
  // stays raw apart: replays of scopes captured without stamps are timed
  // from it (graph_intervals()).
  void forget_folded(std::size_t folded) {
    if (folded == 0) return;
    std::unordered_set<std::uint32_t> still_used;
    for (std::size_t k = folded; k < records_.size(); ++k) still_used.insert(records_[k].correlation_id);
    for (std::size_t k = 0; k < folded; ++k) {
      if (records_[k].graph_node_id != 0) folded_graph_records_.push_back(records_[k]);
      else if (still_used.count(records_[k].correlation_id) == 0)
        correlations_.forget(records_[k].correlation_id);
    }
    records_.erase(records_.begin(), records_.begin() + static_cast<std::ptrdiff_t>(folded));
  }

  // Forgets the records, correlations and launches. Which scope each graph
  // node was captured in is kept: graphs are replayed after warm-up.
  void clear() {
    records_.clear();
    folded_graph_records_.clear();
    correlations_.clear();
    const std::lock_guard<std::mutex> launches_lock(launches_mutex_);
    launches_.clear();
  }

 private:
  // Guarded by the caller's buffer mutex.
  std::vector<KernelRecord> records_;               // not folded yet
  std::vector<KernelRecord> folded_graph_records_;  // graph work among the folded records
  CorrelationTables correlations_;
  // Guarded by launches_mutex_: the launch callbacks write it on launching threads.
  struct Launch {
    std::uint32_t correlation_id = 0;
    std::uint64_t scope_instance = 0;
    std::int64_t start_ns = 0;
  };
  std::mutex launches_mutex_;
  std::vector<Launch> launches_;
  std::atomic<std::uint64_t> lost_launches_{0};
  // Guarded by graph_nodes_mutex_: CUPTI's resource callbacks write it on
  // capturing threads.
  std::mutex graph_nodes_mutex_;
  GraphNodeScopes graph_nodes_;
  std::atomic<std::uint64_t> lost_graph_nodes_{0};
};

}  // namespace detail
GPUPROF_NAMESPACE_END
