// scope_overhead: what a GPUPROF_SCOPE costs the host thread, in nanoseconds
// per scope, for each way of building and running it, against the raw
// operations it is built from, measured in the same run:
//   compiled out            GPUPROF_DISABLE (goal: 1 ns, the bare loop)
//   nvtx push/pop (raw)     NVTX alone, no tool attached
//   scope, NVTX only        set_nvtx_only(true)        goal: raw NVTX + 3 ns
//   steady_clock pair       two steady_clock reads, for reference
//   host tick pair (raw)    the two time stamps a timed scope takes
//   scope, host clock       set_gpu_timing(false)      goal: raw tick pair + 20 ns
//   handle scope, host      begin_scope() ... end(), timed with the block scope
//                           (20k scopes a run, as for events: the log stays in
//                           cache; 200k, a 17 MB log, is printed for reference)
//   cudaEventRecord pair    the two raw event records a GPU-timed scope adds
//   scope, CUDA events      the default on a GPU        goal: raw event pair + 300 ns
//   handle scope, events    begin_scope(name, stream) ... end(), beside it
//   cudaStreamIsCapturing   the capture check a GPU-timed scope makes, for reference
//   captured scope, GPU     GPU ns a scope captured into a graph adds to each
//                           replay (its two stamp kernels), for reference
// Each case: best and median of 15 runs of N scopes; goals compare best with
// best. A goal's scope row and its raw row are timed in alternation, run by
// run, so both see the same machine (clock frequency, a busy neighbour on a
// VM host) rather than one getting the calm half of the benchmark. Each timed
// run follows an untimed run of the same loop (a tenth of its iterations), so
// no case pays for the caches and branch predictors the previous case left
// behind: on the GPU machine's host a host-clock scope run straight after
// the clock-pair loops measured 7-9 ns a scope slower than one after a run of
// scopes. Without a GPU the event rows are reported as not available.
// Usage: scope_overhead [--json PATH]
#include <algorithm>
#include <cstring>
#include <functional>
#include <iostream>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <gpuprof/atomic_file.hpp>
#include <gpuprof/scope_clock.hpp>
#include <gpuprof/gpuprof.hpp>
#include <gpuprof/graph.hpp>
#include <gpuprof/json_writer.hpp>

#include "scope_loops.hpp"

