// long_run_gpu: a GPU training loop's scopes and kernel capture left on for
// the whole run, with the kernel window (default 20,000 records) against the
// full trace (GPUPROF_FULL_TRACE=1: every scope instance and kernel record
// kept). One step is a `step` scope holding `norm`, `attention` and `mlp`,
// each launching one kernel that spins a fixed GPU time (4 event-timed
// scopes, 3 kernels a step); the kernels are long enough that the GPU, not
// the host's launches, sets the step's time, so the two modes' `step`
// medians compare the timing and not the host. Each mode runs in a child
// process (its own peak RSS and CUDA context), with report() every
// --report-every steps as a run that logs would, then once at the end;
// --pairs N runs N pairs in ABBA order, so that a drift between processes
// falls on both modes, and compares the medians pair by pair.
// Prints a table and, with --json, writes it; never a timed test.
//
//   long_run_gpu [--steps N] [--report-every N] [--kernel-us U] [--pairs N] [--json PATH]
//
// Exit status: 0 done; 1 a CUDA or CUPTI call failed; 2 bad arguments; 3 no
// usable GPU, or kernel capture unavailable.
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <sstream>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include <gpuprof/atomic_file.hpp>
#include <gpuprof/cupti.hpp>
#include <gpuprof/device.hpp>
#include <gpuprof/json_writer.hpp>
#include <gpuprof/kernel_summary.hpp>
#include <gpuprof/profiler.hpp>
#include <gpuprof/report.hpp>
#include <gpuprof/scope.hpp>

#include "child_case.hpp"

namespace {

constexpr const char* usage =
    "usage: long_run_gpu [--steps N] [--report-every N] [--kernel-us U] [--pairs N] [--json PATH]\n"
    "A GPU loop of N steps (a `step` scope holding 3 scopes, each launching one kernel) with\n"
    "kernel capture on, run with the default kernel window and with the full trace\n"
    "(GPUPROF_FULL_TRACE=1), each in a child process: memory, report() and JSON cost, records\n"
    "kept, and the `step` scope's median GPU time in both.\n"
    "  --steps N         steps measured (default 100000; 1000 warm-up steps come first)\n"
    "  --report-every N  report() every N steps (default 1000; 0: only at the end)\n"
    "  --kernel-us U     GPU time each kernel spins, microseconds (default 20)\n"
    "  --pairs N         pairs of runs, window and full trace, in ABBA order; the verdict is the\n"
    "                    median of the pairs' differences (default 1)\n"
    "  --json PATH       also write the results as JSON\n"
    "  -h, --help        this text\n"
    "exit status: 0 done; 1 a CUDA or CUPTI call failed; 2 bad arguments; 3 no usable GPU, or\n"
    "kernel capture unavailable\n";

struct Options {
  bool help = false;
  long steps = 100'000;
  long report_every = 1'000;
  long kernel_us = 20;
  long pairs = 1;
  std::string json_path;
};

Options parse(int argc, char** argv) {
  Options options;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    const auto value = [&](long minimum) {
      if (i + 1 >= argc) throw std::invalid_argument(arg + " needs a value");
      char* end = nullptr;
      const long parsed = std::strtol(argv[++i], &end, 10);
      if (argv[i][0] == '\0' || *end != '\0' || parsed < minimum)
        throw std::invalid_argument(arg + " needs a whole number of at least " + std::to_string(minimum));
      return parsed;
    };
    if (arg == "--help" || arg == "-h") options.help = true;
    else if (arg == "--steps") options.steps = value(1);
    else if (arg == "--report-every") options.report_every = value(0);
    else if (arg == "--kernel-us") options.kernel_us = value(0);
    else if (arg == "--pairs") options.pairs = value(1);
    else if (arg == "--json") {
      if (i + 1 >= argc) throw std::invalid_argument("--json needs a path");
      options.json_path = argv[++i];
    } else throw std::invalid_argument("unknown argument " + arg);
  }
  return options;
}

__device__ long long global_timer_ns() {
  long long now;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
  return now;
}
__global__ void spin_kernel(long long duration_ns) {
  const long long start = global_timer_ns();
  while (global_timer_ns() - start < duration_ns) {
  }
}

