// transformer_counter_probe: the hardware counters of every kernel of one
// small-model bf16 train step (our fused attention), for the comparison with
// Nsight Compute in scripts/counters_check.sh (docs/counters.md).
//
//   --counters  per-kernel counters (CounterCapture, auto ranges, user
//               replay: the step runs once per pass, so each kernel finds
//               the caches as the step itself leaves them, as under
//               `ncu --replay-mode application --cache-control none`):
//               "kernel,<launch index>,<metric>,<value>" lines
//   --step      the same counters for one range around the whole step
//               (CounterCapture, a user range, as ncu's range replay
//               measures the profiler start/stop range of --plain):
//               "range,step,<metric>,<value>" lines
//   --names     the step's kernels in launch order (KernelCapture):
//               "name,<launch index>,<base name>" lines
//   --plain     the step alone between cudaProfilerStart/Stop, for
//               `ncu --profile-from-start off` (ncu cannot measure a process
//               that holds the counters itself)
//
// Names and counters come from two runs of the program, each with one CUPTI
// client: CUPTI's auto ranges are numbered, not named, and the step launches
// the same kernels in the same order every time. Each run makes the model,
// runs one warm-up step (lazy module loading, cuBLAS's first calls), then
// the measured step. Exit status: 0 done, 1 a run failed, 2 bad usage, 3 no
// usable GPU, or counters or names cannot be collected.
#include <cuda_profiler_api.h>
#include <gpuprof/terminal_text.hpp>
#include <gpuprof/counters.hpp>
#include <gpuprof/cupti.hpp>
#include <gpuprof_cli/arguments.hpp>

#include <algorithm>
#include <cstdio>
#include <cstddef>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "model/backend.hpp"
#include "model/config.hpp"

