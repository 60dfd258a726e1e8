// bench/configuration_run.cpp: builds the backend, times it, measures its memory.
#include "configuration_run.hpp"

#include <gpuprof/stats.hpp>

#include <algorithm>

#include "step_timing.hpp"

namespace transformer::bench {
namespace {

// Device memory this configuration added, relative to before its backend
// existed (cudaMemGetInfo sees the whole device, so the baseline matters).
class MemoryWatch {
 public:
  explicit MemoryWatch(const Device& device) : device_(device), baseline_(device.memory_in_use()) {}
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
  return config.model.name + " ctx " + std::to_string(config.ctx) + " " + to_string(config.mode) +
         " " + to_string(config.precision);
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
  row.backend = device.backend_name();
  row.warmup = protocol.warmup;
  row.steps = protocol.steps;
  row.params = parameter_count(config.model);
  return row;
}

ResultRow run_configuration(const Device& device, const RunConfig& config, const StepProtocol& protocol,
                            const std::map<Precision, double>& ceilings) {
  ResultRow row = blank_row(device, config, protocol);
  MemoryWatch memory(device);
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
  const StepTiming timing = time_steps(*backend, config.mode, protocol.warmup, protocol.steps,
                                       configuration_label(config));
  memory.sample();

  const gpuprof::Summary summary = gpuprof::summarize(timing.samples_ms);
  row.mean_ms = summary.mean;
  row.std_ms = summary.stddev;
  row.median_ms = summary.median;
  row.min_ms = summary.min;
  row.cold_ms = timing.cold_ms;
  row.timing = timing.gpu_timed ? "cuda_events" : "host_clock";
  const double seconds = summary.mean / 1e3;
  row.tokens_per_s = static_cast<double>(config.batch) * config.ctx / seconds;
  row.tflops = step_flops(config) / seconds / 1e12;
  if (const auto ceiling = ceilings.find(config.precision); ceiling != ceilings.end())
    row.mfu = *row.tflops / ceiling->second;
  row.peak_mem_bytes = memory.peak();
  row.allocated_bytes = backend->allocated_bytes();
  return row;
}

}  // namespace transformer::bench
