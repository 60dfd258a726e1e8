// harness/run.cpp: token batches, the warm-up/timed step protocol, and one
// configuration built, timed and measured for memory.
#include "harness/run.hpp"

#include <gpuprof/bench.hpp>
#include <gpuprof/profiler.hpp>
#include <gpuprof/scope.hpp>
#include <gpuprof/stats.hpp>

#include <algorithm>

#include "model/backend.hpp"
#include "model/init.hpp"

namespace transformer::harness {

TokenBatch make_token_batch(const RunConfig& config, std::uint64_t seed) {
  const std::size_t count = static_cast<std::size_t>(config.batch) * config.ctx;
  const auto vocab = static_cast<std::uint64_t>(config.model.vocab);
  // Distinct streams for tokens and targets, and distinct from the parameters'
  // stream of the same seed (model/init.hpp hashes the seed the same way).
  const std::uint64_t token_stream = splitmix64(seed ^ 0x746F6B656E73ull);     // "tokens"
  const std::uint64_t target_stream = splitmix64(seed ^ 0x74617267657473ull);  // "targets"
  TokenBatch batch;
  batch.tokens.resize(count);
  batch.targets.resize(count);
  for (std::size_t i = 0; i < count; ++i) {
    // The modulo bias for a vocabulary of 10^4 out of 2^64 is below 1e-15.
    batch.tokens[i] = static_cast<std::int32_t>(splitmix64(token_stream + i) % vocab);
    batch.targets[i] = static_cast<std::int32_t>(splitmix64(target_stream + i) % vocab);
  }
  return batch;
}

namespace {

void run_step_in_scopes(Backend& backend, Mode mode, gpuprof::Stream stream) {
  {
    GPUPROF_SCOPE("forward", stream);
    backend.forward();
  }
  if (mode == Mode::fwd) return;
  {
    GPUPROF_SCOPE("backward", stream);
    backend.backward();
  }
  if (mode == Mode::fwdbwd) return;
  GPUPROF_SCOPE("optimizer step", stream);
  backend.optimizer_step();
}

}  // namespace

StepTiming time_steps(Backend& backend, Mode mode, const StepProtocol& protocol,
                      const std::string& scope_name) {
  const int warmup = protocol.warmup, steps = protocol.steps;
  const bool graph = protocol.graph;
  const gpuprof::Stream stream = backend.stream();
  GPUPROF_SCOPE(scope_name, stream);
  // The capture enqueues nothing: its only cost is host time, inside the
  // last warm-up step's measurement (with one warm-up step, the cold one's).
  // Without scope timing in the graph, the scopes inside keep the host time
  // of the capture and add no stamp kernels to the step.
  const auto capture = [&] {
    gpuprof::Profiler& profiler = gpuprof::profiler();
    const bool gpu_timing = profiler.gpu_timing_requested();
    if (!protocol.time_captured_scopes) profiler.set_gpu_timing(false);
    try {
      backend.capture_graph([&] { run_step_in_scopes(backend, mode, stream); });
    } catch (...) {
      profiler.set_gpu_timing(gpu_timing);
      throw;
    }
    profiler.set_gpu_timing(gpu_timing);
  };
  if (graph && warmup == 0) capture();
  int calls = 0;
  const auto step = [&] {
    if (calls++ < warmup) {
      {
        GPUPROF_SCOPE("warmup", stream);
        run_step_in_scopes(backend, mode, stream);
      }
      if (graph && calls == warmup) capture();
    } else if (graph) {
      backend.replay_graph();
    } else {
      run_step_in_scopes(backend, mode, stream);
    }
  };

  // bench always makes one timed cold call before its warm-up calls: it is
  // the first of our w warm-up steps, or, with w == 0, the first timed step.
  // The warm-up steps are in their own "warmup" scope and the cold call may
  // be a timed step, so bench() keeps every scope in the report.
  gpuprof::BenchOptions options;
  options.stream = stream;
  options.warmup = warmup > 0 ? warmup - 1 : 0;
  options.iters = warmup > 0 || steps == 1 ? steps : steps - 1;
  options.keep_warmup_scopes = true;
  const gpuprof::BenchResult result = gpuprof::bench(step, options);

  StepTiming timing;
  timing.gpu_timed = result.timing_source == gpuprof::TimingSource::cuda_events;
  timing.cold_ms = result.cold_ms;
  const std::vector<double>& samples = timing.gpu_timed ? result.gpu_ms : result.host_ms;
  if (warmup == 0) timing.samples_ms.push_back(result.cold_ms);
  for (const double sample : samples)
    if (static_cast<int>(timing.samples_ms.size()) < steps) timing.samples_ms.push_back(sample);
  return timing;
}

namespace {

// Device memory this configuration added, relative to before its backend
// existed (cudaMemGetInfo sees the whole device, so the baseline matters).
class DeviceMemoryGrowth {
 public:
  explicit DeviceMemoryGrowth(const Device& device) : device_(device), baseline_(device.memory_in_use()) {}
  void sample() {
    const std::optional<std::size_t> in_use = device_.memory_in_use();
    if (!in_use || !baseline_) return;
    const auto added = static_cast<std::int64_t>(*in_use) - static_cast<std::int64_t>(*baseline_);
    peak_ = std::max(peak_.value_or(0), added);
  }
  std::optional<std::int64_t> peak() const { return peak_; }

