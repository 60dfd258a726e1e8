// common/cuda_check.hpp: the examples' one error-check idiom. Every CUDA
// runtime call goes through the library's GPUPROF_CUDA_CHECK, every cuBLAS
// call through EXAMPLE_CUBLAS_CHECK, and every <<<...>>> launch is followed by
// EXAMPLE_LAUNCH_CHECK(); each throws gpuprof::Error (a std::runtime_error)
// naming the call, the status and file:line, instead of letting a failure
// surface later as garbage numbers.
#pragma once
#include <string>

#include <cublas_v2.h>
#include <cuda_runtime_api.h>

#include <gpuprof/error.hpp>

namespace examples {

inline void check_cublas(cublasStatus_t status, const char* call, const char* file, int line) {
  if (status != CUBLAS_STATUS_SUCCESS)
    throw gpuprof::Error(std::string(call) + " failed: " + cublasGetStatusName(status) + ": " +
                         cublasGetStatusString(status) + " (" + file + ":" + std::to_string(line) + ")");
}

}  // namespace examples

#define EXAMPLE_CUBLAS_CHECK(call) ::examples::check_cublas((call), #call, __FILE__, __LINE__)
// A bad launch configuration shows up here at once; a fault inside the kernel
// at the next synchronising call, which is checked too.
#define EXAMPLE_LAUNCH_CHECK() GPUPROF_CUDA_CHECK(cudaGetLastError())
