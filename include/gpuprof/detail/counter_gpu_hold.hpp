// gpuprof/detail/counter_gpu_hold.hpp: holds the GPU at the start of a
// scope-ranged replay pass until the host has pushed the pass's first range.
//
// The host's first launches of a pass are slow (CUPTI's set-up), and the
// GPU, idle since the last pass ended, would run the first scope's push at
// once and wait for them inside that scope's range: its duration read
// 10-80 us more than its kernels on an H200 (docs/counters.md). So each
// pass opens with a kernel, outside any range, that waits until the host
// has pushed and popped the pass's first range (release()) and only then
// lets the ranges' commands, queued behind it, run back to back. The
// timeout bounds the wait for a scope that synchronises with the GPU before
// it ends (that host call waits for the timeout, once a pass). The kernel is
// PTX, so that a host compiler builds this header (the driver compiles it
// for the GPU); the release count sits in mapped host memory.
#pragma once
#include <cuda_runtime_api.h>

#include <cstdint>

#include "../config.hpp"
#include "../error.hpp"

GPUPROF_NAMESPACE_BEGIN
namespace detail {

class GpuHold {
 public:
  static constexpr std::uint64_t timeout_ns = 10'000'000;

  void load() {
    // Returns once *released >= ticket, or after timeout ns.
    static constexpr char ptx[] =
        ".version 6.3\n.target sm_75\n.address_size 64\n"
        ".visible .entry gpuprof_hold(.param .u64 released, .param .u64 ticket, .param .u64 timeout) {\n"
        "  .reg .pred %p<3>;\n  .reg .b64 %rd<8>;\n"
        "  ld.param.u64 %rd1, [released];\n  ld.param.u64 %rd2, [ticket];\n  ld.param.u64 %rd3, [timeout];\n"
        "  mov.u64 %rd4, %globaltimer;\n"
        "WAIT:\n"
        "  ld.volatile.u64 %rd5, [%rd1];\n  setp.ge.u64 %p1, %rd5, %rd2;\n  @%p1 bra DONE;\n"
        "  mov.u64 %rd6, %globaltimer;\n  sub.u64 %rd7, %rd6, %rd4;\n  setp.lt.u64 %p2, %rd7, %rd3;\n"
        "  @%p2 bra WAIT;\n"
        "DONE:\n  ret;\n}\n";
    GPUPROF_CUDA_CHECK(cudaLibraryLoadData(&library_, ptx, nullptr, nullptr, 0, nullptr, nullptr, 0));
    GPUPROF_CUDA_CHECK(cudaLibraryGetKernel(&kernel_, library_, "gpuprof_hold"));
    void* released = nullptr;
    GPUPROF_CUDA_CHECK(cudaHostAlloc(&released, sizeof(std::uint64_t), cudaHostAllocMapped));
    released_ = static_cast<volatile std::uint64_t*>(released);
    *released_ = 0;
    GPUPROF_CUDA_CHECK(cudaHostGetDevicePointer(&released_on_gpu_, released, 0));
  }
  // Each hold waits for its own ticket, so the count never goes back.
  void hold() {
    std::uint64_t ticket = ++holds_;
    std::uint64_t timeout = timeout_ns;
    void* args[] = {&released_on_gpu_, &ticket, &timeout};
    GPUPROF_CUDA_CHECK(
        cudaLaunchKernel(reinterpret_cast<const void*>(kernel_), dim3(1), dim3(1), args, 0, nullptr));
    holding_ = true;
  }
  void release() noexcept {
    if (!holding_) return;
    *released_ = holds_;
    holding_ = false;
  }
  void close() noexcept {
    if (released_) {
      // Teardown: nothing to do about a failure. A pass cut short may leave
      // its hold waiting: released, it ends before the memory goes.
      release();
      (void)cudaDeviceSynchronize();
      (void)cudaFreeHost(const_cast<std::uint64_t*>(released_));
      released_ = nullptr;
    }
    if (library_) {
      (void)cudaLibraryUnload(library_);
      library_ = nullptr;
    }
  }

 private:
  cudaLibrary_t library_ = nullptr;
  cudaKernel_t kernel_ = nullptr;
  volatile std::uint64_t* released_ = nullptr;  // mapped host memory: the last hold released
  void* released_on_gpu_ = nullptr;
  std::uint64_t holds_ = 0;  // holds launched, the last one's ticket
  bool holding_ = false;
};

}  // namespace detail
GPUPROF_NAMESPACE_END
