// gpuprof/error.hpp: the exception types gpuprof throws, and the check that
// turns a failed CUDA runtime call into one (with the call, file and line).
#pragma once
#include <stdexcept>
#include <string>

#include "config.hpp"

#if GPUPROF_WITH_CUDA
#include <cuda_runtime_api.h>
#endif

GPUPROF_NAMESPACE_BEGIN

struct Error : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// The input is at fault, not the program: a file that is not JSON, not the
// kind expected, inconsistent, or beyond a reader limit (input_limits.hpp).
// The tools answer every gpuprof::Error with exit status 2 and any other
// exception with 1; this type lets a caller tell bad input from the rest.
struct InputError : Error {
  using Error::Error;
};

namespace detail {
[[noreturn]] inline void throw_error(const std::string& what, const char* file, int line) {
  throw Error(what + " (" + file + ":" + std::to_string(line) + ")");
}

#if GPUPROF_WITH_CUDA
inline void check_cuda(cudaError_t status, const char* call, const char* file, int line) {
  if (status != cudaSuccess)
    throw_error(
        std::string(call) + " failed: " + cudaGetErrorName(status) + ": " + cudaGetErrorString(status), file,
        line);
}
#endif
}  // namespace detail

GPUPROF_NAMESPACE_END

#if GPUPROF_WITH_CUDA
// Throws gpuprof::Error naming the call when it does not return cudaSuccess.
#define GPUPROF_CUDA_CHECK(call) ::gpuprof::detail::check_cuda((call), #call, __FILE__, __LINE__)
#endif