 private:
  const Device& device_;
  std::optional<std::size_t> baseline_;
  std::optional<std::int64_t> peak_;
};

}  // namespace

std::string configuration_label(const RunConfig& config) {
  return config.model.name + " ctx " + std::to_string(config.ctx) + " " + to_string(config.mode) + " " +
         to_string(config.precision) + " " + to_string(config.attention) + " attention";
}

double step_flops(const RunConfig& config) {
  const double forward = forward_flops(config.model, config.batch, config.ctx);
  return config.mode == Mode::fwd ? forward : 3.0 * forward;
}

ResultRow blank_row(const Device& device, const RunConfig& config, const StepProtocol& protocol) {
  ResultRow row;
  row.size = config.model.name;
  row.ctx = config.ctx;
  row.batch = config.batch;
  row.mode = config.mode;
  row.precision = config.precision;
  row.attention = config.attention;
  row.backend = device.backend_name();
  row.warmup = protocol.warmup;
  row.steps = protocol.steps;
  row.graph = protocol.graph;
  row.params = parameter_count(config.model);
  return row;
}

ResultRow run_configuration(const Device& device, const RunConfig& config, const StepProtocol& protocol,
                            const std::map<Precision, double>& ceilings) {
  ResultRow row = blank_row(device, config, protocol);
  DeviceMemoryGrowth memory(device);
  std::unique_ptr<Backend> backend;
  try {
    backend = device.make_backend(config);
  } catch (const OutOfMemory& error) {
    row.status = RowStatus::oom;
    row.bytes_requested = error.bytes_requested;
    row.bytes_free = error.bytes_free;
    return row;
  }
  memory.sample();
  const TokenBatch batch = make_token_batch(config, config.seed);
  backend->set_batch(batch.tokens, batch.targets);
  const StepTiming timing = time_steps(*backend, config.mode, protocol, configuration_label(config));
  memory.sample();

  const gpuprof::Summary summary = gpuprof::summarize(timing.samples_ms);
  row.mean_ms = summary.mean;
  row.std_ms = summary.stddev;
  row.median_ms = summary.median;
  row.min_ms = summary.min;
  row.cold_ms = timing.cold_ms;
  row.timing = timing.gpu_timed ? "cuda_events" : "host_clock";
  row.samples_ms = timing.samples_ms;
  const double seconds = summary.mean / 1e3;
  row.tokens_per_s = static_cast<double>(config.batch) * config.ctx / seconds;
  row.tflops = step_flops(config) / seconds / 1e12;
  if (const auto ceiling = ceilings.find(config.precision); ceiling != ceilings.end())
    row.mfu = *row.tflops / ceiling->second;
  row.peak_mem_bytes = memory.peak();
  row.allocated_bytes = backend->allocated_bytes();
  return row;
}

}  // namespace transformer::harness
