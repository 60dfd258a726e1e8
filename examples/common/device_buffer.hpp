// common/device_buffer.hpp: the examples' owning, typed device allocation.
// The element type is the tensor's dtype, so the precision demo's
// dtype_name<DeviceBuffer<T>::value_type> reports what the GPU really
// computed in.
#pragma once
#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdio>
#include <utility>
#include <vector>

#include <gpuprof/error.hpp>

namespace examples {

template <class T>
class DeviceBuffer {
 public:
  using value_type = T;

  explicit DeviceBuffer(std::size_t count) : count_(count) {
    GPUPROF_CUDA_CHECK(cudaMalloc(reinterpret_cast<void**>(&data_), count * sizeof(T)));
  }
  explicit DeviceBuffer(const std::vector<T>& host) : DeviceBuffer(host.size()) {
    GPUPROF_CUDA_CHECK(cudaMemcpy(data_, host.data(), count_ * sizeof(T), cudaMemcpyHostToDevice));
  }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  DeviceBuffer(DeviceBuffer&& other) noexcept
      : count_(std::exchange(other.count_, 0)), data_(std::exchange(other.data_, nullptr)) {}
  DeviceBuffer& operator=(DeviceBuffer&&) = delete;  // not needed; keeps ownership simple
  ~DeviceBuffer() {
    // A destructor cannot throw; a failed free means the context is already
    // broken, and the call that broke it has thrown. Say so, do not hide it.
    if (data_ == nullptr) return;  // moved from
    if (const cudaError_t status = cudaFree(data_); status != cudaSuccess)
      std::fprintf(stderr, "cudaFree failed: %s\n", cudaGetErrorString(status));
  }

  T* data() { return data_; }
  const T* data() const { return data_; }
  std::size_t size() const { return count_; }
  int count() const { return static_cast<int>(count_); }

  std::vector<T> to_host() const {
    std::vector<T> host(count_);
    GPUPROF_CUDA_CHECK(cudaMemcpy(host.data(), data_, count_ * sizeof(T), cudaMemcpyDeviceToHost));
    return host;
  }

 private:
  std::size_t count_;
  T* data_ = nullptr;
};

}  // namespace examples
