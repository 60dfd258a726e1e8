// cuda/parameters.hpp: parameter initialisation on the device. Each element
// is model/init.hpp's truncated_normal(seed, flat index, init_std) (gains 1),
// the same numbers the CPU backend draws, computed in parallel so billions of
// parameters take a fraction of a second.
#pragma once
#include <cstdint>

#include <cuda_runtime_api.h>

#include "model/config.hpp"

namespace transformer::cuda {

// Into fp32 master weights (the fp32 and tf32 backends).
void init_parameters(const ParameterLayout& layout, std::uint64_t seed, float* params, cudaStream_t stream);

// Into split master weights (the bf16 backend; split_master.hpp): hi is the
// GEMMs' bf16 weights from the start.
void init_parameters(const ParameterLayout& layout, std::uint64_t seed, std::uint16_t* hi, std::int16_t* lo,
                     cudaStream_t stream);

}  // namespace transformer::cuda
