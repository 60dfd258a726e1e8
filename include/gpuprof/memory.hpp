// gpuprof/memory.hpp: device-memory high-water mark per scope, reported in
// ScopeNode::peak_device_bytes (the highest over the node's executions).
//
// ```cpp
// #include <gpuprof/memory.hpp>
// #include <gpuprof/profiler.hpp>
// gpuprof::Report watched(void (*train_step)()) {
//   gpuprof::MemoryWatch memory;  // observes every scope from now on
//   {
//     GPUPROF_SCOPE("train_step");
//     train_step();
//   }
//   return gpuprof::profiler().report();  // nodes[i].peak_device_bytes
// }
// ```
//
// The peak is device memory in use in cudaMemGetInfo's sense (total - free),
// the highest of what scope boundaries, the stream-ordered pool and kernel
// capture's allocation records (use_allocations()) each see; every boundary
// sample also goes on Report::memory_timeline. One device: the one current
// when the watch is made. The sources: docs/kernel-capture.md#memory-peaks-gpuprofmemoryhpp
#pragma once
#include <algorithm>
#include <cstdint>
#include <functional>
#include <mutex>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "allocation_record.hpp"
#include "config.hpp"
#include "diagnostics.hpp"
#include "build_memory_timeline.hpp"
#include "report_model.hpp"

#if GPUPROF_WITH_CUDA
#include <cuda_runtime_api.h>

#include "clock.hpp"
#include "error.hpp"
#include "profiler.hpp"
#endif

GPUPROF_NAMESPACE_BEGIN

namespace detail {
// One reading of the device's memory at a scope boundary.
struct MemorySample {
  std::int64_t device_used = -1;     // total - free; < 0 unknown
  std::int64_t pool_reserved = -1;   // pool's reserved bytes; < 0 when no pool is watched
  std::int64_t pool_used_high = -1;  // pool's used high-water since its last reset
};

// Peak estimates of one scope execution, per source (< 0: source unavailable).
struct InstanceMemory {
  std::int64_t device_used_at_begin = -1;
  std::int64_t boundaries_peak = -1;
  std::int64_t pool_peak = -1;
  std::int64_t peak() const { return std::max(boundaries_peak, pool_peak); }
};

// The per-scope bookkeeping of MemoryWatch without the CUDA calls: feed it a
// sample at every boundary and it keeps each execution's peak. A sample
// counts for every execution open at that moment, on any thread, since device
// memory is shared. The caller resets the pool's high-water mark right after
// begin(), so the next sample's pool_used_high covers the time since.
class MemoryPeakTracker {
 public:
  void begin(std::uint64_t instance_id, const MemorySample& sample) {
    fold(sample);
    InstanceMemory memory;
    memory.device_used_at_begin = sample.device_used;
    memory.boundaries_peak = sample.device_used;
    open_[instance_id] = Open{memory, sample.device_used >= 0 && sample.pool_reserved >= 0
                                          ? sample.device_used - sample.pool_reserved
                                          : -1};
  }
  void end(std::uint64_t instance_id, const MemorySample& sample) {
    fold(sample);
    const auto found = open_.find(instance_id);
    if (found == open_.end()) return;
    finished_[instance_id] = found->second.memory;
    open_.erase(found);
  }
  // Finished executions by instance id.
  const std::unordered_map<std::uint64_t, InstanceMemory>& finished() const { return finished_; }
  // Open scopes stay tracked: they finish after the reset and belong to the next report.
  void clear_finished() { finished_.clear(); }

