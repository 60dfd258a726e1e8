// bench/warmup_study.cpp: runs and prints the warm-up study.
#include "bench/warmup_study.hpp"

#include <gpuprof/stats.hpp>

#include <cstdio>
#include <numeric>
#include <ostream>

#include "bench/sweep.hpp"
#include "harness/run.hpp"
#include "harness/cells.hpp"

namespace transformer::bench {
namespace {

harness::WarmupStudyRow study_row(const RunConfig& config, int warmup, const harness::StepTiming& timing) {
  harness::WarmupStudyRow row;
  row.size = config.model.name;
  row.ctx = config.ctx;
  row.mode = config.mode;
  row.precision = config.precision;
  row.attention = config.attention;
  row.warmup = warmup;
  row.steps = static_cast<int>(timing.samples_ms.size());
  const gpuprof::Summary summary = gpuprof::summarize(timing.samples_ms);
  row.mean_ms = summary.mean;
  row.std_ms = summary.stddev;
  row.first_ms = timing.samples_ms.front();
  const std::size_t rest = timing.samples_ms.size() - 1;
  row.rest_mean_ms = rest == 0
                         ? row.first_ms
                         : std::accumulate(timing.samples_ms.begin() + 1, timing.samples_ms.end(), 0.0) /
                               static_cast<double>(rest);
  row.samples_ms = timing.samples_ms;
  row.gpu_timed = timing.gpu_timed;
  return row;
}

}  // namespace

std::vector<harness::WarmupStudyRow> run_warmup_study(const harness::Device& device,
                                                      const DriverOptions& options) {
  std::vector<harness::WarmupStudyRow> rows;
  for (const RunConfig& config : sweep_configurations(options)) {
    if (!device.supports(config.precision) || !harness::unsupported_attention(config).empty()) continue;
    const std::string label = harness::configuration_label(config);
    for (const int warmup : warmup_study_counts) {
      std::fprintf(stderr, "warm-up study: %s, %d warm-up step(s)\n", label.c_str(), warmup);
      try {
        const auto backend = device.make_backend(config);
        // Made after the backend, whose constructor refuses a batch too large to fit.
        const harness::TokenBatch batch = harness::make_token_batch(config, options.seed);
        backend->set_batch(batch.tokens, batch.targets);
        const harness::StepTiming timing =
            harness::time_steps(*backend, config.mode, {warmup, options.steps, options.graph.value_or(false)},
                                "warmup study w=" + std::to_string(warmup) + " " + label);
        rows.push_back(study_row(config, warmup, timing));
      } catch (const OutOfMemory& error) {
        std::fprintf(stderr, "warm-up study: %s left out: %s\n", label.c_str(), error.what());
        break;
      }
    }
  }
  return rows;
}

void print_warmup_study(std::ostream& out, const std::vector<harness::WarmupStudyRow>& rows) {
  if (rows.empty()) return;
  const std::vector<std::string> header = {
      "size", "ctx", "mode", "prec", "warm-up", "mean ms", "std ms", "first timed ms", "mean of the rest ms"};
  std::vector<std::vector<std::string>> cells;
  for (const harness::WarmupStudyRow& row : rows)
    cells.push_back({row.size, std::to_string(row.ctx), to_string(row.mode), to_string(row.precision),
                     std::to_string(row.warmup), harness::fixed(row.mean_ms, 2),
                     harness::fixed(row.std_ms, 2), harness::fixed(row.first_ms, 2),
                     harness::fixed(row.rest_mean_ms, 2)});
  out << "\nWarm-up study: the timed steps after w warm-up steps, a fresh backend each\n";
  harness::numbers_right_table(header, std::move(cells)).print(out, harness::ruled_layout);
}

}  // namespace transformer::bench
