// examples/readme/minimal.cu: one kernel, timed by a scope and by bench().
#include <exception>
#include <iostream>
#include <string>
#include <vector>

#include <gpuprof/gpuprof.hpp>

__global__ void scale(float* x, int n, float factor) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] *= factor;
}

int main(int argc, char** argv) try {
  if (argc > 1) {  // no options but --help: anything else is refused, not ignored
    const bool help = std::string(argv[1]) == "--help" && argc == 2;
    (help ? std::cout : std::cerr) << "usage: readme_minimal [--help]\n"
                                      "times a kernel over 64 MiB with a scope and bench(), then reports\n";
    return help ? 0 : 2;
  }
  const int n = 1 << 24;  // 64 MiB of floats, read and written once per call
  const bool gpu = gpuprof::device_status().usable;
  std::vector<float> host(gpu ? 0 : n, 1.0f);  // no GPU: the same work on the host clock
  float* x = nullptr;
  if (gpu) GPUPROF_CUDA_CHECK(cudaMalloc(&x, n * sizeof(float)));

  gpuprof::BenchOptions options;  // one cold call, 5 warm-up calls, then 20 timed calls
  options.iters = 20;
  const gpuprof::BenchResult result = gpuprof::bench(
      [&] {
        GPUPROF_SCOPE("scale", nullptr, gpuprof::Work{0, 2.0 * n * sizeof(float), 0});  // -> GB/s
        if (gpu) {
          scale<<<(n + 255) / 256, 256>>>(x, n, 0.5f);
          GPUPROF_CUDA_CHECK(cudaGetLastError());
        } else {
          for (float& value : host) value *= 0.5f;
        }
      },
      options);

  std::cout << "bench(scale): " << result.summary() << "\n\n";
  gpuprof::print_table(gpuprof::profiler().report(), std::cout);
  if (gpu) GPUPROF_CUDA_CHECK(cudaFree(x));
  return 0;
} catch (const std::exception& error) {  // a failed CUDA call: its message, exit 1
  std::cerr << "minimal: " << error.what() << "\n";
  return 1;
}
