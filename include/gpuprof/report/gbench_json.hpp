// gpuprof/report/gbench_json.hpp: bench() results in Google Benchmark's JSON
// format (--benchmark_out_format=json), which CI dashboards such as
// github-action-benchmark and Google Benchmark's own compare.py read.
//
// ```cpp
// #include <gpuprof/report/gbench_json.hpp>
// void save(const gpuprof::BenchResult& result) {
//   gpuprof::write_gbench_json({{"train_step", result}}, "gbench.json", {gpuprof::capture_environment()});
// }
// ```
//
// The mapping: each sample is one repetition (run_type "iteration",
// iterations 1) with the GPU time as real_time and the host time as
// cpu_time, in milliseconds (real_time is the host time too when the result
// was timed with the host clock); then the aggregates mean, median, stddev
// (time) and cv (aggregate_unit "percentage", a fraction, as Google Benchmark
// writes it). The environment goes into "context" beside Google Benchmark's
// own keys.
#pragma once
#include <string>
#include <thread>
#include <vector>

#include <unistd.h>

#include "../atomic_file.hpp"
#include "../environment.hpp"
#include "../json_writer.hpp"
#include "../detail/file_format.hpp"
#include "bench_json.hpp"

GPUPROF_NAMESPACE_BEGIN

namespace detail {
inline std::string executable_path() {
  char path[4096];
  const ssize_t length = readlink("/proc/self/exe", path, sizeof path - 1);
  return length > 0 ? std::string(path, static_cast<std::size_t>(length)) : std::string();
}

inline void write_gbench_context(JsonWriter& json, const Environment& env) {
  json.begin_object()
      .member("date", env.time_utc)
      .member("host_name", env.host_name)
      .member("executable", executable_path())
      .member("num_cpus", std::thread::hardware_concurrency())
      .member("mhz_per_cpu", 0)
      .member("cpu_scaling_enabled", false)
      .key("caches")
      .begin_array()
      .end_array()
      .key("load_avg")
      .begin_array()
      .end_array()
      .member("library_build_type", env.build_type == "Debug" ? "debug" : "release")
      .member("gpu_name", env.gpu_name)
      .member("gpu_uuid", env.gpu_uuid)
      .member("compute_capability", env.compute_capability)
      .member("driver_version", env.driver_version)
      .member("cuda_runtime_version", env.cuda_runtime_version)
      .member("sm_clock_mhz_start", env.sm_clock_mhz_start)
      .member("sm_clock_mhz_end", env.sm_clock_mhz_end)
      .member("memory_clock_mhz_start", env.memory_clock_mhz_start)
      .member("memory_clock_mhz_end", env.memory_clock_mhz_end)
      .member("compiler", env.compiler)
      .member("compiler_flags", env.compiler_flags)
      .member("build_type", env.build_type)
      .member("git_revision", env.git_revision)
      .member("generator", "gpuprof")
      .end_object();
}
}  // namespace detail

inline std::string to_gbench_json(const std::vector<NamedBenchResult>& runs,
                                  const BenchFileOptions& options) {
  JsonWriter json;
  json.begin_object().key("context");
  detail::write_gbench_context(json, options.environment);
  json.key("benchmarks").begin_array();
  for (std::size_t family = 0; family < runs.size(); ++family) {
    const NamedBenchResult& run = runs[family];
    const BenchResult& r = run.result;
    const bool gpu = r.timing_source == TimingSource::cuda_events;
    const Summary& real = gpu ? r.gpu : r.host;
    const std::size_t repetitions = r.host_ms.size();
    const auto common = [&](const std::string& name, const char* run_type) -> JsonWriter& {
      return json.begin_object(JsonWriter::one_line)
          .member("name", name)
          .member("family_index", family)
          .member("per_family_instance_index", 0)
          .member("run_name", run.name)
          .member("run_type", run_type)
          .member("repetitions", repetitions)
          .member("threads", 1);
    };
    for (std::size_t i = 0; i < repetitions; ++i) {
      common(run.name, "iteration")
          .member("repetition_index", i)
          .member("iterations", 1)
          .member("real_time", gpu ? r.gpu_ms.at(i) : r.host_ms[i])
          .member("cpu_time", r.host_ms[i])
          .member("time_unit", "ms")
          .end_object();
    }
    const auto aggregate = [&](const char* name, const char* unit, double real_value, double cpu_value) {
      common(run.name + "_" + name, "aggregate")
          .member("aggregate_name", name)
          .member("aggregate_unit", unit)
          .member("iterations", repetitions)
          .member("real_time", real_value)
          .member("cpu_time", cpu_value)
          .member("time_unit", "ms")
          .end_object();
    };
    aggregate("mean", "time", real.mean, r.host.mean);
    aggregate("median", "time", real.median, r.host.median);
    aggregate("stddev", "time", real.stddev, r.host.stddev);
    aggregate("cv", "percentage", real.cv, r.host.cv);
  }
  json.end_array().end_object();
  return json.str() + "\n";
}

inline void write_gbench_json(const std::vector<NamedBenchResult>& runs, const std::string& path,
                              const BenchFileOptions& options) {
  write_file_atomically(path, to_gbench_json(runs, options));
}

// gpuprof.bench for "NAME.json", Google Benchmark's format for "NAME.gbench.json".
inline void write(const std::vector<NamedBenchResult>& runs, const std::string& path,
                  const BenchFileOptions& options) {
  detail::write_by_extension(path, "a list of bench() results",
                             {{".json", [&] { return to_bench_json(runs, options); }},
                              {".gbench.json", [&] { return to_gbench_json(runs, options); }}});
}

GPUPROF_NAMESPACE_END
