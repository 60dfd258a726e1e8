// toy_model_gpu.cu: the toy model on the device, mirroring toy_model.cpp
// step for step: GEMMs in cuBLAS (cublasGemmEx, inputs and output in the
// policy's Gemm type, CUBLAS_COMPUTE_32F), ReLU, LayerNorm and the loss in
// small kernels of ours with fp32 arithmetic. The tensors are typed device
// buffers, so the reported dtypes are those of the buffers really used.
#include <cublas_v2.h>
#include <cuda_runtime_api.h>

#include <cmath>
#include <cstdio>
#include <stdexcept>
#include <type_traits>

#include <gpuprof/scope.hpp>

#include "common/cuda_check.hpp"
#include "common/device_buffer.hpp"
#include "cuda/device_arithmetic.cuh"
#include "gpu.hpp"

namespace precision {
namespace {

using examples::DeviceBuffer;

constexpr int kThreads = 128;
int blocks_for(int count) { return (count + kThreads - 1) / kThreads; }

template <class T>
constexpr cudaDataType_t cuda_data_type() {
  if constexpr (std::is_same_v<T, float>) return CUDA_R_32F;
  else if constexpr (std::is_same_v<T, __half>) return CUDA_R_16F;
  else return CUDA_R_16BF;
}

class CublasHandle {
 public:
  CublasHandle() {
    EXAMPLE_CUBLAS_CHECK(cublasCreate(&handle_));
    // Keep split-K partial sums in fp32 too: the policy promises fp32
    // accumulation, and cuBLAS may otherwise reduce them in the fp16/bf16
    // output type. fp32 GEMMs stay plain fp32 (no TF32) under the default math.
    EXAMPLE_CUBLAS_CHECK(cublasSetMathMode(
        handle_,
        static_cast<cublasMath_t>(CUBLAS_DEFAULT_MATH | CUBLAS_MATH_DISALLOW_REDUCED_PRECISION_REDUCTION)));
  }
  CublasHandle(const CublasHandle&) = delete;
  CublasHandle& operator=(const CublasHandle&) = delete;
  ~CublasHandle() {
    if (const cublasStatus_t status = cublasDestroy(handle_); status != CUBLAS_STATUS_SUCCESS)
      std::fprintf(stderr, "precision: cublasDestroy failed: %s\n", cublasGetStatusString(status));
  }
  cublasHandle_t get() const { return handle_; }

