// bench/loss_curve.cpp: runs and prints the loss-curve study.
#include "bench/loss_curve.hpp"

#include <gpuprof/scope.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <ostream>

#include "harness/cells.hpp"
#include "harness/run_flags.hpp"
#include "model/backend.hpp"

namespace transformer::bench {
namespace {

harness::LossCurve train_and_record(const harness::Device& device, RunConfig config,
                                    const harness::TokenBatch& batch, int steps) {
  config.mode = Mode::step;
  const auto backend = device.make_backend(config);
  GPUPROF_SCOPE(std::string("loss curve ") + to_string(config.precision), backend->stream());
  backend->set_batch(batch.tokens, batch.targets);
  harness::LossCurve curve;
  curve.size = config.model.name;
  curve.ctx = config.ctx;
  curve.batch = config.batch;
  curve.precision = config.precision;
  for (int step = 0; step < steps; ++step) {
    // The loss of step t is the forward pass before update t, as a training log shows it.
    backend->forward();
    curve.losses.push_back(backend->loss());
    backend->backward();
    backend->optimizer_step();
  }
  return curve;
}

void fill_divergences(std::vector<harness::LossCurve>& curves) {
  const auto reference = std::find_if(curves.begin(), curves.end(), [](const harness::LossCurve& curve) {
    return curve.precision == Precision::fp32;
  });
  if (reference == curves.end()) return;
  const std::vector<double> fp32 = reference->losses;
  for (harness::LossCurve& curve : curves) {
    if (curve.precision == Precision::fp32) continue;
    double largest = 0;
    for (std::size_t step = 0; step < std::min(fp32.size(), curve.losses.size()); ++step)
      largest = std::max(largest, std::fabs(curve.losses[step] - fp32[step]));
    curve.max_abs_divergence_from_fp32 = largest;
  }
}

}  // namespace

std::vector<harness::LossCurve> run_loss_curves(const harness::Device& device, const RunConfig& config,
                                                const std::vector<Precision>& precisions,
                                                const harness::TokenBatch& batch, int steps) {
  // fp32 always runs first: it is the reference the divergences are measured from.
  std::vector<Precision> run_order = {Precision::fp32};
  for (const Precision precision : precisions)
    if (precision != Precision::fp32) run_order.push_back(precision);
  std::vector<harness::LossCurve> curves;
  for (const Precision precision : run_order) {
    if (!device.supports(precision)) {
      std::fprintf(stderr, "loss curve: %s skipped: the %s backend does not support it\n",
                   to_string(precision), device.backend_name());
      continue;
    }
    std::fprintf(stderr, "loss curve: %s ctx %d, %s, %d steps\n", config.model.name.c_str(), config.ctx,
                 to_string(precision), steps);
    RunConfig run = config;
    run.precision = precision;
    // The sweep's attention where this precision can run it (fused is bf16 only).
    if (!harness::unsupported_attention(run).empty())
      run.attention = default_attention(precision, run.model, run.ctx, cudnn_attention_available());
    try {
      curves.push_back(train_and_record(device, run, batch, steps));
    } catch (const OutOfMemory& error) {
      std::fprintf(stderr, "loss curve: %s skipped: %s\n", to_string(precision), error.what());
    }
  }
  fill_divergences(curves);
  return curves;
}

void print_loss_curves(std::ostream& out, const std::vector<harness::LossCurve>& curves) {
  if (curves.empty()) return;
  std::vector<std::string> header = {"step"};
  std::size_t steps = 0;
  for (const harness::LossCurve& curve : curves) {
    header.emplace_back(to_string(curve.precision));
    steps = std::max(steps, curve.losses.size());
  }
  std::vector<std::vector<std::string>> rows;
  for (std::size_t step = 0; step < steps; ++step) {
    std::vector<std::string> cells = {std::to_string(step + 1)};
    for (const harness::LossCurve& curve : curves)
      cells.push_back(step < curve.losses.size() ? harness::fixed(curve.losses[step], 5) : "-");
    rows.push_back(std::move(cells));
  }
  out << "\nLoss per train step (" << curves.front().size << ", ctx " << curves.front().ctx << ", batch "
      << curves.front().batch << ", one fixed batch, same initialisation)\n";
  harness::numbers_right_table(header, std::move(rows)).print(out, harness::ruled_layout);
  for (const harness::LossCurve& curve : curves)
    if (curve.max_abs_divergence_from_fp32)
      out << "largest |loss - fp32 loss| for " << to_string(curve.precision) << ": "
          << harness::fixed(curve.max_abs_divergence_from_fp32, 6) << "\n";
}

}  // namespace transformer::bench
