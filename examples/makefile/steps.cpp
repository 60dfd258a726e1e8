// examples/makefile/steps.cpp: a small CUDA program built without CMake,
// against an installed gpuprof through pkg-config (the Makefile beside it).
// Plain C++ on the CUDA runtime, so g++ builds it, and nvcc too (-x cu).
//
// A training loop in miniature: each step copies a buffer to the device,
// clears and copies it back on a stream. The step is a ScopeHandle (values
// made inside it are used after it), its phases are GPUPROF_SCOPEs, and the
// first step (cold: first allocations, lazy module loading) is left out as
// warm-up. Without a GPU the same copies run on the host. Prints the report;
// writes it as JSON when given a path.
//
// Usage: steps [REPORT.json]
#include <algorithm>
#include <cstdio>
#include <exception>
#include <iostream>
#include <string>
#include <vector>

#include <gpuprof/gpuprof.hpp>

#if GPUPROF_WITH_CUDA
#include <cuda_runtime.h>
#endif

namespace {

constexpr std::size_t values = 1 << 22;  // 16 MiB of floats

#if GPUPROF_WITH_CUDA
void check(cudaError_t status, const char* what) {
  if (status != cudaSuccess) throw gpuprof::Error(std::string(what) + ": " + cudaGetErrorString(status));
}
#endif

}  // namespace

int main(int argc, char** argv) {
  if (argc > 2) {
    std::fprintf(stderr, "usage: steps [REPORT.json]\n");
    return 2;
  }
  try {
    auto& profiler = gpuprof::profiler();
    profiler.set_warmup(1);
    std::vector<float> host(values, 1.0f), staged(values);
    const bool gpu = profiler.timing_source() == gpuprof::TimingSource::cuda_events;
    gpuprof::Stream stream = nullptr;  // cudaStream_t with the toolkit
#if GPUPROF_WITH_CUDA
    float* device = nullptr;
    if (gpu) {
      check(cudaStreamCreate(&stream), "cudaStreamCreate");
      check(cudaMalloc(&device, values * sizeof(float)), "cudaMalloc");
    }
#endif
    double checksum = 0;
    for (int step = 0; step < 6; ++step) {
      gpuprof::ScopeHandle scope = gpuprof::begin_scope("step", stream);
      const std::size_t bytes = values * sizeof(float);
      {
        GPUPROF_SCOPE("upload", stream, gpuprof::Work{0, static_cast<double>(bytes), 0});
#if GPUPROF_WITH_CUDA
        if (gpu) check(cudaMemcpyAsync(device, host.data(), bytes, cudaMemcpyHostToDevice, stream), "upload");
#endif
        if (!gpu) std::copy(host.begin(), host.end(), staged.begin());  // the host's stand-in
      }
      {
        GPUPROF_SCOPE("clear and download", stream);
#if GPUPROF_WITH_CUDA
        if (gpu) {
          check(cudaMemsetAsync(device, 0, bytes / 2, stream), "clear");
          check(cudaMemcpyAsync(host.data(), device, bytes, cudaMemcpyDeviceToHost, stream), "download");
          check(cudaStreamSynchronize(stream), "synchronize");
        }
#endif
        if (!gpu) {
          std::fill(staged.begin(), staged.begin() + values / 2, 0.0f);
          std::copy(staged.begin(), staged.end(), host.begin());
        }
      }
      scope.end();
      checksum += host[values - 1];  // made inside the step, used after it
    }
#if GPUPROF_WITH_CUDA
    if (gpu) {
      check(cudaFree(device), "cudaFree");
      check(cudaStreamDestroy(stream), "cudaStreamDestroy");
    }
#endif
    const gpuprof::Report report = profiler.report();
    gpuprof::print_table(report, std::cout);
    std::printf("timing: %s\nbuilt with GPUPROF_WITH_CUDA=%d\nchecksum: %g\n",
                gpuprof::timing_source_name(report.timing_source), GPUPROF_WITH_CUDA, checksum);
    if (argc == 2) gpuprof::write_json(report, argv[1]);
    return 0;
  } catch (const std::exception& error) {
    std::fprintf(stderr, "steps: %s\n", error.what());
    return 1;
  }
}