namespace {

struct Row {
  Row(std::string case_name, int reference_row = -1, double margin = 0)
      : name(std::move(case_name)), reference(reference_row), margin_ns(margin) {}
  std::string name;
  int reference;        // the raw row this one's goal is relative to; -1: none
  double margin_ns;     // goal: at most the reference's best + this
  double goal_ns = -1;  // < 0: a reference row without a goal
  long iterations = 0;
  std::optional<double> min_ns, median_ns;  // empty: not available here
  std::string note;
};

constexpr int runs = 15;

// The profiler settings a case runs under.
struct Settings {
  bool nvtx_only = false;
  bool gpu_timing = true;
};

struct Case {
  Row& row;
  long iterations;
  std::function<void(long)> loop;
  Settings settings = {};
};

// Times each case's `loop(iterations)` `runs` times, the cases taking turns
// run by run; ns per iteration, best and median. Leaves the default settings.
void measure(const std::vector<Case>& cases) {
  auto& profiler = gpuprof::profiler();
  std::vector<std::vector<double>> per_scope(cases.size());
  for (int run = 0; run < runs; ++run) {
    for (std::size_t c = 0; c < cases.size(); ++c) {
      profiler.set_nvtx_only(cases[c].settings.nvtx_only);
      profiler.set_gpu_timing(cases[c].settings.gpu_timing);
      profiler.reset();
      cases[c].loop(std::max(cases[c].iterations / 10, 1L));  // warm-up, untimed
      profiler.reset();                                       // recorded instances do not pile up across runs
      const std::int64_t begin = gpuprof::host_now_ns();
      cases[c].loop(cases[c].iterations);
      per_scope[c].push_back(static_cast<double>(gpuprof::host_now_ns() - begin) /
                             static_cast<double>(cases[c].iterations));
    }
  }
  profiler.set_nvtx_only(false);
  profiler.set_gpu_timing(true);
  for (std::size_t c = 0; c < cases.size(); ++c) {
    std::sort(per_scope[c].begin(), per_scope[c].end());
    cases[c].row.iterations = cases[c].iterations;
    cases[c].row.min_ns = per_scope[c].front();
    cases[c].row.median_ns = per_scope[c][per_scope[c].size() / 2];
  }
}

void scope_loop(long iterations) {
  for (long i = 0; i < iterations; ++i) {
    GPUPROF_SCOPE("overhead");
    compiler_barrier();
  }
}

// The same scope through a handle (gpuprof::begin_scope), ended by a call.
void handle_scope_loop(long iterations) {
  for (long i = 0; i < iterations; ++i) {
    gpuprof::ScopeHandle scope = gpuprof::begin_scope("overhead");
    compiler_barrier();
    scope.end();
  }
}

void raw_nvtx_loop(long iterations) {
  static const gpuprof::NvtxName name("overhead raw");
  for (long i = 0; i < iterations; ++i) {
    name.push();
    gpuprof::nvtx_pop();
    compiler_barrier();
  }
}

template <std::int64_t (*read_clock)()>
void clock_pair_loop(long iterations) {
  std::int64_t sum = 0;
  for (long i = 0; i < iterations; ++i) {
    sum += read_clock() - read_clock();
    compiler_barrier();
  }
  if (sum > 0) std::cout << "";  // keeps the reads (the difference is never > 0)
}

#if GPUPROF_WITH_CUDA
void event_scope_loop(long iterations, gpuprof::Stream stream) {
  for (long i = 0; i < iterations; ++i) {
    GPUPROF_SCOPE("overhead", stream);
    compiler_barrier();
  }
}
void event_handle_scope_loop(long iterations, gpuprof::Stream stream) {
  for (long i = 0; i < iterations; ++i) {
    gpuprof::ScopeHandle scope = gpuprof::begin_scope("overhead", stream);
    compiler_barrier();
    scope.end();
  }
}
void raw_event_loop(long iterations, const gpuprof::EventPair& pair, gpuprof::Stream stream) {
  for (long i = 0; i < iterations; ++i) {
    pair.record_begin(stream);
    pair.record_end(stream);
    compiler_barrier();
  }
}
void capture_check_loop(long iterations, gpuprof::Stream stream) {
  for (long i = 0; i < iterations; ++i) {
    cudaStreamCaptureStatus capture = cudaStreamCaptureStatusNone;
    GPUPROF_CUDA_CHECK(cudaStreamIsCapturing(stream, &capture));
    compiler_barrier();
  }
}
#endif

#if GPUPROF_WITH_CUDA
// GPU ns per replay that one captured scope adds: graphs of `count` tiny
// memsets, with and without a scope around each, replayed back to back.
double captured_scope_gpu_ns(gpuprof::Stream stream) {
  constexpr int count = 100, replays = 50;
  void* scratch = nullptr;
  GPUPROF_CUDA_CHECK(cudaMalloc(&scratch, 4));
  const auto replay_ns = [&](bool scoped) {
    cudaGraph_t graph = nullptr;
    cudaGraphExec_t exec = nullptr;
    GPUPROF_CUDA_CHECK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal));
    for (int i = 0; i < count; ++i) {
      if (scoped) {
        GPUPROF_SCOPE("captured overhead", stream);
        GPUPROF_CUDA_CHECK(cudaMemsetAsync(scratch, i, 4, stream));
      } else {
        GPUPROF_CUDA_CHECK(cudaMemsetAsync(scratch, i, 4, stream));
      }
    }
    GPUPROF_CUDA_CHECK(cudaStreamEndCapture(stream, &graph));
    GPUPROF_CUDA_CHECK(cudaGraphInstantiate(&exec, graph, 0));
    GPUPROF_CUDA_CHECK(cudaGraphLaunch(exec, stream));  // uploads the graph
    GPUPROF_CUDA_CHECK(cudaStreamSynchronize(stream));
    const gpuprof::ScopedEventPair events;
    events->record_begin(stream);
    for (int r = 0; r < replays; ++r) gpuprof::launch_graph(exec, stream);
    events->record_end(stream);
    GPUPROF_CUDA_CHECK(cudaStreamSynchronize(stream));
    GPUPROF_CUDA_CHECK(cudaGraphExecDestroy(exec));
    GPUPROF_CUDA_CHECK(cudaGraphDestroy(graph));
    return 1e6 * events->elapsed_ms() / replays;
  };
  constexpr int graph_runs = 7;
  std::vector<double> added;
  for (int run = 0; run < graph_runs; ++run) added.push_back((replay_ns(true) - replay_ns(false)) / count);
  GPUPROF_CUDA_CHECK(cudaFree(scratch));
  std::sort(added.begin(), added.end());
  return added[added.size() / 2];
}
#endif