 private:
  struct Open {
    InstanceMemory memory;
    std::int64_t outside_pool = -1;  // in use outside the pool at begin
  };
  void fold(const MemorySample& sample) {
    for (auto& entry : open_) {
      Open& open = entry.second;
      open.memory.boundaries_peak = std::max(open.memory.boundaries_peak, sample.device_used);
      if (open.outside_pool >= 0 && sample.pool_used_high >= 0)
        open.memory.pool_peak = std::max(open.memory.pool_peak, open.outside_pool + sample.pool_used_high);
    }
  }
  std::unordered_map<std::uint64_t, Open> open_;
  std::unordered_map<std::uint64_t, InstanceMemory> finished_;
};

// `start_bytes` plus the highest running sum of the non-pool allocations and
// releases timed within [begin_ns, end_ns] (never below `start_bytes`).
inline std::int64_t replayed_peak(const std::vector<AllocationRecord>& allocations, std::int64_t begin_ns,
                                  std::int64_t end_ns, std::int64_t start_bytes) {
  std::vector<const AllocationRecord*> inside;
  for (const AllocationRecord& record : allocations)
    if (!record.from_pool && record.time_ns >= begin_ns && record.time_ns <= end_ns)
      inside.push_back(&record);
  std::stable_sort(inside.begin(), inside.end(), [](const AllocationRecord* a, const AllocationRecord* b) {
    return a->time_ns < b->time_ns;
  });
  std::int64_t running = start_bytes, peak = start_bytes;
  for (const AllocationRecord* record : inside) peak = std::max(peak, running += record->bytes);
  return peak;
}

// Sets every node's peak_device_bytes to the highest peak of its executions
// in `finished` (replaying `allocations` over each execution's host interval
// when there are any); nodes with no watched execution keep -1.
inline void apply_memory_peaks(Report& report,
                               const std::unordered_map<std::uint64_t, InstanceMemory>& finished,
                               const std::vector<AllocationRecord>& allocations) {
  for (const ScopeInstance& instance : report.instances) {
    const auto found = finished.find(instance.id);
    if (found == finished.end() || instance.node < 0) continue;
    const InstanceMemory& memory = found->second;
    std::int64_t peak = memory.peak();
    if (!allocations.empty() && memory.device_used_at_begin >= 0)
      peak = std::max(peak, replayed_peak(allocations, instance.host_begin_ns, instance.host_end_ns,
                                          memory.device_used_at_begin));
    std::int64_t& node_peak = report.nodes[static_cast<std::size_t>(instance.node)].peak_device_bytes;
    node_peak = std::max(node_peak, peak);
  }
}

}  // namespace detail

#if GPUPROF_WITH_CUDA
struct MemoryWatchOptions {
  // Watch the device's current stream-ordered pool (cudaDeviceGetMemPool):
  // what cudaMallocAsync allocates from unless told otherwise.
  bool watch_pool = true;
  cudaMemPool_t pool = nullptr;  // a specific pool instead of the device's current one
};

class MemoryWatch final : public ScopeObserver {
 public:
  explicit MemoryWatch(MemoryWatchOptions options = {}) : options_(options) {
    int devices = 0;
    const cudaError_t status = cudaGetDeviceCount(&devices);
    if (status != cudaSuccess || devices == 0) {
      why_inactive_ = std::string("no usable CUDA device (") +
                      (status != cudaSuccess ? cudaGetErrorString(status) : "0 devices") + ")";
      diagnose(Severity::note, "memory watch is off: " + why_inactive_);
      return;
    }
    if (options_.watch_pool && options_.pool == nullptr) {
      int device = 0;
      GPUPROF_CUDA_CHECK(cudaGetDevice(&device));
      GPUPROF_CUDA_CHECK(cudaDeviceGetMemPool(&options_.pool, device));
    }
    profiler().add_observer(this);
  }
  ~MemoryWatch() override {
    if (active()) profiler().remove_observer(this);
  }
  MemoryWatch(const MemoryWatch&) = delete;
  MemoryWatch& operator=(const MemoryWatch&) = delete;

  bool active() const { return why_inactive_.empty(); }
  const std::string& why_inactive() const { return why_inactive_; }

  // Adds the MEMORY2 source: typically [&] { return capture.allocations(); }
  // with KernelCaptureOptions::allocations on. Called at report time.
  void use_allocations(std::function<std::vector<AllocationRecord>()> source) {
    const std::lock_guard<std::mutex> lock(mutex_);
    allocation_source_ = std::move(source);
  }

