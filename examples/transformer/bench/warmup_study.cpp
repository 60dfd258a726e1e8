// bench/warmup_study.cpp: runs and prints the warm-up study.
#include "warmup_study.hpp"

#include <gpuprof/stats.hpp>

#include <cstdio>
#include <numeric>
#include <ostream>

#include "configuration_run.hpp"
#include "step_timing.hpp"
#include "sweep.hpp"
#include "text_table.hpp"

namespace transformer::bench {
namespace {

WarmupStudyRow study_row(const RunConfig& config, int warmup, const StepTiming& timing) {
  WarmupStudyRow row;
  row.size = config.model.name;
  row.ctx = config.ctx;
  row.mode = config.mode;
  row.precision = config.precision;
  row.warmup = warmup;
  row.steps = static_cast<int>(timing.samples_ms.size());
  const gpuprof::Summary summary = gpuprof::summarize(timing.samples_ms);
  row.mean_ms = summary.mean;
  row.std_ms = summary.stddev;
  row.first_ms = timing.samples_ms.front();
  const std::size_t rest = timing.samples_ms.size() - 1;
  row.rest_mean_ms =
      rest == 0 ? row.first_ms
                : std::accumulate(timing.samples_ms.begin() + 1, timing.samples_ms.end(), 0.0) /
                      static_cast<double>(rest);
  return row;
}

}  // namespace

std::vector<WarmupStudyRow> run_warmup_study(const Device& device, const DriverOptions& options) {
  std::vector<WarmupStudyRow> rows;
  for (const RunConfig& config : sweep_configurations(options)) {
    if (!device.supports(config.precision)) continue;
    const std::string label = configuration_label(config);
    for (const int warmup : warmup_study_counts) {
      std::fprintf(stderr, "warm-up study: %s, %d warm-up step(s)\n", label.c_str(), warmup);
      try {
        const auto backend = device.make_backend(config);
        // Made after the backend, whose constructor refuses a batch too large to fit.
        const TokenBatch batch = make_token_batch(config, options.seed);
        backend->set_batch(batch.tokens, batch.targets);
        const StepTiming timing =
            time_steps(*backend, config.mode, warmup, options.steps,
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

void print_warmup_study(std::ostream& out, const std::vector<WarmupStudyRow>& rows) {
  if (rows.empty()) return;
  TextTable table({"size", "ctx", "mode", "prec", "warm-up", "mean ms", "std ms", "first timed ms",
                   "mean of the rest ms"});
  for (const WarmupStudyRow& row : rows)
    table.add_row({row.size, std::to_string(row.ctx), to_string(row.mode), to_string(row.precision),
                   std::to_string(row.warmup), fixed(row.mean_ms, 2), fixed(row.std_ms, 2),
                   fixed(row.first_ms, 2), fixed(row.rest_mean_ms, 2)});
  out << "\nWarm-up study: the timed steps after w warm-up steps, a fresh backend each\n";
  table.print(out);
}

}  // namespace transformer::bench
