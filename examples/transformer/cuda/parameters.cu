// cuda/parameters.cu: device-side parameter initialisation and the fp32→bf16
// weight copy (see parameters.hpp).
#include "cuda/parameters.hpp"

#include "common/cuda_check.hpp"
#include "cuda/device_utils.cuh"
#include "model/init.hpp"

namespace transformer::cuda {
namespace {

constexpr unsigned kThreads = 256;

// One launch per tensor (a few hundred at most, once per backend): the
// element's flat index, not its index in the tensor, seeds the draw.
__global__ void init_tensor_kernel(float* params, std::size_t first, std::size_t count,
                                   std::uint64_t seed, double stddev, bool ones) {
  const std::size_t i = blockIdx.x * std::size_t{blockDim.x} + threadIdx.x;
  if (i >= count) return;
  params[first + i] = ones ? 1.0f : truncated_normal(seed, first + i, stddev);
}

__global__ void copy_to_bf16_kernel(const float* src, __nv_bfloat16* dst, std::size_t vectors) {
  const std::size_t i = blockIdx.x * std::size_t{blockDim.x} + threadIdx.x;
  if (i >= vectors) return;
  float v[kVec];
  load_vec(src + i * kVec, v);
  store_vec(dst + i * kVec, v);
}

}  // namespace

void init_parameters(const ParameterLayout& layout, std::uint64_t seed, float* params,
                     cudaStream_t stream) {
  for (const ParamTensor& tensor : layout.tensors) {
    init_tensor_kernel<<<blocks_for(tensor.size(), kThreads), kThreads, 0, stream>>>(
        params, tensor.offset, tensor.size(), seed, tensor.init_std,
        tensor.kind == ParamKind::norm_gain);
    EXAMPLE_LAUNCH_CHECK();
  }
}

void copy_to_bf16(const float* src, __nv_bfloat16* dst, std::size_t count, cudaStream_t stream) {
  const std::size_t vectors = whole_vectors("copy_to_bf16", count);
  copy_to_bf16_kernel<<<blocks_for(vectors, kThreads), kThreads, 0, stream>>>(src, dst, vectors);
  EXAMPLE_LAUNCH_CHECK();
}

}  // namespace transformer::cuda
