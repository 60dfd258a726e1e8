// bench/gemm_ceiling.cpp: the cuBLAS products behind the MFU ceilings, made
// through the backend's own front end (cuda/gemm.hpp), so the ceilings use the
// same precision policy as the model's products.
#include "bench/gemm_ceiling.hpp"

#include <stdexcept>

#if TRANSFORMER_CUDA_BACKEND
#include <cuda_runtime_api.h>

#include <gpuprof/bench.hpp>
#include <gpuprof/error.hpp>

#include <cstdint>
#include <cstring>
#include <vector>

#include "common/device_buffer.hpp"
#include "cuda/gemm.hpp"
#include "model/init.hpp"
#endif

namespace transformer::bench {

#if TRANSFORMER_CUDA_BACKEND
namespace {

// Uniform in [-1, 1): the values only need to be non-trivial, so tensor cores
// do real work (all-zero inputs can run measurably faster).
std::vector<float> random_matrix(std::size_t count, std::uint64_t seed) {
  std::vector<float> values(count);
  for (std::size_t i = 0; i < count; ++i) values[i] = static_cast<float>(uniform_open01(seed, i) * 2.0 - 1.0);
  return values;
}

// bf16 by round-to-nearest-even of the fp32 bits (inputs are finite).
std::vector<std::uint16_t> to_bf16(const std::vector<float>& values) {
  std::vector<std::uint16_t> out(values.size());
  for (std::size_t i = 0; i < values.size(); ++i) {
    std::uint32_t bits;
    std::memcpy(&bits, &values[i], 4);
    bits += 0x7FFFu + ((bits >> 16) & 1u);
    out[i] = static_cast<std::uint16_t>(bits >> 16);
  }
  return out;
}

}  // namespace

std::map<Precision, double> measure_gemm_ceilings(const GemmCeilingOptions& options) {
  const auto n = static_cast<std::size_t>(options.n);
  const std::size_t count = n * n;
  const std::vector<float> a_host = random_matrix(count, 1), b_host = random_matrix(count, 2);

  cudaStream_t stream = nullptr;
  GPUPROF_CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  struct StreamGuard {
    cudaStream_t stream;
    ~StreamGuard() { cudaStreamDestroy(stream); }
  } stream_guard{stream};
  // fp32 operands serve fp32 and tf32; bf16 operands are converted copies.
  using examples::DeviceBuffer;
  const DeviceBuffer<float> a32(a_host), b32(b_host);
  const DeviceBuffer<std::uint16_t> a16(to_bf16(a_host)), b16(to_bf16(b_host));
  DeviceBuffer<float> c32(count);
  DeviceBuffer<std::uint16_t> c16(count);

  const int dimension = options.n;
  std::map<Precision, double> ceilings;
  // One cuBLAS handle per precision, set up by cuda::Gemm exactly as the
  // backend's own products are (compute type, math mode).
  for (const Precision precision : {Precision::fp32, Precision::tf32, Precision::bf16}) {
    const cuda::Gemm gemm(precision, stream);
    const bool is_bf16 = precision == Precision::bf16;
    const cudaDataType_t type = is_bf16 ? CUDA_R_16BF : CUDA_R_32F;
    const cuda::Operand a{is_bf16 ? static_cast<const void*>(a16.data()) : a32.data(), type, dimension};
    const cuda::Operand b{is_bf16 ? static_cast<const void*>(b16.data()) : b32.data(), type, dimension};
    const cuda::Output c{is_bf16 ? static_cast<void*>(c16.data()) : c32.data(), type, dimension};
    const auto product = [&] {
      cuda::matmul(gemm, cuda::Op::none, cuda::Op::none, dimension, dimension, dimension, 1.0f, a, b, 0.0f,
                   c);
    };
    gpuprof::BenchOptions bench_options;
    bench_options.warmup = options.warmup;
    bench_options.iters = options.iters;
    bench_options.stream = stream;
    const gpuprof::BenchResult result = gpuprof::bench(product, bench_options);
    const double seconds = result.gpu.median / 1e3;
    ceilings[precision] =
        2.0 * static_cast<double>(n) * static_cast<double>(n) * static_cast<double>(n) / seconds / 1e12;
  }
  return ceilings;
}

#else

std::map<Precision, double> measure_gemm_ceilings(const GemmCeilingOptions&) {
  throw std::runtime_error("GEMM ceilings need CUDA: this build has no CUDA toolkit");
}

#endif

}  // namespace transformer::bench
