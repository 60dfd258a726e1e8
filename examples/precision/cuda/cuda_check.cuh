// cuda_check.cuh: the GPU half's error handling: every CUDA runtime call
// goes through GPUPROF_CUDA_CHECK (gpuprof/error.hpp), every cuBLAS call
// through PRECISION_CUBLAS_CHECK; both throw gpuprof::Error naming the
// call, the status and file:line.
#pragma once
#include <cublas_v2.h>

#include <string>

#include <gpuprof/error.hpp>

namespace precision::detail {
inline void check_cublas(cublasStatus_t status, const char* call, const char* file, int line) {
  if (status != CUBLAS_STATUS_SUCCESS)
    gpuprof::detail::throw_error(std::string(call) + " failed: " + cublasGetStatusName(status) +
                                     ": " + cublasGetStatusString(status),
                                 file, line);
}
}  // namespace precision::detail

#define PRECISION_CUBLAS_CHECK(call) \
  ::precision::detail::check_cublas((call), #call, __FILE__, __LINE__)

// After a kernel launch: a bad configuration shows up here, a fault in the
// kernel at the next synchronising call (also checked).
#define PRECISION_LAUNCH_CHECK() GPUPROF_CUDA_CHECK(cudaGetLastError())
