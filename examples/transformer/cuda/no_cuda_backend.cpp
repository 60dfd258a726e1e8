// cuda/no_cuda_backend.cpp: the CUDA backend's entry points in a build without
// the CUDA toolkit (GPUPROF_HAVE_CUDA off or no nvcc). They say so honestly:
// the backend is unavailable and constructing one throws.
#include <optional>
#include <stdexcept>
#include <string>

#include "model/backend.hpp"

namespace transformer {

bool cuda_backend_available(std::string* why_not) {
  if (why_not) *why_not = "built without CUDA";
  return false;
}

std::unique_ptr<Backend> make_cuda_backend(const RunConfig&) {
  throw std::runtime_error("built without CUDA");
}

std::size_t cuda_backend_bytes(const RunConfig&) { throw std::runtime_error("built without CUDA"); }

std::optional<std::string> cudnn_runtime_version() { return std::nullopt; }

}  // namespace transformer
