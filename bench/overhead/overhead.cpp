// scope_overhead: what a GPUPROF_SCOPE costs the host thread, in nanoseconds
// per scope, for each way of building and running it:
//   compiled out          GPUPROF_DISABLE (goal: 0, the bare loop)
//   nvtx push/pop (raw)   NVTX alone, no tool attached (goal <= 20 ns)
//   steady_clock pair     two steady_clock reads, for reference
//   host tick pair        the two time stamps every scope takes (detail::host_ticks():
//                         the TSC where it is invariant, else steady_clock): its floor
//   scope, NVTX only      set_gpu_timing(false): NVTX + host clock + record (goal <= 20 ns)
//   scope, NVTX + events  the default on a GPU machine (goal <= 3 us)
//   cudaEventRecord pair  the two raw event records a scope adds, for reference
//   cudaStreamIsCapturing the capture check a GPU-timed scope makes, for reference
// Each case: best and median of 7 runs of N scopes. Without a GPU the event
// rows are reported as not available, with the reason.
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
#include <gpuprof/detail/tick_clock.hpp>
#include <gpuprof/gpuprof.hpp>
#include <gpuprof/json_writer.hpp>

#include "scope_loops.hpp"

namespace {

struct Row {
  Row(std::string case_name, double goal) : name(std::move(case_name)), goal_ns(goal) {}
  std::string name;
  double goal_ns;  // < 0: a reference row without a goal
  long iterations = 0;
  std::optional<double> min_ns, median_ns;  // empty: not available here
  std::string note;
};

constexpr int runs = 7;

// Times `loop(iterations)` `runs` times; ns per iteration, best and median.
void measure(Row& row, long iterations, const std::function<void(long)>& loop) {
  std::vector<double> per_scope;
  for (int run = 0; run < runs; ++run) {
    gpuprof::profiler().reset();  // recorded instances do not pile up across runs
    const std::int64_t begin = gpuprof::host_now_ns();
    loop(iterations);
    per_scope.push_back(static_cast<double>(gpuprof::host_now_ns() - begin) / static_cast<double>(iterations));
  }
  std::sort(per_scope.begin(), per_scope.end());
  row.iterations = iterations;
  row.min_ns = per_scope.front();
  row.median_ns = per_scope[per_scope.size() / 2];
}

void host_scope_loop(long iterations) {
  for (long i = 0; i < iterations; ++i) {
    GPUPROF_SCOPE("overhead");
    compiler_barrier();
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
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--json") == 0 && i + 1 < argc) {
      json_path = argv[++i];
    } else {
      std::cerr << "usage: scope_overhead [--json PATH]\n";
      return 2;
    }
  }
  try {
    auto& profiler = gpuprof::profiler();
    const bool gpu = profiler.timing_source() == gpuprof::TimingSource::cuda_events;
    std::vector<Row> rows{{"compiled out (GPUPROF_DISABLE)", 1},
                          {"nvtx push/pop (raw)", 20},
                          {"steady_clock::now() pair (raw)", -1},
                          {"host tick pair (raw)", -1},
                          {"scope, NVTX only (set_gpu_timing(false))", 20},
                          {"scope, NVTX + CUDA event pair", 3000},
                          {"cudaEventRecord pair (raw)", -1},
                          {"cudaStreamIsCapturing (raw)", -1}};
    measure(rows[0], 2'000'000, disabled_scope_loop);
    measure(rows[1], 2'000'000, raw_nvtx_loop);
    measure(rows[2], 2'000'000, clock_pair_loop<gpuprof::host_now_ns>);
    measure(rows[3], 2'000'000, clock_pair_loop<gpuprof::detail::host_ticks>);
    rows[3].note = gpuprof::detail::ticks_are_tsc() ? "TSC" : "steady_clock (no invariant TSC)";
    profiler.set_gpu_timing(false);
    measure(rows[4], 200'000, host_scope_loop);
    profiler.set_gpu_timing(true);
    if (gpu) {
#if GPUPROF_WITH_CUDA
      gpuprof::Stream stream = nullptr;
      GPUPROF_CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
      measure(rows[5], 20'000, [stream](long n) { event_scope_loop(n, stream); });
      const gpuprof::ScopedEventPair pair;
      measure(rows[6], 20'000, [&](long n) { raw_event_loop(n, *pair, stream); });
      measure(rows[7], 200'000, [stream](long n) { capture_check_loop(n, stream); });
      GPUPROF_CUDA_CHECK(cudaStreamSynchronize(stream));
      GPUPROF_CUDA_CHECK(cudaStreamDestroy(stream));
#endif
    } else {
      rows[5].note = rows[6].note = rows[7].note = "not available: " + profiler.timing_note();
    }

    std::cout << "gpuprof scope overhead: host ns per scope, best (median) of " << runs << " runs\n";
    std::cout << "device: " << (gpu ? profiler.device_name() : "none (" + profiler.timing_note() + ")") << "\n\n";
    for (const Row& row : rows) {
      char line[200];
      if (row.min_ns && row.goal_ns < 0)
        std::snprintf(line, sizeof line, "%-42s %9.1f (%9.1f)  reference %s", row.name.c_str(), *row.min_ns,
                      *row.median_ns, row.note.c_str());
      else if (row.min_ns)
        std::snprintf(line, sizeof line, "%-42s %9.1f (%9.1f)  goal <= %-6g %s", row.name.c_str(), *row.min_ns,
                      *row.median_ns, row.goal_ns, *row.min_ns <= row.goal_ns ? "ok" : "MISSED");
      else
        std::snprintf(line, sizeof line, "%-42s %s", row.name.c_str(), row.note.c_str());
      std::cout << line << "\n";
    }
    if (!json_path.empty()) write_json(json_path, rows);
  } catch (const std::exception& error) {
    std::cerr << "scope_overhead: " << error.what() << "\n";
    return 1;
  }
  return 0;
}
