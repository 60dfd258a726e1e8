// profile/profile_run.cpp: the phases of a profile. Plain runs come first,
// before any CUPTI subscription exists, so "capture off" means exactly that;
// the memory table comes before capture too, so CUPTI's own device buffers
// do not count in its peaks.
#include "profile/profile_run.hpp"

#include <gpuprof/cupti.hpp>
#include <gpuprof/report/html.hpp>
#include <gpuprof/report/kernel_summary_writers.hpp>
#include <gpuprof/report/memory_timeline_svg.hpp>
#include <gpuprof/memory.hpp>
#include <gpuprof/profiler.hpp>
#include <gpuprof/report.hpp>
#include <gpuprof/stats.hpp>

#include <algorithm>
#include <cstdio>
#include <exception>
#include <filesystem>
#include <map>

#include "harness/device.hpp"
#include "harness/run_flags.hpp"
#include "harness/run.hpp"
#include "profile/attention_flops.hpp"
#include "profile/one_step.hpp"
#include "profile/questions.hpp"
#include "profile/report_markdown.hpp"

namespace transformer::profile {
namespace {

// The memory table: the course's 2.7B model at these contexts. Memory does
// not depend on how many steps run, so a short protocol is enough: the peak
// is reached in the first step (every buffer is allocated up front).
constexpr const char* memory_model = "2.7B";
constexpr int memory_contexts[] = {128, 256, 512};
constexpr harness::StepProtocol memory_protocol{1, 2};

}  // namespace

RunConfig run_config(const ModelConfig& model, int ctx, Precision precision, Attention attention, Mode mode,
                     int batch, std::uint64_t seed) {
  RunConfig config;
  config.model = model;
  config.ctx = ctx;
  config.precision = precision;
  config.attention = attention;
  config.mode = mode;
  config.batch = batch;
  config.seed = seed;
  return config;
}

RunConfig run_config(const ProfileOptions& options, const ConfigurationProfile& c, Mode mode) {
  return run_config(model_for_size(c.size, options.custom), c.ctx, c.precision, c.attention, mode,
                    options.batch, options.seed);
}

StepTimes step_times(const harness::ResultRow& row) {
  StepTimes times;
  times.mean_ms = row.mean_ms.value_or(0);
  times.std_ms = row.std_ms.value_or(0);
  times.steps = static_cast<std::size_t>(row.steps);
  times.clock = row.timing;
  return times;
}

void check_gpu() {
  std::string why_not;
  if (!cuda_backend_available(&why_not)) throw harness::DeviceUnavailable("no usable GPU: " + why_not);
}

harness::Device require_gpu() {
  check_gpu();
  gpuprof::profiler();  // probes the device now, so its notice precedes the progress lines
  return harness::Device::select(harness::DeviceChoice::cuda);
}

namespace {

class ConfigurationRunner {
 public:
  ConfigurationRunner(const ProfileOptions& options, const harness::Device& device)
      : options_(options),
        device_(device),
        plain_protocol_{options.warmup, options.steps, options.graph, /*time_captured_scopes=*/false},
        captured_protocol_{options.warmup, options.steps, options.graph, /*time_captured_scopes=*/true} {}

  // One row of the bench protocol; an oom row marks `c` and returns nothing.
  std::optional<StepTimes> run(ConfigurationProfile& c, Mode mode, const harness::StepProtocol& protocol) {
    const RunConfig config = config_of(c, mode);
    const harness::ResultRow row = harness::run_configuration(device_, config, protocol, {});
    if (row.status == harness::RowStatus::oom) {
      c.status = RunStatus::oom;
      c.oom_mode = mode;
      c.bytes_needed = row.bytes_requested;
      return std::nullopt;
    }
    return step_times(row);
  }

  void plain(ConfigurationProfile& c) {
    progress("plain", c);
    guarded(c, [&] {
      const std::optional<StepTimes> forward = run(c, Mode::fwd, plain_protocol_);
      if (!forward) return;
      c.plain_forward = *forward;
      if (const std::optional<StepTimes> step = run(c, Mode::step, plain_protocol_)) c.plain_step = *step;
    });
  }

