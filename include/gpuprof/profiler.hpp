// gpuprof/profiler.hpp: the process-wide profiler that scopes record into.
//
//   gpuprof::Report r = gpuprof::profiler().report();   // call tree + statistics
//   r.print(std::cout);
//
// report() reads back every pending CUDA-event pair (one device
// synchronization, and only if some pair is still pending), then builds the
// call tree, depth-first, with host and GPU Summary per node. Scopes may keep
// running on other threads meanwhile: the report is a snapshot of what had
// finished. ScopeObserver (declared in detail/scope_observer.hpp) lets kernel
// capture and memory tracking follow scopes and add to the report.
#pragma once
#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "config.hpp"
#include "detail/build_report.hpp"
#include "detail/recorder.hpp"
#include "detail/scope_observer.hpp"
#include "report.hpp"
#include "scope.hpp"

GPUPROF_NAMESPACE_BEGIN

class Profiler {
 public:
  // Resolves pending GPU times and returns a snapshot of everything recorded
  // since the start (or the last reset()).
  Report report();
  // Forgets every finished instance. Scopes open at the time are recorded
  // when they close.
  void reset();

  // cuda_events when a device is usable and GPU timing is on; host_clock
  // otherwise, with timing_note() saying why.
  TimingSource timing_source() const;
  std::string timing_note() const;
  const std::string& device_name() const { return detail::recorder().device().name; }
  // false: scopes and bench use the host clock only (NVTX ranges stay).
  void set_gpu_timing(bool enabled) { detail::recorder().set_gpu_timing(enabled); }

  // Observers are called from every thread that opens a scope; keep them
  // alive (and thread-safe) until remove_observer returns and no scope that
  // began while they were registered is still open. At most 8 at once.
  void add_observer(ScopeObserver* observer) { detail::recorder().add_observer(observer); }
  void remove_observer(ScopeObserver* observer) { detail::recorder().remove_observer(observer); }

 private:
  friend Profiler& profiler();
  // Probes the device (and says so) up front; the clocks at start go into reports.
  Profiler() {
    detail::recorder();
    clocks_at_start();
  }
};

inline Profiler& profiler() {
  static Profiler instance;
  return instance;
}

inline TimingSource Profiler::timing_source() const {
  return detail::recorder().gpu_timing() ? TimingSource::cuda_events : TimingSource::host_clock;
}

inline std::string Profiler::timing_note() const {
  const detail::Recorder& recorder = detail::recorder();
  if (!recorder.device().usable) return recorder.device().reason;
  if (!recorder.gpu_timing_requested()) return "GPU timing turned off with set_gpu_timing(false)";
  return "";
}

inline Report Profiler::report() {
  detail::Recorder& recorder = detail::recorder();
  std::vector<detail::InstanceSnapshot> instances;
  const detail::TickConverter ticks = recorder.tick_clock().converter();
#if GPUPROF_WITH_CUDA
  bool synchronized = false;  // one device synchronization covers every pending pair
#endif
  recorder.for_each_thread([&](detail::ThreadState& thread) {
    const detail::ReadingGuard guard(thread.records);
    const std::uint64_t end = thread.records.published();
    for (std::uint64_t i = thread.discard_before.load(std::memory_order_relaxed); i < end; ++i) {
      const detail::InstanceRecord& record = thread.records.at(i);
      detail::InstanceSnapshot snapshot;
      snapshot.id = record.id;
      snapshot.node = record.node;
      snapshot.thread = thread.thread_id;
      snapshot.host_begin_ns = ticks.to_ns(record.host_begin_ticks);
      snapshot.host_end_ns = ticks.to_ns(record.host_end_ticks);
      snapshot.work = record.work;
      snapshot.gpu_ms = record.gpu_ms;
#if GPUPROF_WITH_CUDA
      // The pair stays with its thread, which returns it to its pool later.
      if (record.gpu_pending) {
        if (!synchronized) GPUPROF_CUDA_CHECK(cudaDeviceSynchronize());
        synchronized = true;
        snapshot.gpu_ms = record.events.elapsed_ms();
      }
#endif
      instances.push_back(snapshot);
    }
  });

  Report report;
  report.timing_source = timing_source();
  report.device_name = recorder.device().name;
  report.timing_note = timing_note();
  report.environment = capture_environment();
  const std::size_t host_only = static_cast<std::size_t>(std::count_if(
      instances.begin(), instances.end(), [](const detail::InstanceSnapshot& i) { return i.gpu_ms < 0; }));
  if (report.timing_source == TimingSource::cuda_events && host_only > 0) {
    report.timing_note = std::to_string(host_only) + " of " + std::to_string(instances.size()) +
                         " scope instance(s) have host time only (recorded during CUDA graph capture "
                         "or while GPU timing was off)";
    const auto [lost, reason] = recorder.lost_gpu_time();
    if (lost > 0)
      report.timing_note += "; " + std::to_string(lost) + " lost their end event: " + reason;
  }
  detail::build_scope_tree(
      recorder.nodes_snapshot(), [&](std::uint32_t id) { return recorder.names().text(id); },
      std::move(instances), report);

  for (int slot = 0; slot < detail::Recorder::max_observers; ++slot)
    if (ScopeObserver* observer = recorder.observer(slot)) observer->contribute(report);
  return report;
}

inline void Profiler::reset() {
  for (int slot = 0; slot < detail::Recorder::max_observers; ++slot)
    if (ScopeObserver* observer = detail::recorder().observer(slot)) observer->on_reset();
  detail::recorder().for_each_thread([](detail::ThreadState& thread) {
    const detail::ReadingGuard guard(thread.records);
    thread.discard_before.store(thread.records.published(), std::memory_order_relaxed);
    thread.reset_pending.store(true, std::memory_order_release);
  });
}

GPUPROF_NAMESPACE_END
