// counter_cost: what hardware counters cost. For a few metric sets, the
// replay passes each needs and the wall time of one step (a 256 MB copy, an
// FMA chain, 20 small kernels, inside scopes) uninstrumented, measured per
// scope (user replay: the step runs once per pass and nesting level) and
// measured per kernel (kernel replay: CUPTI replays each kernel itself).
// Prints a table; --json PATH writes it. Exit status: 0 done, 1 a run
// failed, 2 bad usage, 3 no usable GPU or counters cannot be collected.
//
// Usage: counter_cost [--json PATH]
#include <gpuprof/atomic_file.hpp>
#include <gpuprof/counters.hpp>
#include <gpuprof/device.hpp>
#include <gpuprof/json_writer.hpp>
#include <gpuprof/scope.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "counter_kernels.cuh"

namespace {

constexpr std::size_t copy_bytes = std::size_t{256} << 20;
constexpr int small_kernels = 20;
constexpr int repeats = 5;

struct Row {
  std::string set;
  std::size_t metrics = 0;
  int passes = 0;         // per nesting level, from the config
  int scope_runs = 0;     // runs of the step measure() took
  double plain_ms = 0;    // one step, uninstrumented (median)
  double scopes_ms = 0;   // measure(step): every pass (median)
  double kernels_ms = 0;  // one step under kernel replay, with collect() (median)
  std::string note;
};

double now_ms() {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}
template <class F>
double median_ms(F&& f) {
  std::vector<double> times;
  for (int i = 0; i < repeats; ++i) {
    const double begin = now_ms();
    f();
    times.push_back(now_ms() - begin);
  }
  std::sort(times.begin(), times.end());
  return times[times.size() / 2];
}

std::vector<std::string> without_throughputs(std::vector<std::string> metrics) {
  metrics.erase(std::remove_if(metrics.begin(), metrics.end(),
                               [](const std::string& m) {
                                 return m == gpuprof::metric::sm_throughput_pct ||
                                        m == gpuprof::metric::memory_throughput_pct;
                               }),
                metrics.end());
  return metrics;
}

void write_json(const std::string& path, const std::string& chip, const std::vector<Row>& rows) {
  gpuprof::JsonWriter json;
  json.begin_object();
  json.member("benchmark", "counter_cost");
  json.member("chip", chip);
  json.member("device", gpuprof::profiler().device_name());
  json.member("step", "256 MB copy + FMA chain + 20 small kernels, in 2 levels of scopes");
  json.member("repeats", repeats);
  json.key("rows").begin_array();
  for (const Row& row : rows) {
    json.begin_object(gpuprof::JsonWriter::one_line);
    json.member("set", row.set).member("metrics", row.metrics).member("passes", row.passes);
    json.member("scope_runs", row.scope_runs).member("plain_ms", row.plain_ms);
    json.member("scopes_ms", row.scopes_ms).member("kernels_ms", row.kernels_ms).member("note", row.note);
    json.end_object();
  }
  json.end_array().end_object();
  gpuprof::write_file_atomically(path, json.str() + "\n");
}

}  // namespace

constexpr const char* usage =
    "usage: counter_cost [--json PATH]\n"
    "What hardware counters cost: replay passes per metric set, and the wall time of one step\n"
    "plain, measured per scope and measured per kernel.\n"
    "  --json PATH  also write the table as JSON\n"
    "  -h, --help   this text\n"
    "exit status: 0 done; 1 a run failed; 2 bad arguments; 3 no usable GPU, or counters cannot\n"
    "be collected\n";