constexpr int scopes_per_step = 4, kernels_per_step = 3;
constexpr int warmup_steps = 1'000;

void one_step(cudaStream_t stream, long long kernel_ns) {
  GPUPROF_SCOPE("step", stream);
  {
    GPUPROF_SCOPE("norm", stream);
    spin_kernel<<<1, 32, 0, stream>>>(kernel_ns);
  }
  {
    GPUPROF_SCOPE("attention", stream);
    spin_kernel<<<1, 32, 0, stream>>>(kernel_ns);
  }
  {
    GPUPROF_SCOPE("mlp", stream);
    spin_kernel<<<1, 32, 0, stream>>>(kernel_ns);
  }
  GPUPROF_CUDA_CHECK(cudaGetLastError());
}

// What a mode measured, by name, in the order the JSON lists it.
struct Figures {
  std::vector<std::pair<std::string, double>> items;
  void set(const std::string& key, double value) { items.emplace_back(key, value); }
  double at(const std::string& key) const {
    for (const auto& [name, value] : items)
      if (name == key) return value;
    throw std::logic_error("long_run_gpu: no figure " + key);
  }
  std::string text() const {
    std::ostringstream out;
    out.precision(17);
    for (const auto& [name, value] : items) out << name << ' ' << value << '\n';
    return out.str();
  }
  static Figures parse(const std::string& text) {
    Figures figures;
    std::istringstream in(text);
    std::string name;
    for (double value = 0; in >> name >> value;) figures.set(name, value);
    return figures;
  }
};

// One mode, in its own child process (nothing of CUDA or the profiler exists
// before: the trace switches are read when they are first made).
Figures run_mode(bool full_trace, const Options& options, const std::string& json_path) {
  unsetenv("GPUPROF_TRACE_WINDOW");
  if (full_trace) setenv("GPUPROF_FULL_TRACE", "1", 1);
  else unsetenv("GPUPROF_FULL_TRACE");
  if (const gpuprof::DeviceStatus device = gpuprof::device_status(); !device.usable) {
    std::fprintf(stderr, "long_run_gpu: %s\n", device.reason.c_str());
    _exit(3);
  }
  gpuprof::KernelCapture capture;
  if (!capture.active()) _exit(3);  // the capture said why on stderr
  gpuprof::Profiler& profiler = gpuprof::profiler();
  if (full_trace != (capture.window() == 0 && profiler.trace_window() == 0))
    throw std::runtime_error("long_run_gpu: GPUPROF_FULL_TRACE=" + std::string(full_trace ? "1" : "unset") +
                             " left the kernel window at " + std::to_string(capture.window()) +
                             " and the trace window at " + std::to_string(profiler.trace_window()));
  const long long kernel_ns = options.kernel_us * 1000;
  cudaStream_t stream = nullptr;
  GPUPROF_CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  for (int i = 0; i < warmup_steps; ++i) one_step(stream, kernel_ns);
  GPUPROF_CUDA_CHECK(cudaStreamSynchronize(stream));
  profiler.reset();  // clears the capture too
  (void)profiler.report();

  Figures f;
  f.set("full_trace", full_trace ? 1 : 0);
  f.set("kernel_window", static_cast<double>(capture.window()));
  f.set("trace_window", static_cast<double>(profiler.trace_window()));
  f.set("steps", static_cast<double>(options.steps));
  f.set("report_every", static_cast<double>(options.report_every));
  const double before = long_run::resident_mib();
  double periodic_report_s = 0;
  const auto start = long_run::Clock::now();
  for (long i = 1; i <= options.steps; ++i) {
    one_step(stream, kernel_ns);
    if (options.report_every > 0 && i % options.report_every == 0) {
      const auto at = long_run::Clock::now();
      (void)profiler.report();
      periodic_report_s += long_run::seconds_since(at);
    }
  }
  GPUPROF_CUDA_CHECK(cudaStreamSynchronize(stream));
  f.set("loop_s", long_run::seconds_since(start) - periodic_report_s);
  f.set("memory_growth_mib", long_run::resident_mib() - before);
  f.set("periodic_report_total_s", periodic_report_s);
  const auto report_start = long_run::Clock::now();
  const gpuprof::Report report = profiler.report();
  f.set("final_report_s", long_run::seconds_since(report_start));
  GPUPROF_CUDA_CHECK(cudaStreamDestroy(stream));

  f.set("scope_instances", static_cast<double>(report.recorded_instances));
  f.set("instances_kept", static_cast<double>(report.instances.size()));
  f.set("kernels_launched", static_cast<double>(options.steps * kernels_per_step));
  f.set("recorded_kernels",
        static_cast<double>(std::max<std::uint64_t>(report.recorded_kernels, report.kernels.size())));
  f.set("kernels_kept", static_cast<double>(report.kernels.size()));
  f.set("kernel_aggregates", static_cast<double>(report.kernel_aggregates.size()));
  f.set("dropped_kernel_records", static_cast<double>(report.dropped_kernel_records));
  // Kernels the summaries charge to a scope inside `step`: all of them, unless
  // a record was folded after its scope instance left the trace window.
  std::uint64_t in_scope = 0;
  for (const gpuprof::KernelSummaryRow& row : gpuprof::kern_sum(report, "step")) in_scope += row.instances;
  f.set("kernels_in_step_scopes", static_cast<double>(in_scope));

  int step = -1;
  for (std::size_t i = 0; i < report.nodes.size(); ++i)
    if (report.nodes[i].path == "step") step = static_cast<int>(i);
  if (step < 0) throw std::runtime_error("long_run_gpu: the report has no `step` scope");
  const gpuprof::Summary& step_ms = report.nodes[static_cast<std::size_t>(step)].gpu_ms;
  f.set("step_count", static_cast<double>(step_ms.n));
  f.set("step_median_gpu_ms", step_ms.median);
  f.set("step_median_from_sketch", step_ms.exact() ? 0 : 1);
  // With every instance kept, the exact median beside the report's.
  std::vector<double> step_instances;
  if (report.instances.size() == report.recorded_instances)
    for (const gpuprof::ScopeInstance& instance : report.instances)
      if (instance.node == step && instance.gpu_ms >= 0) step_instances.push_back(instance.gpu_ms);
  f.set("step_exact_median_gpu_ms",
        step_instances.size() == step_ms.n ? gpuprof::summarize(step_instances).median : -1);

  const auto write_start = long_run::Clock::now();
  gpuprof::write_json(report, json_path);
  f.set("write_json_s", long_run::seconds_since(write_start));
  struct stat info {};
  f.set("json_mib", stat(json_path.c_str(), &info) == 0 ? static_cast<double>(info.st_size) / (1 << 20) : -1);
  std::remove(json_path.c_str());
  f.set("peak_rss_mib", long_run::peak_mib());
  return f;
}