namespace {

enum class ProbeMode { counters, step, names, plain };

struct ProbeOptions {
  ProbeMode mode = ProbeMode::counters;
  int ctx = 128;
};

constexpr const char* usage_text =
    "usage: transformer_counter_probe --counters|--step|--names|--plain [--ctx N]\n"
    "One small-model bf16 train step, for the comparison with Nsight Compute\n"
    "(scripts/counters_check.sh):\n"
    "  --counters  every kernel's counters: \"kernel,<launch index>,<metric>,<value>\" lines\n"
    "  --step      the same counters for one range around the step: \"range,step,...\" lines\n"
    "  --names     the step's kernels in launch order: \"name,<launch index>,<base name>\" lines\n"
    "  --plain     the step alone between cudaProfilerStart/Stop, for ncu\n"
    "  --ctx N     context length, 1 to 8192 (default 128)\n"
    "  -h, --help  this text\n"
    "exit status: 0 done; 1 a run failed; 2 bad arguments; 3 no usable GPU, or counters or\n"
    "names cannot be collected\n";

std::unique_ptr<transformer::Backend> warm_model(int ctx) {
  transformer::RunConfig config;
  config.model = *transformer::named_size("small");
  config.precision = transformer::Precision::bf16;
  config.attention = transformer::Attention::fused;  // our kernel, the one the comparison is about
  config.mode = transformer::Mode::step;
  config.ctx = ctx;
  std::unique_ptr<transformer::Backend> model = transformer::make_cuda_backend(config);
  const std::size_t tokens = static_cast<std::size_t>(config.batch) * static_cast<std::size_t>(ctx);
  std::mt19937 random(1);
  std::uniform_int_distribution<std::int32_t> token(0, config.model.vocab - 1);
  std::vector<std::int32_t> inputs(tokens), targets(tokens);
  for (std::size_t i = 0; i < tokens; ++i) {
    inputs[i] = token(random);
    targets[i] = token(random);
  }
  model->set_batch(inputs, targets);
  model->train_step();
  model->synchronize();
  return model;
}

void print_header(const char* mode, const gpuprof::CounterSet& set, std::size_t ranges) {
  std::printf("# %s: chip %s, %d pass(es), %zu range(s)%s%s\n", mode, set.chip.c_str(), set.passes, ranges,
              set.note.empty() ? "" : ", note: ", set.note.c_str());
}

void run_step(transformer::Backend& model) {
  model.train_step();
  model.synchronize();
}

int print_counters(transformer::Backend& model) {
  gpuprof::CounterCaptureOptions options;
  options.ranges = gpuprof::CounterRanges::kernels;
  options.replay = gpuprof::CounterReplay::user;
  options.max_ranges = 4096;  // a small-model step launches a few hundred kernels
  gpuprof::CounterCapture capture(options);
  if (!capture.active()) return 3;  // the capture said why on stderr
  const gpuprof::CounterSet set = capture.measure([&] { run_step(model); });
  print_header("kernel", set, set.kernels.size());
  for (std::size_t index = 0; index < set.kernels.size(); ++index)
    for (const gpuprof::MetricValue& value : set.kernels[index].values)
      std::printf("kernel,%zu,%s,%.17g\n", index, value.metric.c_str(), value.value);
  return set.note.empty() ? 0 : 1;
}

int print_step(transformer::Backend& model) {
  gpuprof::CounterCaptureOptions options;  // scopes: user ranges
  options.nesting_levels = 1;              // the outer range alone: the model's own scopes push none
  gpuprof::CounterCapture capture(options);
  if (!capture.active()) return 3;  // the capture said why on stderr
  const gpuprof::CounterSet set = capture.measure([&] { run_step(model); }, "step");
  print_header("range", set, set.scopes.size());
  for (const gpuprof::CounterRange& range : set.scopes)
    for (const gpuprof::MetricValue& value : range.values)
      std::printf("range,%s,%s,%.17g\n", range.name.c_str(), value.metric.c_str(), value.value);
  return set.note.empty() && set.scopes.size() == 1 ? 0 : 1;
}

int print_names(transformer::Backend& model) {
  gpuprof::KernelCaptureOptions options;
  options.copies = false;  // copies and memsets get no counter range, as in ncu
  gpuprof::KernelCapture capture(options);
  if (!capture.active()) return 3;  // the capture said why on stderr
  run_step(model);
  std::vector<gpuprof::KernelRecord> kernels = capture.records();
  kernels.erase(
      std::remove_if(kernels.begin(), kernels.end(),
                     [](const gpuprof::KernelRecord& k) { return k.kind != gpuprof::ActivityKind::kernel; }),
      kernels.end());
  // Launch order, as the auto ranges count (AdamW's pieces run on a side
  // stream and may start before backward's last kernels end).
  std::stable_sort(kernels.begin(), kernels.end(),
                   [](const gpuprof::KernelRecord& a, const gpuprof::KernelRecord& b) {
                     return a.correlation_id < b.correlation_id;
                   });
  if (capture.dropped() != 0) {
    std::fprintf(stderr, "transformer_counter_probe: %llu kernel record(s) dropped\n",
                 static_cast<unsigned long long>(capture.dropped()));
    return 1;
  }
  std::printf("# names: %zu kernel(s)\n", kernels.size());
  for (std::size_t index = 0; index < kernels.size(); ++index)
    std::printf("name,%zu,%s\n", index, kernels[index].base_name.c_str());
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  ProbeOptions options;
  bool mode_given = false;
  return gpuprof::run_tool(
      "transformer_counter_probe", usage_text, argc, argv,
      [&](gpuprof::Arguments& args, const std::string& arg) {
        if (arg == "--counters" || arg == "--step" || arg == "--names" || arg == "--plain") {
          if (mode_given) throw gpuprof::Error("give one of --counters, --step, --names, --plain");
          mode_given = true;
          options.mode = arg == "--counters" ? ProbeMode::counters
                         : arg == "--step"   ? ProbeMode::step
                         : arg == "--names"  ? ProbeMode::names
                                             : ProbeMode::plain;
        } else if (arg == "--ctx") {
          const std::size_t ctx = gpuprof::parse_count(args.value_of(arg), arg);
          if (ctx > 8192) throw gpuprof::Error("--ctx " + std::to_string(ctx) + ": above 8192");
          options.ctx = static_cast<int>(ctx);
        } else {
          gpuprof::reject_argument(arg);
        }
      },
      [&] {
        if (!mode_given) throw gpuprof::Error("give one of --counters, --step, --names, --plain");
      },
      gpuprof::run_reading_no_input([&] {
        std::string why_not;
        if (!transformer::cuda_backend_available(&why_not)) {
          std::fprintf(stderr, "transformer_counter_probe: no usable GPU: %s\n", why_not.c_str());
          return 3;
        }
        std::unique_ptr<transformer::Backend> model = warm_model(options.ctx);
        switch (options.mode) {
          case ProbeMode::counters: return print_counters(*model);
          case ProbeMode::step: return print_step(*model);
          case ProbeMode::names: return print_names(*model);
          case ProbeMode::plain: break;
        }
        GPUPROF_CUDA_CHECK(cudaProfilerStart());
        run_step(*model);
        GPUPROF_CUDA_CHECK(cudaProfilerStop());
        return 0;
      }));
}
