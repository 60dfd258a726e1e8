// cuda/parameters.cu: device-side parameter initialisation (see parameters.hpp).
#include "cuda/parameters.hpp"

#include "common/cuda_check.hpp"
#include "cuda/device_utils.cuh"
#include "model/init.hpp"

namespace transformer::cuda {
namespace {

constexpr unsigned kThreads = 256;

struct Fp32Store {
  float* params;
  __device__ void operator()(std::size_t i, float x) const { params[i] = x; }
};

struct SplitStore {
  std::uint16_t* hi;
  std::int16_t* lo;
  __device__ void operator()(std::size_t i, float x) const {
    const SplitBits s = split_bits(__float_as_uint(x));
    hi[i] = s.hi;
    lo[i] = s.lo;
  }
};

// One launch per tensor (a few hundred at most, once per backend): the
// element's flat index, not its index in the tensor, seeds the draw.
template <class Store>
__global__ void init_tensor_kernel(Store store, std::size_t first, std::size_t count, std::uint64_t seed,
                                   double stddev, bool ones) {
  const std::size_t i = blockIdx.x * std::size_t{blockDim.x} + threadIdx.x;
  if (i >= count) return;
  store(first + i, ones ? 1.0f : truncated_normal(seed, first + i, stddev));
}

template <class Store>
void init_tensors(const ParameterLayout& layout, std::uint64_t seed, Store store, cudaStream_t stream) {
  for (const ParamTensor& tensor : layout.tensors) {
    init_tensor_kernel<<<blocks_for(tensor.size(), kThreads), kThreads, 0, stream>>>(
        store, tensor.offset, tensor.size(), seed, tensor.init_std, tensor.kind == ParamKind::norm_gain);
    EXAMPLE_LAUNCH_CHECK();
  }
}

}  // namespace

void init_parameters(const ParameterLayout& layout, std::uint64_t seed, float* params, cudaStream_t stream) {
  init_tensors(layout, seed, Fp32Store{params}, stream);
}

void init_parameters(const ParameterLayout& layout, std::uint64_t seed, std::uint16_t* hi, std::int16_t* lo,
                     cudaStream_t stream) {
  init_tensors(layout, seed, SplitStore{hi, lo}, stream);
}

}  // namespace transformer::cuda
