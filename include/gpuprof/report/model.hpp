// gpuprof/report/model.hpp: the one report model every writer reads.
//
// A Report is a snapshot: the scope tree with per-node statistics, every scope
// instance (for traces), and, when kernel capture ran, every GPU activity.
// Writers live beside this file (table, csv, json, chrome_trace) and are
// reached through the member functions declared here.
#pragma once
#include <cstdint>
#include <iosfwd>
#include <string>
#include <vector>

#include "../config.hpp"
#include "../kernel_record.hpp"
#include "../stats.hpp"
#include "../work.hpp"

GPUPROF_NAMESPACE_BEGIN

// Where a scope's primary time came from.
enum class TimingSource { cuda_events, host_clock };

// One node of the call tree: every instance with the same path ("step/forward/attention").
struct ScopeNode {
  std::string path;          // names joined by '/', from the root
  std::string name;          // last component
  int parent = -1;           // index into Report::nodes; -1 for a root
  int depth = 0;             // 0 for a root
  std::uint64_t count = 0;   // instances
  Summary host_ms;           // host-clock durations, always present
  Summary gpu_ms;            // CUDA-event durations; n == 0 when not GPU-timed
  Work work;                 // declared work per instance (zeros if none)
  // Device memory high-water mark seen inside this scope, bytes; -1 if unknown.
  std::int64_t peak_device_bytes = -1;

  bool gpu_timed() const { return gpu_ms.n > 0; }
  const Summary& primary_ms() const { return gpu_timed() ? gpu_ms : host_ms; }
  double total_ms() const { return primary_ms().mean * static_cast<double>(primary_ms().n); }
};

// One execution of a scope.
struct ScopeInstance {
  std::uint64_t id = 0;        // unique in the process, > 0; kernels point here
  int node = -1;               // index into Report::nodes
  std::uint32_t thread = 0;    // small dense id of the host thread (0, 1, ...)
  std::int64_t host_begin_ns = 0;  // steady_clock nanoseconds
  std::int64_t host_end_ns = 0;
  double gpu_ms = -1;          // event-pair time; < 0 when not GPU-timed
};

struct Report {
  TimingSource timing_source = TimingSource::host_clock;
  std::string timing_note;     // why host clock was used, if it was ("no CUDA device: ...")
  std::string device_name;     // "" without a GPU
  std::vector<ScopeNode> nodes;            // depth-first order; parents before children
  std::vector<ScopeInstance> instances;    // in begin-time order
  std::vector<KernelRecord> kernels;       // empty unless kernel capture ran
  std::uint64_t dropped_kernel_records = 0;

  // Writers. Files are written to a temporary name and renamed into place, so
  // a failure leaves no half file; they throw gpuprof::Error with the path and
  // the reason when the path cannot be written.
  void print(std::ostream& out) const;           // terminal table of the scope tree
  std::string markdown() const;                  // the same table as GitHub markdown
  void write_markdown(const std::string& path) const;
  void write_csv(const std::string& path) const;
  void write_json(const std::string& path) const;  // schema: docs/report-schema.md
  void write_chrome_trace(const std::string& path) const;  // Perfetto / chrome://tracing
};

GPUPROF_NAMESPACE_END