  void on_scope_begin(std::uint64_t instance_id) override {
    const std::lock_guard<std::mutex> lock(mutex_);
    tracker_.begin(instance_id, sample_and_keep());
    if (watching_pool()) {
      std::uint64_t zero = 0;  // the only value allowed: resets the mark to the current use
      fail_quietly(cudaMemPoolSetAttribute(options_.pool, cudaMemPoolAttrUsedMemHigh, &zero),
                   "cudaMemPoolSetAttribute(UsedMemHigh)");
    }
  }
  void on_scope_end(std::uint64_t instance_id) override {
    const std::lock_guard<std::mutex> lock(mutex_);
    tracker_.end(instance_id, sample_and_keep());
  }
  void on_reset() override {
    const std::lock_guard<std::mutex> lock(mutex_);
    tracker_.clear_finished();
    in_use_.clear();
  }
  void contribute(Report& report) override {
    std::function<std::vector<AllocationRecord>()> source;
    std::unordered_map<std::uint64_t, detail::InstanceMemory> finished;
    std::vector<MemoryUsePoint> in_use;
    {
      const std::lock_guard<std::mutex> lock(mutex_);
      source = allocation_source_;
      finished = tracker_.finished();
      in_use = in_use_;
      if (!problem_.empty()) diagnose(Severity::note, "memory watch: " + problem_);
      problem_.clear();
    }
    const std::vector<AllocationRecord> allocations = source ? source() : std::vector<AllocationRecord>{};
    detail::apply_memory_peaks(report, finished, allocations);
    report.memory_timeline = build_memory_timeline(report, std::move(in_use), allocations);
  }

 private:
  bool watching_pool() const { return options_.watch_pool && options_.pool != nullptr && pool_ok_; }

  // A sample that also goes on the report's memory timeline.
  detail::MemorySample sample_and_keep() {
    const detail::MemorySample now = sample();
    if (now.device_used >= 0) in_use_.push_back({host_now_ns(), now.device_used});
    return now;
  }

  // Runs on the scope's thread inside a destructor: errors are remembered and
  // the failing source switched off, never thrown.
  detail::MemorySample sample() {
    detail::MemorySample sample;
    std::size_t free_bytes = 0, total_bytes = 0;
    if (fail_quietly(cudaMemGetInfo(&free_bytes, &total_bytes), "cudaMemGetInfo"))
      sample.device_used = static_cast<std::int64_t>(total_bytes - free_bytes);
    if (watching_pool()) {
      std::uint64_t reserved = 0, high = 0;
      pool_ok_ =
          fail_quietly(cudaMemPoolGetAttribute(options_.pool, cudaMemPoolAttrReservedMemCurrent, &reserved),
                       "cudaMemPoolGetAttribute(ReservedMemCurrent)") &&
          fail_quietly(cudaMemPoolGetAttribute(options_.pool, cudaMemPoolAttrUsedMemHigh, &high),
                       "cudaMemPoolGetAttribute(UsedMemHigh)");
      if (pool_ok_) {
        sample.pool_reserved = static_cast<std::int64_t>(reserved);
        sample.pool_used_high = static_cast<std::int64_t>(high);
      }
    }
    return sample;
  }
  // true on success; otherwise remembers the first failure.
  bool fail_quietly(cudaError_t status, const char* call) {
    if (status == cudaSuccess) return true;
    if (problem_.empty()) problem_ = std::string(call) + " failed: " + cudaGetErrorString(status);
    return false;
  }

  MemoryWatchOptions options_;
  std::string why_inactive_;
  std::mutex mutex_;
  detail::MemoryPeakTracker tracker_;
  bool pool_ok_ = true;
  std::string problem_;
  std::function<std::vector<AllocationRecord>()> allocation_source_;
  std::vector<MemoryUsePoint> in_use_;  // every boundary sample since the last reset
};
#endif

GPUPROF_NAMESPACE_END
