// toy_model.cpp: the toy model on the CPU with Eigen, one template for all
// policies: Gemm is the element type of GEMM inputs and outputs (float,
// Eigen::half, Eigen::bfloat16, or double for the reference) and Wide the
// type of parameters, LayerNorm, loss and parameter gradients (float, or
// double for the reference). GEMMs accumulate in Wide and round their result
// to Gemm once, as cuBLAS does with fp32 compute.
#include "toy_model.hpp"

#include <Eigen/Core>
#include <cmath>
#include <random>
#include <stdexcept>
#include <type_traits>

#include "eigen_dtypes.hpp"

namespace precision {
namespace {

template <class T>
using Matrix = Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
template <class T>
using RowVector = Eigen::Matrix<T, 1, Eigen::Dynamic>;

template <class To, class From>
Matrix<To> matrix_from(const std::vector<From>& values, int rows, int cols) {
  return Eigen::Map<const Matrix<From>>(values.data(), rows, cols).template cast<To>();
}

template <class T>
std::vector<double> widened(const Eigen::MatrixBase<T>& tensor) {
  const Matrix<double> wide = tensor.template cast<double>();
  return std::vector<double>(wide.data(), wide.data() + wide.size());
}

// op(A)·op(B) accumulated in Wide, rounded once to Gemm.
template <class Gemm, class Wide, class A, class B>
Matrix<Gemm> gemm(const A& a, const B& b) {
  const Matrix<Wide> product = a.template cast<Wide>() * b.template cast<Wide>();
  return product.template cast<Gemm>();
}

template <class Gemm, class Wide>
ToyRun run_policy(const ToyProblem& problem, const ToyParameters<Wide>& master) {
  const ToyDimensions& d = problem.dims;
  const auto batch = static_cast<Wide>(d.batch);
  const auto width = static_cast<Wide>(d.hidden);

  // Master parameters, and the casts autocast makes for the GEMMs.
  const Matrix<Wide> fc1 = matrix_from<Wide>(master.fc1, d.hidden, d.in_features);
  const Matrix<Wide> fc2 = matrix_from<Wide>(master.fc2, d.out_features, d.hidden);
  const RowVector<Wide> gain = matrix_from<Wide>(master.ln_gain, 1, d.hidden);
  const RowVector<Wide> bias = matrix_from<Wide>(master.ln_bias, 1, d.hidden);
  const Matrix<Gemm> fc1_gemm = fc1.template cast<Gemm>();
  const Matrix<Gemm> fc2_gemm = fc2.template cast<Gemm>();
  const Matrix<Gemm> inputs = matrix_from<Gemm>(problem.inputs, d.batch, d.in_features);

  // Forward.
  const Matrix<Gemm> fc1_output = gemm<Gemm, Wide>(inputs, fc1_gemm.transpose());
  const Matrix<Gemm> relu_output = fc1_output.cwiseMax(Gemm(0.0f));
  const Matrix<Wide> ln_input = relu_output.template cast<Wide>();
  const RowVector<Wide> ones = RowVector<Wide>::Ones(d.hidden);
  const Eigen::Matrix<Wide, Eigen::Dynamic, 1> mean = ln_input.rowwise().mean();
  const Matrix<Wide> centred = ln_input - mean * ones;
  const Eigen::Matrix<Wide, Eigen::Dynamic, 1> inverse_std =
      ((centred.array().square().rowwise().sum() / width) + static_cast<Wide>(kLayerNormEpsilon)).rsqrt();
  const Matrix<Wide> normalized = inverse_std.asDiagonal() * centred;
  const Matrix<Wide> ln_output = (normalized.array().rowwise() * gain.array()).rowwise() + bias.array();
  const Matrix<Gemm> ln_output_gemm = ln_output.template cast<Gemm>();
  const Matrix<Gemm> logits = gemm<Gemm, Wide>(ln_output_gemm, fc2_gemm.transpose());

  // Loss in Wide on widened logits; dlogits = (softmax − one_hot) / batch.
  const Matrix<Wide> wide_logits = logits.template cast<Wide>();
  Matrix<Wide> logits_gradient(d.batch, d.out_features);
  Wide loss = 0;
  for (int row = 0; row < d.batch; ++row) {
    const Wide row_max = wide_logits.row(row).maxCoeff();
    const RowVector<Wide> exps = (wide_logits.row(row).array() - row_max).exp();
    const Wide sum = exps.sum();
    const int target = problem.targets[static_cast<std::size_t>(row)];
    loss += std::log(sum) + row_max - wide_logits(row, target);
    logits_gradient.row(row) = exps / sum;
    logits_gradient(row, target) -= Wide(1);
  }
  loss /= batch;
  logits_gradient /= batch;

  // Backward, each gradient in the dtype of its tensor.
  const Matrix<Gemm> logits_gradient_gemm = logits_gradient.template cast<Gemm>();
  const Matrix<Wide> fc2_gradient =
      gemm<Gemm, Wide>(logits_gradient_gemm.transpose(), ln_output_gemm).template cast<Wide>();
  const Matrix<Wide> ln_output_gradient =
      gemm<Gemm, Wide>(logits_gradient_gemm, fc2_gemm).template cast<Wide>();
  const RowVector<Wide> gain_gradient = (ln_output_gradient.array() * normalized.array()).colwise().sum();
  const RowVector<Wide> bias_gradient = ln_output_gradient.colwise().sum();
  const Matrix<Wide> normalized_gradient = ln_output_gradient.array().rowwise() * gain.array();
  const Eigen::Matrix<Wide, Eigen::Dynamic, 1> mean_gradient = normalized_gradient.rowwise().mean();
  const Eigen::Matrix<Wide, Eigen::Dynamic, 1> mean_gradient_times_normalized =
      (normalized_gradient.array() * normalized.array()).rowwise().mean();
  const Matrix<Wide> ln_input_gradient =
      inverse_std.asDiagonal() * (normalized_gradient - mean_gradient * ones -
                                  Matrix<Wide>(mean_gradient_times_normalized.asDiagonal() * normalized));
  const Matrix<Gemm> relu_output_gradient = ln_input_gradient.template cast<Gemm>();
  const Matrix<Gemm> fc1_output_gradient =
      (fc1_output.array() > Gemm(0.0f)).select(relu_output_gradient, Gemm(0.0f));
  const Matrix<Wide> fc1_gradient =
      gemm<Gemm, Wide>(fc1_output_gradient.transpose(), inputs).template cast<Wide>();

  ToyRun run;
  run.dtypes = {dtype_name<typename decltype(fc1)::Scalar>(),
                dtype_name<typename decltype(fc1_output)::Scalar>(),
                dtype_name<typename decltype(ln_output)::Scalar>(),
                dtype_name<typename decltype(logits)::Scalar>(),
                dtype_name<decltype(loss)>(),
                dtype_name<typename decltype(fc1_gradient)::Scalar>()};
  static_assert(
      std::is_same_v<typename decltype(fc2_gradient)::Scalar, typename decltype(fc1_gradient)::Scalar> &&
          std::is_same_v<typename decltype(gain_gradient)::Scalar, typename decltype(fc1_gradient)::Scalar>,
      "all parameter gradients share one dtype, the one reported");
  run.loss = static_cast<double>(loss);
  run.gradients = {widened(fc1_gradient), widened(gain_gradient), widened(bias_gradient),
                   widened(fc2_gradient)};
  return run;
}

}  // namespace

const std::vector<Policy>& all_policies() {
  static const std::vector<Policy> policies{Policy::fp32, Policy::fp16_mixed, Policy::bf16_mixed};
  return policies;
}

const char* policy_name(Policy policy) {
  switch (policy) {
    case Policy::fp32: return "fp32";
    case Policy::fp16_mixed: return "fp16 mixed";
    case Policy::bf16_mixed: return "bf16 mixed";
  }
  throw std::invalid_argument("unknown precision policy");
}

ToyProblem make_toy_problem(const ToyDimensions& dims, std::uint64_t seed) {
  if (dims.batch < 1 || dims.in_features < 1 || dims.hidden < 1 || dims.out_features < 1)
    throw std::invalid_argument("toy model dimensions must be positive");
  std::mt19937_64 generator(seed);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  const auto draw = [&](std::size_t count, auto&& distribution) {
    std::vector<float> values(count);
    for (float& value : values) value = distribution(generator);
    return values;
  };
  const auto linear_weights = [&](int rows, int fan_in) {
    const float bound = 1.0f / std::sqrt(static_cast<float>(fan_in));
    return draw(static_cast<std::size_t>(rows) * fan_in,
                std::uniform_real_distribution<float>(-bound, bound));
  };
  const auto hidden = static_cast<std::size_t>(dims.hidden);

  ToyProblem problem;
  problem.dims = dims;
  problem.inputs = draw(static_cast<std::size_t>(dims.batch) * dims.in_features, normal);
  std::uniform_int_distribution<int> target(0, dims.out_features - 1);
  for (int row = 0; row < dims.batch; ++row) problem.targets.push_back(target(generator));
  problem.parameters.fc1 = linear_weights(dims.hidden, dims.in_features);
  problem.parameters.ln_gain = draw(hidden, normal);
  for (float& gain : problem.parameters.ln_gain) gain = 1.0f + 0.1f * gain;
  problem.parameters.ln_bias = draw(hidden, normal);
  for (float& bias : problem.parameters.ln_bias) bias *= 0.1f;
  problem.parameters.fc2 = linear_weights(dims.out_features, dims.hidden);
  return problem;
}

ToyRun run_toy_model_on_cpu(const ToyProblem& problem, Policy policy) {
  switch (policy) {
    case Policy::fp32: return run_policy<float, float>(problem, problem.parameters);
    case Policy::fp16_mixed: return run_policy<Eigen::half, float>(problem, problem.parameters);
    case Policy::bf16_mixed: return run_policy<Eigen::bfloat16, float>(problem, problem.parameters);
  }
  throw std::invalid_argument("unknown precision policy");
}

ToyRun run_toy_model_in_double(const ToyProblem& problem, const ToyParameters<double>& parameters) {
  return run_policy<double, double>(problem, parameters);
}

ToyParameters<double> widen(const ToyParameters<float>& parameters) {
  const auto to_double = [](const std::vector<float>& values) {
    return std::vector<double>(values.begin(), values.end());
  };
  return {to_double(parameters.fc1), to_double(parameters.ln_gain), to_double(parameters.ln_bias),
          to_double(parameters.fc2)};
}

double relative_error(const ToyParameters<double>& a, const ToyParameters<double>& reference) {
  double difference = 0, norm = 0;
  const auto accumulate = [&](const std::vector<double>& x, const std::vector<double>& y) {
    if (x.size() != y.size()) throw std::invalid_argument("relative_error: shapes differ");
    for (std::size_t i = 0; i < x.size(); ++i) {
      difference += (x[i] - y[i]) * (x[i] - y[i]);
      norm += y[i] * y[i];
    }
  };
  accumulate(a.fc1, reference.fc1);
  accumulate(a.ln_gain, reference.ln_gain);
  accumulate(a.ln_bias, reference.ln_bias);
  accumulate(a.fc2, reference.fc2);
  return std::sqrt(difference) / std::sqrt(norm);
}

}  // namespace precision
