// harness/device.cpp: device selection and the driver's own CUDA runtime queries.
#include "harness/device.hpp"

#include <gpuprof/error.hpp>

namespace transformer::harness {

Device Device::select(DeviceChoice choice) {
  Device device;
  if (choice != DeviceChoice::cpu) {
    std::string why_not;
    if (cuda_backend_available(&why_not)) {
      device.cuda_ = true;
      device.cudnn_ = cudnn_runtime_version();
#if GPUPROF_WITH_CUDA
      int index = 0;
      cudaDeviceProp properties{};
      GPUPROF_CUDA_CHECK(cudaGetDevice(&index));
      GPUPROF_CUDA_CHECK(cudaGetDeviceProperties(&properties, index));
      device.name_ = properties.name;
#endif
      return device;
    }
    if (choice == DeviceChoice::cuda)
      throw DeviceUnavailable("--device cuda: no usable GPU (" + why_not + ")");
    device.notice_ = "no usable GPU (" + why_not + "): running on the CPU backend, fp32 only";
  }
  device.name_ = "CPU (Eigen backend)";
  return device;
}

std::unique_ptr<Backend> Device::make_backend(const RunConfig& config) const {
  return cuda_ ? make_cuda_backend(config) : make_cpu_backend(config);
}

std::optional<std::size_t> Device::memory_in_use() const {
#if GPUPROF_WITH_CUDA
  if (cuda_) {
    std::size_t free_bytes = 0, total_bytes = 0;
    GPUPROF_CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total_bytes));
    return total_bytes - free_bytes;
  }
#endif
  return std::nullopt;
}

}  // namespace transformer::harness
