// gpuprof/detail/cupti_launch_apis.hpp: which CUDA runtime and driver
// functions launch work that kernel capture records. Plain host code (no CUPTI
// types), so the choice is tested without a GPU.
//
// Kernel capture ties a kernel, copy or memset to its scope through the API
// call that launched it (detail/cupti_join.hpp); no other call matters to it.
// Eager PyTorch makes several other calls per kernel (cudaGetDevice,
// cudaGetLastError, stream and event queries), so with launch callbacks
// (KernelCaptureOptions::launch_callbacks) the capture asks CUPTI to call it
// back on these functions only. Functions are told apart by CUPTI's name for
// each callback id, so launch variants a later CUDA adds (such as
// __cudaLaunchKernel in CUDA 13) are covered without a list to maintain.
#pragma once
#include <string_view>

#include "../config.hpp"

GPUPROF_NAMESPACE_BEGIN
namespace detail {

// True for a function that can put a kernel, copy or memset on the GPU:
// kernel and host-function launches (cudaLaunchKernel, cuLaunchKernelEx, ...),
// copies and memsets (cudaMemcpyAsync, cuMemsetD32Async, ...) and graph
// launches; false for graph construction calls that only name copies or
// memsets (cudaGraphAddMemcpyNode) and for everything else. `name` is
// CUPTI's, with or without its version suffix (cudaLaunchKernel_v7000).
inline bool api_launches_work(std::string_view name) {
  constexpr auto npos = std::string_view::npos;
  if (name.find("Graph") != npos) return name.find("GraphLaunch") != npos;
  return name.find("Launch") != npos || name.find("Memcpy") != npos || name.find("Memset") != npos;
}

}  // namespace detail
GPUPROF_NAMESPACE_END
