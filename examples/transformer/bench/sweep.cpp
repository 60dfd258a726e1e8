// bench/sweep.cpp: runs the configurations in turn and reports progress.
#include "bench/sweep.hpp"

#include <cstdio>
#include <exception>
#include <stdexcept>

#include "harness/output.hpp"
#include "harness/cells.hpp"

namespace transformer::bench {
namespace {

std::string progress_result(const harness::ResultRow& row) {
  switch (row.status) {
    case harness::RowStatus::ok:
      return harness::fixed(row.median_ms, 2) + " ms/step median, " + harness::fixed(row.tflops, 2) +
             " TFLOP/s";
    case harness::RowStatus::oom: return harness::oom_text(row);
    case harness::RowStatus::unsupported: return "unsupported: " + row.note;
    case harness::RowStatus::error: return "FAILED: " + row.note;
  }
  return "?";
}

}  // namespace

std::vector<harness::ResultRow> run_sweep(const harness::Device& device, const DriverOptions& options,
                                          const gpuprof::Axes& axes,
                                          const std::map<Precision, double>& ceilings) {
  const std::vector<RunConfig> configs = sweep_configurations(options);
  if (configs.size() != axes.points().size())
    throw std::logic_error("run_sweep: the axes are not those of the options");
  const harness::StepProtocol protocol{options.warmup, options.steps, options.graph.value_or(false)};
  std::vector<harness::ResultRow> rows;
  for (std::size_t index = 0; index < configs.size(); ++index) {
    const RunConfig& config = configs[index];
    const std::string label = axes.points()[index].row_name("lm");
    std::fprintf(stderr, "[%zu/%zu] %s ...", index + 1, configs.size(), label.c_str());
    std::fflush(stderr);
    harness::ResultRow row;
    const std::string attention_problem = harness::unsupported_attention(config);
    if (!device.supports(config.precision)) {
      row = harness::blank_row(device, config, protocol);
      row.status = harness::RowStatus::unsupported;
      row.note = std::string("the ") + device.backend_name() + " backend computes in fp32 only";
    } else if (!attention_problem.empty()) {
      row = harness::blank_row(device, config, protocol);
      row.status = harness::RowStatus::unsupported;
      row.note = attention_problem;
    } else {
      try {
        row = harness::run_configuration(device, config, protocol, ceilings);
      } catch (const std::exception& error) {
        // One broken configuration must not cost the rows already measured.
        row = harness::blank_row(device, config, protocol);
        row.status = harness::RowStatus::error;
        row.note = error.what();
      }
    }
    std::fprintf(stderr, " %s\n", progress_result(row).c_str());
    rows.push_back(std::move(row));
  }
  return rows;
}

}  // namespace transformer::bench
