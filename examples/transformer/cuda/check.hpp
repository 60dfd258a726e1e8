// cuda/check.hpp: the CUDA backend's former names for the examples' checks
// (common/cuda_check.hpp), kept only until the backend's .cu files name those
// directly; then this header goes.
#pragma once
#include "common/cuda_check.hpp"

#define TRANSFORMER_CUDA_CHECK(call) GPUPROF_CUDA_CHECK(call)
#define TRANSFORMER_CUBLAS_CHECK(call) EXAMPLE_CUBLAS_CHECK(call)
#define TRANSFORMER_CHECK_LAUNCH() EXAMPLE_LAUNCH_CHECK()
