// A .cu file that uses gpuprof the way a Makefile build with only
// -I<prefix>/include would: nvcc_message_test.cmake compiles it with and
// without GPUPROF_WITH_CUDA and reads what nvcc says.
#include <gpuprof/scope.hpp>

__global__ void touch(int* value) { *value = 1; }

void scoped_launch(int* value) {
  GPUPROF_SCOPE("launch");
  touch<<<1, 1>>>(value);
}
