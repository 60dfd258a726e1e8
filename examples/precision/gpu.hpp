// gpu.hpp: the GPU halves of the two demos. Declared only in builds with
// CUDA (PRECISION_WITH_CUDA=1, set by CMakeLists.txt); the programs call
// them only after gpuprof::device_status() found a usable device.
// Every CUDA and cuBLAS failure throws gpuprof::Error.
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "accumulation.hpp"
#include "toy_model.hpp"

#if PRECISION_WITH_CUDA
namespace precision {

// Why this build's kernels cannot run on the current device (older than
// sm_80, or built for other architectures), or nothing when they can.
std::optional<std::string> missing_device_code();

// docs/model.md's six cases in CUDA kernels (__half, __nv_bfloat16, fp32), in the
// order and with the fields of accumulate_on_cpu().
std::vector<AccumulationRow> accumulate_on_gpu();

// The toy model's forward, loss and backward under `policy` with cuBLAS
// (cublasGemmEx, fp32 compute) and our kernels for ReLU, LayerNorm and loss.
ToyRun run_toy_model_on_gpu(const ToyProblem& problem, Policy policy);

}  // namespace precision
#endif