  void captured(ConfigurationProfile& c, bool write_trace) {
    progress("captured", c);
    guarded(c, [&] {
      const std::optional<gpuprof::Report> inference = captured_run(c, Mode::fwd, c.captured_forward);
      if (!inference) return;
      const std::optional<gpuprof::Report> train = captured_run(c, Mode::step, c.captured_step);
      if (!train) return;
      const std::string inference_root = harness::configuration_label(config_of(c, Mode::fwd));
      const std::string train_root = harness::configuration_label(config_of(c, Mode::step));
      c.answers =
          answer_questions(*inference, inference_root, *train, train_root,
                           attention_flops(model_for_size(c.size, options_.custom), options_.batch, c.ctx));
      std::fprintf(stderr, "  capture overhead: %s\n", capture_overhead_text(c).c_str());
      if (options_.out_dir.empty()) return;
      gpuprof::write(gpuprof::kern_sum(phase_kernels(*inference, inference_root, {forward_scope},
                                                     gpuprof::Activities::kernels)),
                     output(inference_kern_sum_file(c)));
      gpuprof::write(gpuprof::kern_sum(phase_kernels(*train, train_root,
                                                     {forward_scope, backward_scope, optimizer_scope},
                                                     gpuprof::Activities::kernels)),
                     output(train_kern_sum_file(c)));
      if (write_trace) gpuprof::write_chrome_trace(one_step_report(*train, train_root), output("trace.json"));
    });
  }

  MemoryRow memory(int ctx, Mode mode, Precision precision) {
    const ModelConfig model = model_for_size(memory_model, options_.custom);
    MemoryRow row;
    row.ctx = ctx;
    row.mode = mode;
    row.precision = precision;
    row.attention = default_attention(precision, model, ctx, cudnn_attention_available());
    row.residual_stream_bytes = residual_stream_bytes(options_.batch, ctx, model.d_model);
    const RunConfig config =
        run_config(model, ctx, precision, row.attention, mode, options_.batch, options_.seed);
    std::fprintf(stderr, "memory: %s ...\n", harness::configuration_label(config).c_str());
    try {
      const std::optional<std::size_t> before = device_.memory_in_use();
      gpuprof::profiler().reset();
      const harness::ResultRow result = harness::run_configuration(device_, config, memory_protocol, {});
      if (result.status == harness::RowStatus::oom) {
        row.status = RunStatus::oom;
        row.bytes_needed = result.bytes_requested;
        return row;
      }
      row.allocated_bytes = result.allocated_bytes;
      // Both are lower bounds of the true peak (sampled, not continuous): keep the higher.
      row.peak_bytes = result.peak_mem_bytes;
      const gpuprof::Report report = gpuprof::profiler().report();
      for (const gpuprof::ScopeNode& node : report.nodes)
        if (node.path == harness::configuration_label(config) && node.peak_device_bytes >= 0 && before)
          row.peak_bytes = std::max(row.peak_bytes.value_or(0),
                                    node.peak_device_bytes - static_cast<std::int64_t>(*before));
    } catch (const std::exception& error) {
      row.status = RunStatus::error;
      row.note = error.what();
      std::fprintf(stderr, "  failed: %s\n", error.what());
    }
    return row;
  }

 private:
  RunConfig config_of(const ConfigurationProfile& c, Mode mode) const {
    return run_config(options_, c, mode);
  }

  // A fresh profile and capture for one run, then its report.
  std::optional<gpuprof::Report> captured_run(ConfigurationProfile& c, Mode mode, StepTimes& times) {
    gpuprof::profiler().reset();  // clears the capture too (ScopeObserver::on_reset)
    const std::optional<StepTimes> measured = run(c, mode, captured_protocol_);
    if (!measured) return std::nullopt;
    times = *measured;
    return gpuprof::profiler().report();
  }

  template <class Work>
  void guarded(ConfigurationProfile& c, Work&& work) {
    try {
      work();
    } catch (const std::exception& error) {
      mark_failed(c, error);
      c.answers.reset();
    }
    if (c.status == RunStatus::oom) print_oom(c.bytes_needed);
  }

  static void progress(const char* phase, const ConfigurationProfile& c) {
    std::fprintf(stderr, "%s: %s ...\n", phase, c.label().c_str());
  }

  std::string output(const std::string& relative) const {
    return (std::filesystem::path(options_.out_dir) / relative).string();
  }