void print_table(const std::vector<Figures>& modes) {
  std::printf(
      "| mode | kernel window | steps | scope instances | kernels launched | records kept | aggregates | "
      "kernels in their scope | dropped | memory growth | peak RSS | all periodic report() | final report() "
      "| "
      "write_json | JSON | step median (GPU) |\n"
      "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
  for (const Figures& f : modes)
    std::printf(
        "| %s | %.0f | %.0f | %.0f | %.0f | %.0f | %.0f | %.0f | %.0f | %+.1f MB | %.0f MB | %.2f s | %.3f s "
        "| "
        "%.2f s | %.1f MB | %.5f ms%s |\n",
        (std::string(f.at("full_trace") > 0 ? "full trace" : "window") + ", pair " +
         std::to_string(static_cast<long>(f.at("pair"))))
            .c_str(),
        f.at("kernel_window"), f.at("steps"), f.at("scope_instances"), f.at("kernels_launched"),
        f.at("kernels_kept"), f.at("kernel_aggregates"), f.at("kernels_in_step_scopes"),
        f.at("dropped_kernel_records"), f.at("memory_growth_mib") * 1.048576, f.at("peak_rss_mib") * 1.048576,
        f.at("periodic_report_total_s"), f.at("final_report_s"), f.at("write_json_s"),
        f.at("json_mib") * 1.048576, f.at("step_median_gpu_ms"),
        f.at("step_median_from_sketch") > 0 ? " (sketch)" : "");
}

int run(const Options& options) {
  char directory[] = "/tmp/long_run_gpu_XXXXXX";
  if (!mkdtemp(directory)) {
    std::perror("mkdtemp");
    return 1;
  }
  const std::string report_path = std::string(directory) + "/report.json";
  std::vector<Figures> modes;       // window and full trace of each pair, in the order run
  std::vector<double> differences;  // per pair: (window - full trace) / full trace, step medians
  int status = 0;
  for (long pair = 1; pair <= options.pairs && status == 0; ++pair) {
    Figures by_mode[2];  // [full_trace]
    const bool window_first = pair % 2 == 1;
    for (bool full_trace : {!window_first, window_first}) {
      const long_run::ChildOutput out =
          long_run::run_in_child([&] { return run_mode(full_trace, options, report_path).text(); });
      if (out.exit_status != 0) {
        if (out.exit_status != 3)
          std::fprintf(stderr, "long_run_gpu: the %s run failed (exit status %d)\n",
                       full_trace ? "full-trace" : "window", out.exit_status);
        status = out.exit_status == 3 ? 3 : 1;
        break;
      }
      by_mode[full_trace] = Figures::parse(out.text);
      by_mode[full_trace].set("pair", static_cast<double>(pair));
      modes.push_back(by_mode[full_trace]);
    }
    if (status == 0) {
      const double window_ms = by_mode[0].at("step_median_gpu_ms"),
                   full_ms = by_mode[1].at("step_median_gpu_ms");
      differences.push_back((window_ms - full_ms) / full_ms);
    }
  }
  rmdir(directory);
  if (status != 0) return status;

  print_table(modes);
  std::vector<double> sorted = differences;
  std::sort(sorted.begin(), sorted.end());
  const double difference = sorted.size() % 2 == 1
                                ? sorted[sorted.size() / 2]
                                : (sorted[sorted.size() / 2 - 1] + sorted[sorted.size() / 2]) / 2;
  std::printf("\nstep median, window against full trace, pair by pair:");
  for (const double d : differences) std::printf(" %+.3f %%", 100 * d);
  std::printf("\nmedian over %zu pair(s): %+.3f %% (goal: within 0.5 %%)\n", differences.size(),
              100 * difference);
  for (const Figures& f : modes)
    if (const double exact = f.at("step_exact_median_gpu_ms"); exact > 0)
      std::printf(
          "full trace, pair %.0f: the exact median of its %.0f step instances is %.5f ms (report's %+.3f "
          "%%)\n",
          f.at("pair"), f.at("step_count"), exact, 100 * (f.at("step_median_gpu_ms") - exact) / exact);
  std::printf("memory growth over the loop, pair 1: %+.1f MB with the window, %+.1f MB with the full trace\n",
              modes[0].at("memory_growth_mib") * 1.048576, modes[1].at("memory_growth_mib") * 1.048576);

  if (!options.json_path.empty()) {
    gpuprof::JsonWriter json;
    json.begin_object()
        .member("benchmark", "long_run_gpu")
        .member("steps", options.steps)
        .member("warmup_steps", warmup_steps)
        .member("scopes_per_step", scopes_per_step)
        .member("kernels_per_step", kernels_per_step)
        .member("kernel_us", options.kernel_us)
        .member("report_every_steps", options.report_every)
        .member("pairs", options.pairs)
        .key("modes")
        .begin_array();
    for (const Figures& f : modes) {
      json.begin_object(gpuprof::JsonWriter::one_line)
          .member("mode", f.at("full_trace") > 0 ? "full_trace" : "window");
      for (const auto& [name, value] : f.items)
        if (name != "full_trace") json.member(name, value);
      json.end_object();
    }
    json.end_array()
        .key("step_median_relative_difference_per_pair")
        .begin_array(gpuprof::JsonWriter::one_line);
    for (const double d : differences) json.value(d);
    json.end_array().member("step_median_relative_difference", difference).end_object();
    gpuprof::write_file_atomically(options.json_path, json.str() + "\n");
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    const Options options = parse(argc, argv);
    if (options.help) {
      std::fputs(usage, stdout);
      return 0;
    }
    return run(options);
  } catch (const std::invalid_argument& error) {
    std::fprintf(stderr, "long_run_gpu: %s\n%s", error.what(), usage);
    return 2;
  } catch (const std::exception& error) {
    std::fprintf(stderr, "long_run_gpu: %s\n", error.what());
    return 1;
  }
}