 private:
  cublasHandle_t handle_ = nullptr;
};

// C[m×n] = op(A)·op(B), all row-major, fp32 compute, rounded once to T.
// cuBLAS is column-major, and a row-major matrix is its transpose there,
// so we ask for Cᵀ = op(B)ᵀ·op(A)ᵀ: same operations, operands swapped.
template <class T>
void gemm(cublasHandle_t handle, bool transpose_a, bool transpose_b, int m, int n, int k,
          const DeviceBuffer<T>& a, const DeviceBuffer<T>& b, DeviceBuffer<T>& c) {
  const float one = 1.0f, zero = 0.0f;
  const int row_length_a = transpose_a ? m : k;
  const int row_length_b = transpose_b ? k : n;
  EXAMPLE_CUBLAS_CHECK(cublasGemmEx(
      handle, transpose_b ? CUBLAS_OP_T : CUBLAS_OP_N, transpose_a ? CUBLAS_OP_T : CUBLAS_OP_N, n, m, k, &one,
      b.data(), cuda_data_type<T>(), row_length_b, a.data(), cuda_data_type<T>(), row_length_a, &zero,
      c.data(), cuda_data_type<T>(), n, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
}

template <class To, class From>
__global__ void convert_kernel(const From* from, To* to, int count) {
  const int i = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
  if (i < count) to[i] = device::from_float<To>(device::to_float(from[i]));
}

template <class To, class From>
DeviceBuffer<To> converted(const DeviceBuffer<From>& from) {
  DeviceBuffer<To> to(from.size());
  convert_kernel<<<blocks_for(from.count()), kThreads>>>(from.data(), to.data(), from.count());
  EXAMPLE_LAUNCH_CHECK();
  return to;
}

template <class T>
__global__ void relu_kernel(const T* input, T* output, int count) {
  const int i = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
  if (i < count) output[i] = device::to_float(input[i]) > 0.0f ? input[i] : device::from_float<T>(0.0f);
}

// One thread per row: two-pass mean and variance in fp32 on the widened row.
template <class T>
__global__ void layernorm_forward_kernel(const T* input, const float* gain, const float* bias, int rows,
                                         int width, float epsilon, float* normalized, float* inverse_std,
                                         float* output, T* output_gemm) {
  const int row = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
  if (row >= rows) return;
  const T* x = input + row * width;
  float sum = 0.0f;
  for (int j = 0; j < width; ++j) sum += device::to_float(x[j]);
  const float mean = sum / static_cast<float>(width);
  float squares = 0.0f;
  for (int j = 0; j < width; ++j) {
    const float centred = device::to_float(x[j]) - mean;
    squares += centred * centred;
  }
  const float scale = 1.0f / sqrtf(squares / static_cast<float>(width) + epsilon);
  inverse_std[row] = scale;
  for (int j = 0; j < width; ++j) {
    const int at = row * width + j;
    normalized[at] = (device::to_float(x[j]) - mean) * scale;
    output[at] = normalized[at] * gain[j] + bias[j];
    output_gemm[at] = device::from_float<T>(output[at]);
  }
}

// One thread per row: mean cross-entropy's row term and its logit gradient
// (softmax − one_hot) / rows, in fp32, the gradient rounded to T.
template <class T>
__global__ void cross_entropy_kernel(const T* logits, const int* targets, int rows, int classes,
                                     float* row_losses, T* logits_gradient) {
  const int row = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
  if (row >= rows) return;
  const T* z = logits + row * classes;
  float row_max = device::to_float(z[0]);
  for (int j = 1; j < classes; ++j) row_max = fmaxf(row_max, device::to_float(z[j]));
  float sum = 0.0f;
  for (int j = 0; j < classes; ++j) sum += expf(device::to_float(z[j]) - row_max);
  const int target = targets[row];
  row_losses[row] = logf(sum) + row_max - device::to_float(z[target]);
  for (int j = 0; j < classes; ++j) {
    const float probability = expf(device::to_float(z[j]) - row_max) / sum;
    const float gradient = (probability - (j == target ? 1.0f : 0.0f)) / static_cast<float>(rows);
    logits_gradient[row * classes + j] = device::from_float<T>(gradient);
  }
}

// A single thread, so the loss is summed in a fixed order.
__global__ void mean_kernel(const float* values, int count, float* mean) {
  float sum = 0.0f;
  for (int i = 0; i < count; ++i) sum += values[i];
  *mean = sum / static_cast<float>(count);
}

// One thread per row: LayerNorm's input gradient in fp32, then autograd's
// cast back to T (the ReLU output's dtype) and ReLU's mask.
template <class T>
__global__ void layernorm_backward_rows_kernel(const T* output_gradient, const float* normalized,
                                               const float* inverse_std, const float* gain,
                                               const T* fc1_output, int rows, int width,
                                               T* fc1_output_gradient) {
  const int row = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
  if (row >= rows) return;
  float mean_gradient = 0.0f, mean_gradient_times_normalized = 0.0f;
  for (int j = 0; j < width; ++j) {
    const int at = row * width + j;
    const float normalized_gradient = device::to_float(output_gradient[at]) * gain[j];
    mean_gradient += normalized_gradient;
    mean_gradient_times_normalized += normalized_gradient * normalized[at];
  }
  mean_gradient /= static_cast<float>(width);
  mean_gradient_times_normalized /= static_cast<float>(width);
  for (int j = 0; j < width; ++j) {
    const int at = row * width + j;
    const float normalized_gradient = device::to_float(output_gradient[at]) * gain[j];
    const float input_gradient = inverse_std[row] * (normalized_gradient - mean_gradient -
                                                     normalized[at] * mean_gradient_times_normalized);
    fc1_output_gradient[at] = device::to_float(fc1_output[at]) > 0.0f ? device::from_float<T>(input_gradient)
                                                                      : device::from_float<T>(0.0f);
  }
}

// One thread per feature: gain and bias gradients summed over the batch.
template <class T>
__global__ void layernorm_backward_parameters_kernel(const T* output_gradient, const float* normalized,
                                                     int rows, int width, float* gain_gradient,
                                                     float* bias_gradient) {
  const int column = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
  if (column >= width) return;
  float gain_sum = 0.0f, bias_sum = 0.0f;
  for (int row = 0; row < rows; ++row) {
    const float gradient = device::to_float(output_gradient[row * width + column]);
    gain_sum += gradient * normalized[row * width + column];
    bias_sum += gradient;
  }
  gain_gradient[column] = gain_sum;
  bias_gradient[column] = bias_sum;
}

template <class T>
std::vector<double> widened(const DeviceBuffer<T>& buffer) {
  const std::vector<T> host = buffer.to_host();
  return std::vector<double>(host.begin(), host.end());
}

template <class Gemm>
ToyRun run_policy(const ToyProblem& problem) {
  const ToyDimensions& d = problem.dims;
  const int batch = d.batch, in = d.in_features, hidden = d.hidden, out = d.out_features;
  CublasHandle cublas;

  const DeviceBuffer<float> inputs(problem.inputs);
  const DeviceBuffer<int> targets(problem.targets);
  const DeviceBuffer<float> fc1(problem.parameters.fc1);
  const DeviceBuffer<float> fc2(problem.parameters.fc2);
  const DeviceBuffer<float> gain(problem.parameters.ln_gain);
  const DeviceBuffer<float> bias(problem.parameters.ln_bias);
  const DeviceBuffer<Gemm> inputs_gemm = converted<Gemm>(inputs);
  const DeviceBuffer<Gemm> fc1_gemm = converted<Gemm>(fc1);
  const DeviceBuffer<Gemm> fc2_gemm = converted<Gemm>(fc2);

  DeviceBuffer<Gemm> fc1_output(static_cast<std::size_t>(batch) * hidden);
  DeviceBuffer<Gemm> relu_output(fc1_output.size());
  DeviceBuffer<float> normalized(fc1_output.size()), inverse_std(batch);
  DeviceBuffer<float> ln_output(fc1_output.size());
  DeviceBuffer<Gemm> ln_output_gemm(fc1_output.size());
  DeviceBuffer<Gemm> logits(static_cast<std::size_t>(batch) * out);
  DeviceBuffer<float> row_losses(batch), loss(1);
  DeviceBuffer<Gemm> logits_gradient(logits.size());
  DeviceBuffer<Gemm> fc2_gradient_gemm(static_cast<std::size_t>(out) * hidden);
  DeviceBuffer<Gemm> ln_output_gradient(fc1_output.size());
  DeviceBuffer<Gemm> fc1_output_gradient(fc1_output.size());
  DeviceBuffer<float> gain_gradient(hidden), bias_gradient(hidden);
  DeviceBuffer<Gemm> fc1_gradient_gemm(static_cast<std::size_t>(hidden) * in);

  {
    GPUPROF_SCOPE("toy model forward");
    gemm(cublas.get(), false, true, batch, hidden, in, inputs_gemm, fc1_gemm, fc1_output);
    relu_kernel<<<blocks_for(fc1_output.count()), kThreads>>>(fc1_output.data(), relu_output.data(),
                                                              fc1_output.count());
    EXAMPLE_LAUNCH_CHECK();
    layernorm_forward_kernel<<<blocks_for(batch), kThreads>>>(
        relu_output.data(), gain.data(), bias.data(), batch, hidden, static_cast<float>(kLayerNormEpsilon),
        normalized.data(), inverse_std.data(), ln_output.data(), ln_output_gemm.data());
    EXAMPLE_LAUNCH_CHECK();
    gemm(cublas.get(), false, true, batch, out, hidden, ln_output_gemm, fc2_gemm, logits);
    cross_entropy_kernel<<<blocks_for(batch), kThreads>>>(logits.data(), targets.data(), batch, out,
                                                          row_losses.data(), logits_gradient.data());
    EXAMPLE_LAUNCH_CHECK();
    mean_kernel<<<1, 1>>>(row_losses.data(), batch, loss.data());
    EXAMPLE_LAUNCH_CHECK();
  }
  {
    GPUPROF_SCOPE("toy model backward");
    gemm(cublas.get(), true, false, out, hidden, batch, logits_gradient, ln_output_gemm, fc2_gradient_gemm);
    gemm(cublas.get(), false, false, batch, hidden, out, logits_gradient, fc2_gemm, ln_output_gradient);
    layernorm_backward_rows_kernel<<<blocks_for(batch), kThreads>>>(
        ln_output_gradient.data(), normalized.data(), inverse_std.data(), gain.data(), fc1_output.data(),
        batch, hidden, fc1_output_gradient.data());
    EXAMPLE_LAUNCH_CHECK();
    layernorm_backward_parameters_kernel<<<blocks_for(hidden), kThreads>>>(
        ln_output_gradient.data(), normalized.data(), batch, hidden, gain_gradient.data(),
        bias_gradient.data());
    EXAMPLE_LAUNCH_CHECK();
    gemm(cublas.get(), true, false, hidden, in, batch, fc1_output_gradient, inputs_gemm, fc1_gradient_gemm);
  }
  // Autograd's cast of an fp32 parameter to Gemm hands back an fp32 gradient.
  const DeviceBuffer<float> fc1_gradient = converted<float>(fc1_gradient_gemm);
  const DeviceBuffer<float> fc2_gradient = converted<float>(fc2_gradient_gemm);
  GPUPROF_CUDA_CHECK(cudaDeviceSynchronize());  // surfaces any fault in the kernels above

  ToyRun run;
  run.dtypes = {dtype_name<typename decltype(fc1)::value_type>(),
                dtype_name<typename decltype(fc1_output)::value_type>(),
                dtype_name<typename decltype(ln_output)::value_type>(),
                dtype_name<typename decltype(logits)::value_type>(),
                dtype_name<typename decltype(loss)::value_type>(),
                dtype_name<typename decltype(fc1_gradient)::value_type>()};
  static_assert(std::is_same_v<typename decltype(fc2_gradient)::value_type,
                               typename decltype(fc1_gradient)::value_type> &&
                    std::is_same_v<typename decltype(gain_gradient)::value_type,
                                   typename decltype(fc1_gradient)::value_type>,
                "all parameter gradients share one dtype, the one reported");
  run.loss = widened(loss).front();
  run.gradients = {widened(fc1_gradient), widened(gain_gradient), widened(bias_gradient),
                   widened(fc2_gradient)};
  return run;
}

}  // namespace

ToyRun run_toy_model_on_gpu(const ToyProblem& problem, Policy policy) {
  switch (policy) {
    case Policy::fp32: return run_policy<float>(problem);
    case Policy::fp16_mixed: return run_policy<__half>(problem);
    case Policy::bf16_mixed: return run_policy<__nv_bfloat16>(problem);
  }
  throw std::invalid_argument("unknown precision policy");
}

}  // namespace precision
