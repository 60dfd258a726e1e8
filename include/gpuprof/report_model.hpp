// gpuprof/report_model.hpp: the one report model every writer reads.
//
// A Report is a snapshot: the scope tree with per-node statistics over every
// scope instance, the newest instances (for traces), and, when kernel
// capture ran, the newest GPU activities with aggregates over all of them.
// It is plain data: the writers are free functions in report/ (report.hpp
// includes them all), the readers in report/read_json.hpp.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "config.hpp"
#include "counter_data.hpp"
#include "environment.hpp"
#include "kernel_aggregate.hpp"
#include "kernel_record.hpp"
#include "memory_timeline.hpp"
#include "rank.hpp"
#include "roofline.hpp"
#include "stats.hpp"
#include "work.hpp"

GPUPROF_NAMESPACE_BEGIN

// Where a scope's primary time came from.
enum class TimingSource { cuda_events, host_clock };

// "cuda_events" / "host_clock": the spelling the JSON and CSV writers use.
inline const char* timing_source_name(TimingSource source) {
  return source == TimingSource::cuda_events ? "cuda_events" : "host_clock";
}

// One node of the call tree: every instance with the same path ("step/forward/attention").
struct ScopeNode {
  std::string path;         // names joined by '/', from the root
  std::string name;         // last component
  int parent = -1;          // index into Report::nodes; -1 for a root
  int depth = 0;            // 0 for a root
  std::uint64_t count = 0;  // instances
  // Instances still running when the report was taken: not in count or the
  // statistics (a scope around the report() call, another thread's work).
  std::uint64_t open_instances = 0;
  Summary host_ms;  // host-clock durations, always present
  Summary gpu_ms;   // CUDA-event durations; n == 0 when not GPU-timed
  Work work;        // mean declared work per instance (zeros if none)
  // The first instance left out as warm-up (Profiler::set_warmup), ms of its
  // primary time: the cold step; -1 when none was left out.
  double cold_ms = -1;
  // Device memory high-water mark seen inside this scope, bytes; -1 if unknown.
  std::int64_t peak_device_bytes = -1;
  // PyTorch's caching allocator inside this scope (gpuprof.TorchMemoryWatch):
  // the peak of its allocated bytes (torch.cuda.max_memory_allocated's sense)
  // and its reserved bytes at that scope's end, highest over executions; -1 if unknown.
  std::int64_t peak_allocated_bytes = -1;
  std::int64_t reserved_bytes = -1;

  bool gpu_timed() const { return gpu_ms.n > 0; }
  const Summary& primary_ms() const { return gpu_timed() ? gpu_ms : host_ms; }
  double total_ms() const { return primary_ms().mean * static_cast<double>(primary_ms().n); }

  // Rates of the declared work per instance over the mean primary time; 0 when
  // that work is not declared or no time was measured.
  double tflop_per_s() const { return per_second(work.flops) / 1e12; }
  double gb_per_s() const { return per_second(work.bytes) / 1e9; }
  double tokens_per_s() const { return per_second(work.tokens); }
  // Arithmetic intensity, FLOPs per byte moved; 0 unless both are declared.
  double flops_per_byte() const { return work.bytes > 0 ? work.flops / work.bytes : 0.0; }

 private:
  double per_second(double amount) const {
    const double seconds = primary_ms().mean / 1e3;
    return amount > 0 && seconds > 0 ? amount / seconds : 0.0;
  }
};

// One execution of a scope.
struct ScopeInstance {
  std::uint64_t id = 0;            // unique in the process, > 0; kernels point here
  int node = -1;                   // index into Report::nodes
  std::uint32_t thread = 0;        // small dense id of the host thread (0, 1, ...)
  std::int64_t host_begin_ns = 0;  // steady_clock nanoseconds
  std::int64_t host_end_ns = 0;
  double gpu_ms = -1;  // event-pair time; < 0 when not GPU-timed
};

struct Report {
  TimingSource timing_source = TimingSource::host_clock;
  std::string timing_note;       // why host clock was used, if it was ("no CUDA device: ...")
  std::string device_name;       // "" without a GPU
  std::vector<ScopeNode> nodes;  // depth-first order; parents before children
  // In begin-time order: the newest instances of the run, up to the trace
  // window (Profiler::set_trace_window; all of them in full-trace mode).
  std::vector<ScopeInstance> instances;
  // Every instance the nodes count, `instances` or not: the trace holds
  // the last instances.size() of recorded_instances.
  std::uint64_t recorded_instances = 0;
  // Empty unless kernel capture ran. In capture order: the newest records,
  // up to the kernel window (KernelCapture::set_window; all of them in
  // full-trace mode).
  std::vector<KernelRecord> kernels;
  // Every record capture folded, `kernels` or not (0: `kernels` is all of
  // them, as in reports read from files that predate the window), and per
  // (scope path, name, kind) their aggregates. Summaries read the
  // aggregates only where records left the window (kernels_cut()).
  std::uint64_t recorded_kernels = 0;
  std::vector<KernelAggregate> kernel_aggregates;
  std::uint64_t dropped_kernel_records = 0;
  // Scope instances that began during a bench() cold call or warm-up
  // (BenchOptions::keep_warmup_scopes off), or were the first
  // warmup_root_instances instances of a root scope or inside one
  // (Profiler::set_warmup), left out of nodes and instances.
  std::uint64_t warmup_instances_left_out = 0;
  // Profiler::set_warmup's count in force (0: none).
  std::uint64_t warmup_root_instances = 0;
  Environment environment;         // where it ran (environment.hpp)
  RankInfo rank;                   // which process of a multi-process run (rank.hpp)
  MemoryTimeline memory_timeline;  // empty unless built (build_memory_timeline.hpp)
  // Hardware counters per scope path (CounterCapture) and the card's roofs
  // they are placed under (report/scope_counters.hpp); empty unless set.
  CounterSet counters;
  RooflineCeilings ceilings;

  // "trace: last 100000 of 3700000 instances" when the trace holds fewer
  // instances than the nodes count, else "".
  std::string trace_note() const {
    if (recorded_instances <= instances.size()) return "";
    return "trace: last " + std::to_string(instances.size()) + " of " + std::to_string(recorded_instances) +
           " instances";
  }

  bool kernels_cut() const { return recorded_kernels > kernels.size(); }
  // "kernels: last 20000 of 1500000 records" when records left the window, else "".
  std::string kernel_note() const {
    if (!kernels_cut()) return "";
    return "kernels: last " + std::to_string(kernels.size()) + " of " + std::to_string(recorded_kernels) +
           " records";
  }

  // A node's total time as a percentage of its parent's; -1 for a root or a
  // parent without time.
  double percent_of_parent(std::size_t node) const {
    const int parent = nodes.at(node).parent;
    if (parent < 0) return -1;
    const double parent_total = nodes.at(static_cast<std::size_t>(parent)).total_ms();
    return parent_total > 0 ? 100 * nodes[node].total_ms() / parent_total : -1;
  }
};

GPUPROF_NAMESPACE_END
