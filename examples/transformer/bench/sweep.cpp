// bench/sweep.cpp: runs the configurations in turn and reports progress.
#include "sweep.hpp"

#include <cstdio>
#include <exception>

#include "output.hpp"
#include "text_table.hpp"

namespace transformer::bench {
namespace {

std::string progress_result(const ResultRow& row) {
  switch (row.status) {
    case RowStatus::ok:
      return fixed(row.median_ms, 2) + " ms/step median, " + fixed(row.tflops, 2) + " TFLOP/s";
    case RowStatus::oom:
      return oom_text(row);
    case RowStatus::unsupported:
      return "unsupported: " + row.note;
    case RowStatus::error:
      return "FAILED: " + row.note;
  }
  return "?";
}

}  // namespace

std::vector<RunConfig> sweep_configurations(const DriverOptions& options) {
  std::vector<RunConfig> configs;
  for (const std::string& size : options.sizes)
    for (const Precision precision : options.precisions)
      for (const int ctx : options.contexts)
        for (const Mode mode : options.modes) {
          RunConfig config;
          config.model = model_for_size(options, size);
          config.precision = precision;
          config.mode = mode;
          config.batch = options.batch;
          config.ctx = ctx;
          config.seed = options.seed;
          configs.push_back(config);
        }
  return configs;
}

std::vector<ResultRow> run_sweep(const Device& device, const DriverOptions& options,
                                 const std::map<Precision, double>& ceilings) {
  const std::vector<RunConfig> configs = sweep_configurations(options);
  const StepProtocol protocol{options.warmup, options.steps};
  std::vector<ResultRow> rows;
  for (std::size_t index = 0; index < configs.size(); ++index) {
    const RunConfig& config = configs[index];
    const std::string label = configuration_label(config);
    std::fprintf(stderr, "[%zu/%zu] %s ...", index + 1, configs.size(), label.c_str());
    std::fflush(stderr);
    ResultRow row;
    if (!device.supports(config.precision)) {
      row = blank_row(device, config, protocol);
      row.status = RowStatus::unsupported;
      row.note = std::string("the ") + device.backend_name() + " backend computes in fp32 only";
    } else {
      try {
        row = run_configuration(device, config, protocol, ceilings);
      } catch (const std::exception& error) {
        // One broken configuration must not cost the rows already measured.
        row = blank_row(device, config, protocol);
        row.status = RowStatus::error;
        row.note = error.what();
      }
    }
    std::fprintf(stderr, " %s\n", progress_result(row).c_str());
    rows.push_back(std::move(row));
  }
  return rows;
}

}  // namespace transformer::bench
