// cuda/check.hpp: error checks for the CUDA backend. Every CUDA runtime and
// cuBLAS return code goes through one of these macros, and every kernel launch
// is followed by TRANSFORMER_CHECK_LAUNCH(), so a failure throws
// std::runtime_error naming the call, the error and file:line instead of
// surfacing later as garbage numbers.
#pragma once
#include <stdexcept>
#include <string>

#include <cublas_v2.h>
#include <cuda_runtime_api.h>

namespace transformer::cuda {

[[noreturn]] inline void throw_failure(const std::string& what, const char* file, int line) {
  throw std::runtime_error(what + " (" + file + ":" + std::to_string(line) + ")");
}

inline void check_cuda(cudaError_t status, const char* call, const char* file, int line) {
  if (status != cudaSuccess)
    throw_failure(std::string(call) + " failed: " + cudaGetErrorName(status) + ": " +
                      cudaGetErrorString(status),
                  file, line);
}

inline void check_cublas(cublasStatus_t status, const char* call, const char* file, int line) {
  if (status != CUBLAS_STATUS_SUCCESS)
    throw_failure(std::string(call) + " failed: " + cublasGetStatusName(status) + ": " +
                      cublasGetStatusString(status),
                  file, line);
}

}  // namespace transformer::cuda

#define TRANSFORMER_CUDA_CHECK(call) \
  ::transformer::cuda::check_cuda((call), #call, __FILE__, __LINE__)
#define TRANSFORMER_CUBLAS_CHECK(call) \
  ::transformer::cuda::check_cublas((call), #call, __FILE__, __LINE__)
// After a <<<...>>> launch: catches bad launch configurations at once
// (asynchronous faults surface at the next synchronising call, also checked).
#define TRANSFORMER_CHECK_LAUNCH() \
  ::transformer::cuda::check_cuda(cudaGetLastError(), "kernel launch", __FILE__, __LINE__)