int main(int argc, char** argv) {
  std::string json_path;
  if (argc == 2 && (std::strcmp(argv[1], "--help") == 0 || std::strcmp(argv[1], "-h") == 0)) {
    std::fputs(usage, stdout);
    return 0;
  }
  if (argc == 3 && std::strcmp(argv[1], "--json") == 0) {
    json_path = argv[2];
  } else if (argc != 1) {
    std::fprintf(stderr, "counter_cost: bad arguments\n%s", usage);
    return 2;
  }
  if (const gpuprof::DeviceStatus device = gpuprof::device_status(); !device.usable) {
    std::fprintf(stderr, "counter_cost: %s\n", device.reason.c_str());
    return 3;
  }
  try {
    const counter_kernels::Buffers buffers(copy_bytes);
    auto step = [&] {
      GPUPROF_SCOPE("step");
      {
        GPUPROF_SCOPE("copy");
        buffers.copy();
      }
      {
        GPUPROF_SCOPE("fma");
        buffers.fma();
      }
      {
        GPUPROF_SCOPE("small");
        for (int i = 0; i < small_kernels; ++i)
          counter_kernels::launch_copy(buffers.in, buffers.out, 1 << 20, nullptr);
      }
      GPUPROF_CUDA_CHECK(cudaDeviceSynchronize());
    };
    step();  // loads the kernels

    std::string chip;
    {
      gpuprof::CounterCapture probe;
      if (!probe.active()) {
        std::fprintf(stderr, "counter_cost: %s\n", probe.why_inactive().c_str());
        return 3;
      }
      chip = probe.chip();
    }
    using namespace gpuprof::metric;
    const std::vector<std::pair<std::string, std::vector<std::string>>> sets = {
        {"duration", {duration_ns}},
        {"dram bytes", {duration_ns, dram_bytes_read, dram_bytes_written}},
        {"roofline",
         {duration_ns, dram_bytes_read, dram_bytes_written, fp32_ffma, fp32_fadd, fp32_fmul, tensor_bf16_ops,
          tensor_tf32_ops}},
        {"default w/o throughputs", without_throughputs(gpuprof::default_counter_metrics(chip))},
        {"default", gpuprof::default_counter_metrics(chip)},
    };

    std::vector<Row> rows;
    for (const auto& [name, metrics] : sets) {
      Row row;
      row.set = name;
      row.metrics = metrics.size();
      row.plain_ms = median_ms(step);
      gpuprof::CounterCaptureOptions options;
      options.metrics = metrics;
      options.nesting_levels = 2;
      {
        gpuprof::CounterCapture capture(options);
        row.passes = capture.passes();
        row.scopes_ms = median_ms([&] {
          const gpuprof::CounterSet set = capture.measure(step);
          row.scope_runs = set.passes;
          if (!set.note.empty()) row.note = set.note;
        });
      }
      options.ranges = gpuprof::CounterRanges::kernels;
      {
        gpuprof::CounterCapture capture(options);
        row.kernels_ms = median_ms([&] {
          step();
          const gpuprof::CounterSet set = capture.collect();
          if (!set.note.empty()) row.note = set.note;
        });
      }
      rows.push_back(row);
    }

    std::printf(
        "counter_cost on %s (%s): one step = 256 MB copy + FMA chain + %d small kernels, 2 levels of scopes; "
        "median of %d\n",
        gpuprof::profiler().device_name().c_str(), chip.c_str(), small_kernels, repeats);
    std::printf("%-24s %7s %6s %10s %10s %10s %8s %10s %8s  %s\n", "metric set", "metrics", "passes",
                "step runs", "plain ms", "scopes ms", "x", "kernels ms", "x", "note");
    for (const Row& row : rows)
      std::printf("%-24s %7zu %6d %10d %10.3f %10.3f %8.1f %10.3f %8.1f  %s\n", row.set.c_str(), row.metrics,
                  row.passes, row.scope_runs, row.plain_ms, row.scopes_ms, row.scopes_ms / row.plain_ms,
                  row.kernels_ms, row.kernels_ms / row.plain_ms, row.note.c_str());
    if (!json_path.empty()) write_json(json_path, chip, rows);
    return 0;
  } catch (const std::exception& error) {
    std::fprintf(stderr, "counter_cost: %s\n", error.what());
    return 1;
  }
}