void write_json(const std::string& path, const std::vector<Row>& rows) {
  gpuprof::JsonWriter json;
  json.begin_object();
  json.member("benchmark", "scope_overhead");
  json.member("unit", "host nanoseconds per scope");
  json.member("runs", runs);
  json.member("device", gpuprof::profiler().device_name());
  json.member("timing_note", gpuprof::profiler().timing_note());
  json.key("rows").begin_array();
  for (const Row& row : rows) {
    json.begin_object(gpuprof::JsonWriter::one_line);
    json.member("case", row.name).member("available", row.min_ns.has_value());
    if (row.goal_ns >= 0) json.member("goal_ns", row.goal_ns);
    if (row.reference >= 0) json.member("goal_reference", rows[static_cast<std::size_t>(row.reference)].name);
    if (row.min_ns) {
      json.member("iterations", row.iterations).member("min_ns", *row.min_ns);
      json.member("median_ns", *row.median_ns);
      if (row.goal_ns >= 0) json.member("meets_goal", *row.min_ns <= row.goal_ns);
    }
    json.member("note", row.note);
    json.end_object();
  }
  json.end_array().end_object();
  gpuprof::write_file_atomically(path, json.str() + "\n");
}

}  // namespace

int main(int argc, char** argv) {
  std::string json_path;
  const char* usage =
      "usage: scope_overhead [--json PATH]\n"
      "What a GPUPROF_SCOPE costs the host thread, per way of building and running it, against\n"
      "the raw operations it is built from (without a GPU the event rows are not available).\n"
      "  --json PATH  also write the table as JSON\n"
      "  -h, --help   this text\n"
      "exit status: 0 done; 1 a run failed; 2 bad arguments\n";
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--help") == 0 || std::strcmp(argv[i], "-h") == 0) {
      std::cout << usage;
      return 0;
    }
    if (std::strcmp(argv[i], "--json") == 0 && i + 1 < argc) {
      json_path = argv[++i];
    } else {
      std::cerr << "scope_overhead: bad arguments\n" << usage;
      return 2;
    }
  }
  try {
    auto& profiler = gpuprof::profiler();
    const bool gpu = profiler.timing_source() == gpuprof::TimingSource::cuda_events;
    enum {
      disabled,
      raw_nvtx,
      nvtx_only,
      steady_pair,
      tick_pair,
      host_scope,
      host_handle_scope,
      host_scope_big_log,
      raw_events,
      event_scope,
      event_handle_scope,
      capture_check,
      captured_gpu
    };
    std::vector<Row> rows{{"compiled out (GPUPROF_DISABLE)"},
                          {"nvtx push/pop (raw)"},
                          {"scope, NVTX only (set_nvtx_only(true))", raw_nvtx, 3},
                          {"steady_clock::now() pair (raw)"},
                          {"host tick pair (raw)"},
                          {"scope, host clock (set_gpu_timing(false))", tick_pair, 20},
                          {"handle scope, host clock (begin_scope/end)"},
                          {"scope, host clock, 200k records (17 MB log)"},
                          {"cudaEventRecord pair (raw)"},
                          {"scope, NVTX + CUDA event pair", raw_events, 300},
                          {"handle scope, NVTX + CUDA event pair"},
                          {"cudaStreamIsCapturing (raw)"},
                          {"captured scope: GPU ns added per replay"}};
    rows[disabled].goal_ns = 1;
    const Settings nvtx_only_mode{true, true}, host_clock_mode{false, false};
    measure({{rows[disabled], 2'000'000, disabled_scope_loop},
             {rows[raw_nvtx], 2'000'000, raw_nvtx_loop},
             {rows[nvtx_only], 2'000'000, scope_loop, nvtx_only_mode}});
    measure({{rows[steady_pair], 2'000'000, clock_pair_loop<gpuprof::host_now_ns>},
             {rows[tick_pair], 2'000'000, clock_pair_loop<gpuprof::scope_clock_ticks>},
             {rows[host_scope], 20'000, scope_loop, host_clock_mode},
             {rows[host_handle_scope], 20'000, handle_scope_loop, host_clock_mode}});
    rows[tick_pair].note = gpuprof::scope_clock_is_tsc() ? "TSC" : "steady_clock (no invariant TSC)";
    measure({{rows[host_scope_big_log], 200'000, scope_loop, host_clock_mode}});
    rows[host_scope_big_log].note = "a log beyond the caches: the loop waits on DRAM writes";
    if (gpu) {
#if GPUPROF_WITH_CUDA
      gpuprof::Stream stream = nullptr;
      GPUPROF_CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
      const gpuprof::ScopedEventPair pair;
      measure({{rows[raw_events], 20'000, [&](long n) { raw_event_loop(n, *pair, stream); }},
               {rows[event_scope], 20'000, [stream](long n) { event_scope_loop(n, stream); }},
               {rows[event_handle_scope], 20'000, [stream](long n) { event_handle_scope_loop(n, stream); }}});
      measure({{rows[capture_check], 200'000, [stream](long n) { capture_check_loop(n, stream); }}});
      const double added = captured_scope_gpu_ns(stream);
      rows[captured_gpu].min_ns = rows[captured_gpu].median_ns = added;
      rows[captured_gpu].note = "median of 7: graphs of 100 memsets, scoped vs not";
      GPUPROF_CUDA_CHECK(cudaStreamSynchronize(stream));
      GPUPROF_CUDA_CHECK(cudaStreamDestroy(stream));
#endif
    } else {
      rows[raw_events].note = rows[event_scope].note = rows[event_handle_scope].note =
          rows[capture_check].note = rows[captured_gpu].note = "not available: " + profiler.timing_note();
    }
    for (Row& row : rows)
      if (row.reference >= 0 && rows[static_cast<std::size_t>(row.reference)].min_ns)
        row.goal_ns = *rows[static_cast<std::size_t>(row.reference)].min_ns + row.margin_ns;

    std::cout << "gpuprof scope overhead: host ns per scope, best (median) of " << runs << " runs\n";
    std::cout << "device: " << (gpu ? profiler.device_name() : "none (" + profiler.timing_note() + ")")
              << "\n\n";
    for (const Row& row : rows) {
      char line[260];
      if (row.min_ns && row.goal_ns < 0)
        std::snprintf(line, sizeof line, "%-42s %9.1f (%9.1f)  reference %s", row.name.c_str(), *row.min_ns,
                      *row.median_ns, row.note.c_str());
      else if (row.min_ns && row.reference >= 0)
        std::snprintf(line, sizeof line, "%-42s %9.1f (%9.1f)  goal <= %.1f (raw %.1f + %g) %s",
                      row.name.c_str(), *row.min_ns, *row.median_ns, row.goal_ns, row.goal_ns - row.margin_ns,
                      row.margin_ns, *row.min_ns <= row.goal_ns ? "ok" : "MISSED");
      else if (row.min_ns)
        std::snprintf(line, sizeof line, "%-42s %9.1f (%9.1f)  goal <= %-6g %s", row.name.c_str(),
                      *row.min_ns, *row.median_ns, row.goal_ns, *row.min_ns <= row.goal_ns ? "ok" : "MISSED");
      else std::snprintf(line, sizeof line, "%-42s %s", row.name.c_str(), row.note.c_str());
      std::cout << line << "\n";
    }
    if (!json_path.empty()) write_json(json_path, rows);
  } catch (const std::exception& error) {
    std::cerr << "scope_overhead: " << error.what() << "\n";
    return 1;
  }
  return 0;
}