  const ProfileOptions& options_;
  const harness::Device& device_;
  // Capture off: no stamps in a graph either, as transformer_bench times it.
  // Capture on: scopes captured into the graph are timed from its kernels
  // (gpuprof adds nothing to the graph while a KernelCapture captures).
  harness::StepProtocol plain_protocol_, captured_protocol_;
};

// One --memory-timeline run, its picture and HTML report written to `out_dir`.
MemoryTimelineRun memory_timeline_run(const ProfileOptions& options, const harness::Device& device,
                                      const ConfigurationProfile& c, Mode mode) {
  MemoryTimelineRun run;
  run.label = c.label();
  run.slug = c.slug();
  run.mode = mode;
  const RunConfig config = run_config(options, c, mode);
  std::fprintf(stderr, "memory timeline: %s ...\n", harness::configuration_label(config).c_str());
  try {
    gpuprof::profiler().reset();  // clears the capture's records and the watch's samples
    const harness::ResultRow row =
        harness::run_configuration(device, config, {options.warmup, options.steps}, {});
    if (row.status == harness::RowStatus::oom) {
      run.status = RunStatus::oom;
      run.bytes_needed = row.bytes_requested;
      print_oom(row.bytes_requested);
      return run;
    }
    run.allocated_bytes = row.allocated_bytes.value_or(0);
    // The backend is gone: its releases are in the timeline too.
    gpuprof::Report report = gpuprof::profiler().report();
    run.timeline = report.memory_timeline;
    run.spans = memory_timeline_phases(report);
    if (run.timeline.allocations.empty())
      throw std::runtime_error("kernel capture recorded no allocation (CUPTI MEMORY2 records missing)");
    const std::filesystem::path dir(options.out_dir);
    gpuprof::MemoryTimelineSvgOptions picture;
    picture.title = memory_timeline_title(run);
    picture.spans = run.spans;
    gpuprof::write_memory_timeline_svg(run.timeline, (dir / memory_timeline_file(run, "svg")).string(),
                                       picture);
    // The page is for the scopes and the memory: the kernels (tens of
    // thousands of records for 2.7B) would only make it heavy.
    report.kernels.clear();
    gpuprof::write_html(report, (dir / memory_timeline_file(run, "html")).string(), {picture.title});
  } catch (const std::exception& error) {
    mark_failed(run, error);
  }
  return run;
}

}  // namespace

void print_oom(const std::optional<std::size_t>& bytes_needed) {
  std::fprintf(stderr, "  OOM (needs %.2f GiB)\n",
               static_cast<double>(bytes_needed.value_or(0)) / (1024.0 * 1024.0 * 1024.0));
}

std::vector<ConfigurationProfile> configurations(const ProfileOptions& options,
                                                 std::vector<std::string>& notes) {
  std::vector<ConfigurationProfile> all;
  for (const std::string& size : options.sizes) {
    const ModelConfig model = model_for_size(size, options.custom);
    for (const int ctx : options.contexts)
      for (const Precision precision : options.precisions)
        for (const Attention attention : harness::attentions_for(options.attentions, precision, model, ctx)) {
          ConfigurationProfile c;
          c.size = size;
          c.ctx = ctx;
          c.precision = precision;
          c.attention = attention;
          RunConfig config;
          config.model = model;
          config.precision = precision;
          config.attention = attention;
          if (const std::string why = harness::unsupported_attention(config); !why.empty()) {
            notes.push_back(c.label() + " left out: " + why);
            continue;
          }
          all.push_back(std::move(c));
        }
  }
  return all;
}

ProfileResults run_profile(const ProfileOptions& options) {
  const harness::Device device = require_gpu();
  ProfileResults results;
  describe(results, options, device);
  results.graph = options.graph;
  results.seed = options.seed;

  ConfigurationRunner runner(options, device);
  results.configurations = configurations(options, results.notes);
  for (ConfigurationProfile& c : results.configurations) runner.plain(c);

  if (options.memory_table) {
    const gpuprof::MemoryWatch watch;
    MemoryTable table;
    table.model = memory_model;
    table.d_model = model_for_size(memory_model, options.custom).d_model;
    table.batch = options.batch;
    for (const int ctx : memory_contexts)
      for (const Mode mode : {Mode::fwd, Mode::step})
        for (const Precision precision : {Precision::fp32, Precision::bf16})
          table.rows.push_back(runner.memory(ctx, mode, precision));
    results.memory = std::move(table);
  }

  // Registered as a scope observer for as long as it lives: every captured run below.
  gpuprof::KernelCapture capture;
  if (!capture.active())
    throw harness::DeviceUnavailable("kernel capture (CUPTI) is unavailable: " + capture.why_inactive());
  bool first = true;
  for (ConfigurationProfile& c : results.configurations) {
    if (c.status != RunStatus::ok) continue;
    runner.captured(c, options.trace && first);
    first = false;
  }
  return results;
}

MemoryTimelineResults run_memory_timelines(const ProfileOptions& options) {
  const harness::Device device = require_gpu();
  MemoryTimelineResults results;
  describe(results, options, device);
  // Both observe every scope from here on; the capture exists before any
  // backend, so every allocation a backend makes has its record.
  gpuprof::KernelCaptureOptions capture_options;
  capture_options.allocations = true;
  gpuprof::KernelCapture capture(capture_options);
  if (!capture.active())
    throw harness::DeviceUnavailable("kernel capture (CUPTI) is unavailable: " + capture.why_inactive());
  gpuprof::MemoryWatch watch;
  if (!watch.active())
    throw harness::DeviceUnavailable("memory watch is unavailable: " + watch.why_inactive());
  watch.use_allocations([&capture] { return capture.allocations(); });
  for (const ConfigurationProfile& c : configurations(options, results.notes))
    for (const Mode mode : {Mode::fwd, Mode::step})
      results.runs.push_back(memory_timeline_run(options, device, c, mode));
  return results;
}

}  // namespace transformer::profile
