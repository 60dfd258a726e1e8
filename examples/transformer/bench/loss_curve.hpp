// bench/loss_curve.hpp: --loss-curve N, the mixed-precision study on the
// Transformer: the same initialisation and the same fixed batch trained for N
// steps in each precision, to see how far tf32 and bf16 drift from fp32.
#pragma once
#include <iosfwd>
#include <vector>

#include "harness/device.hpp"
#include "harness/bench_results.hpp"
#include "harness/run.hpp"

namespace transformer::bench {

// One curve for fp32 (the reference, run even when not asked for) and one per
// other precision the device supports (others are skipped with a message on
// stderr), each from a fresh backend built from `config` with its precision
// replaced, and the largest divergence of each from fp32.
std::vector<harness::LossCurve> run_loss_curves(const harness::Device& device, const RunConfig& config,
                                                const std::vector<Precision>& precisions,
                                                const harness::TokenBatch& batch, int steps);

// The step × precision table and each precision's largest divergence from fp32.
void print_loss_curves(std::ostream& out, const std::vector<harness::LossCurve>& curves);

}  // namespace transformer::bench
