// cuda/parameters.hpp: parameter initialisation on the device and the bf16
// weight copy. Each element is model/init.hpp's truncated_normal(seed, flat
// index, init_std) (gains 1), the same numbers the CPU backend draws, computed
// in parallel so billions of parameters take a fraction of a second.
#pragma once
#include <cstddef>
#include <cstdint>

#include <cuda_bf16.h>
#include <cuda_runtime_api.h>

#include "model/config.hpp"

namespace transformer::cuda {

void init_parameters(const ParameterLayout& layout, std::uint64_t seed, float* params,
                     cudaStream_t stream);

// dst = bf16(src), count a multiple of 8 (after set_parameters and init).
void copy_to_bf16(const float* src, __nv_bfloat16* dst, std::size_t count, cudaStream_t stream);

}  // namespace transformer::cuda
