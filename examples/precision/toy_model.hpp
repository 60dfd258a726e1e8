// toy_model.hpp: docs/model.md's toy model, fc1 → ReLU → LayerNorm → fc2 (no
// Linear biases; LayerNorm has its gain and bias, as nn.LayerNorm does),
// with mean cross-entropy loss, run under three precision policies that
// follow PyTorch's autocast rules.
//
// Under a mixed policy the parameters stay fp32 (master copies); each GEMM
// casts its inputs to fp16/bf16, accumulates in fp32 and writes fp16/bf16;
// LayerNorm and the loss run in fp32 on widened inputs. Backward mirrors
// autograd: a gradient has the dtype of the tensor it belongs to, and the
// cast of a parameter to fp16 hands back an fp32 gradient.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace precision {

enum class Policy { fp32, fp16_mixed, bf16_mixed };
const std::vector<Policy>& all_policies();
const char* policy_name(Policy policy);  // "fp32", "fp16 mixed", "bf16 mixed"

struct ToyDimensions {
  int batch = 16;
  int in_features = 32;
  int hidden = 10;  // docs/model.md: Linear(in, 10), LayerNorm(10)
  int out_features = 8;
};

constexpr double kLayerNormEpsilon = 1e-5;  // nn.LayerNorm's default

// Parameters (or their gradients, same shapes), row-major, W stored
// [out, in] and applied as x·Wᵀ.
template <class T>
struct ToyParameters {
  std::vector<T> fc1;      // [hidden, in_features]
  std::vector<T> ln_gain;  // [hidden]
  std::vector<T> ln_bias;  // [hidden]
  std::vector<T> fc2;      // [out_features, hidden]
};

struct ToyProblem {
  ToyDimensions dims;
  std::vector<float> inputs;  // [batch, in_features]
  std::vector<int> targets;   // [batch], classes in [0, out_features)
  ToyParameters<float> parameters;
};

// Inputs N(0, 1); Linear weights U(±1/√fan_in) as nn.Linear draws them;
// LayerNorm gain 1 + N(0, 0.1²) and bias N(0, 0.1²), so their gradients
// are not the trivial ones of a fresh layer.
ToyProblem make_toy_problem(const ToyDimensions& dims, std::uint64_t seed);

// The dtype of each tensor a run produced, read from its element type.
struct ToyDtypes {
  std::string parameters, fc1_output, layernorm_output, logits, loss, gradients;
};

struct ToyRun {
  ToyDtypes dtypes;
  double loss = 0;                  // widened exactly from the loss tensor
  ToyParameters<double> gradients;  // widened exactly from the gradient tensors
};

ToyRun run_toy_model_on_cpu(const ToyProblem& problem, Policy policy);

// Every tensor in fp64, with the given parameters: the reference that the
// policies are measured against and that finite differences check.
ToyRun run_toy_model_in_double(const ToyProblem& problem, const ToyParameters<double>& parameters);
ToyParameters<double> widen(const ToyParameters<float>& parameters);

// ‖a − reference‖₂ / ‖reference‖₂ over all four tensors together.
double relative_error(const ToyParameters<double>& a, const ToyParameters<double>& reference);

}  // namespace precision
