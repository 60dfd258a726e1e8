// The main() of every doctest binary that needs a GPU.
//
// With no usable device (no GPU, no driver: CI's case, where
// cudaGetDeviceCount reports an insufficient driver) it prints why and exits
// with 77, which ctest's SKIP_RETURN_CODE turns into "skipped", never "passed".
#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>

#include <cstdio>

#include <cuda_runtime_api.h>

int main(int argc, char** argv) {
  int devices = 0;
  const cudaError_t status = cudaGetDeviceCount(&devices);
  if (status != cudaSuccess || devices == 0) {
    std::printf("SKIPPED: no usable CUDA device (%s)\n",
                status != cudaSuccess ? cudaGetErrorString(status) : "0 devices");
    return 77;
  }
  doctest::Context context(argc, argv);
  return context.run();
}
