// cuda/tests/gpu_support.hpp: what the CUDA backend's GPU tests share: device
// arrays that start poisoned with NaN (so an element a kernel fails to write
// fails the comparison), conversions to and from the stored types, and the
// norm-wise comparison ‖got − want‖₂ / ‖want‖₂ that every check uses, printed
// per tensor so a run on the GPU shows the margins, not just pass/fail.
#pragma once
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include <cuda_bf16.h>
#include <cuda_runtime_api.h>
#include <doctest/doctest.h>

#include "common/cuda_check.hpp"
#include "cuda/split_master.hpp"
#include "model/backend.hpp"

namespace transformer::cuda::test {

using bf16 = __nv_bfloat16;

template <class T>
T to_stored(double x) {
  if constexpr (std::is_same_v<T, bf16>) return __float2bfloat16_rn(static_cast<float>(x));
  else return static_cast<T>(x);
}

template <class T>
double to_double(T x) {
  if constexpr (std::is_same_v<T, bf16>) return static_cast<double>(__bfloat162float(x));
  else return static_cast<double>(x);
}

// The values a T can hold nearest to `values`: references are computed from
// these, so a test measures the kernel, not the rounding of its inputs.
template <class T>
std::vector<double> round_to(const std::vector<double>& values) {
  std::vector<double> rounded(values.size());
  for (std::size_t i = 0; i < values.size(); ++i) rounded[i] = to_double(to_stored<T>(values[i]));
  return rounded;
}

template <class T>
class DeviceArray {
 public:
  explicit DeviceArray(std::size_t count) : count_(count) {
    void* memory = nullptr;
    GPUPROF_CUDA_CHECK(cudaMalloc(&memory, count * sizeof(T)));
    data_ = static_cast<T*>(memory);
    GPUPROF_CUDA_CHECK(cudaMemset(data_, 0xFF, count * sizeof(T)));  // NaN for float/bf16
  }
  template <class U>
  explicit DeviceArray(const std::vector<U>& values) : DeviceArray(values.size()) {
    upload(values);
  }
  ~DeviceArray() { cudaFree(data_); }
  DeviceArray(const DeviceArray&) = delete;
  DeviceArray& operator=(const DeviceArray&) = delete;

  T* get() const { return data_; }
  std::size_t size() const { return count_; }

  template <class U>
  void upload(const std::vector<U>& values) {
    REQUIRE(values.size() == count_);
    std::vector<T> stored(count_);
    for (std::size_t i = 0; i < count_; ++i) stored[i] = to_stored<T>(static_cast<double>(values[i]));
    GPUPROF_CUDA_CHECK(cudaMemcpy(data_, stored.data(), count_ * sizeof(T), cudaMemcpyHostToDevice));
  }

  std::vector<double> download() const {
    std::vector<T> stored(count_);
    GPUPROF_CUDA_CHECK(cudaDeviceSynchronize());
    GPUPROF_CUDA_CHECK(cudaMemcpy(stored.data(), data_, count_ * sizeof(T), cudaMemcpyDeviceToHost));
    std::vector<double> values(count_);
    for (std::size_t i = 0; i < count_; ++i) values[i] = to_double(stored[i]);
    return values;
  }

 private:
  T* data_ = nullptr;
  std::size_t count_;
};

// Master weights stored as the bf16 backend stores them (split_master.hpp),
// from values that are floats; view() is what its kernels read.
class DeviceSplitMaster {
 public:
  explicit DeviceSplitMaster(const std::vector<double>& values) : hi_(values.size()), lo_(values.size()) {
    std::vector<float> floats(values.begin(), values.end());
    std::vector<std::uint16_t> hi(values.size());
    std::vector<std::int16_t> lo(values.size());
    split_floats(floats.data(), hi.data(), lo.data(), floats.size());
    hi_.upload(hi);
    lo_.upload(lo);
  }
  MasterWeights view() const { return {hi_.get(), lo_.get()}; }
  std::uint16_t* hi() const { return hi_.get(); }
  std::int16_t* lo() const { return lo_.get(); }
  // The floats the halves stand for, and the upper halves as bf16 values.
  std::vector<double> joined() const { return convert(false); }
  std::vector<double> upper_halves() const { return convert(true); }

 private:
  std::vector<double> convert(bool upper_only) const {
    const std::vector<double> hi = hi_.download(), lo = lo_.download();
    std::vector<double> values(hi.size());
    for (std::size_t i = 0; i < hi.size(); ++i) {
      const auto hi_bits = static_cast<std::uint16_t>(hi[i]);
      const std::uint32_t bits =
          upper_only ? std::uint32_t{hi_bits} << 16 : join_bits(hi_bits, static_cast<std::int16_t>(lo[i]));
      float f;
      std::memcpy(&f, &bits, sizeof f);
      values[i] = f;
    }
    return values;
  }
  DeviceArray<std::uint16_t> hi_;
  DeviceArray<std::int16_t> lo_;
};

inline std::mt19937_64& rng() {
  static std::mt19937_64 engine(20250608);
  return engine;
}

inline std::vector<double> random_values(std::size_t count, double mean = 0, double scale = 1) {
  std::normal_distribution<double> normal(mean, scale);
  std::vector<double> values(count);
  for (double& v : values) v = normal(rng());
  return values;
}

inline std::vector<std::int32_t> random_ids(std::size_t count, int limit) {
  std::uniform_int_distribution<std::int32_t> pick(0, limit - 1);
  std::vector<std::int32_t> ids(count);
  for (auto& id : ids) id = pick(rng());
  return ids;
}

// Norm-wise relative error; NaN anywhere (an unwritten, poisoned element)
// makes it infinite and is counted.
struct Comparison {
  double relative = 0;
  std::size_t nans = 0;
  std::size_t worst = 0;  // index of the largest |got − want|
};

inline Comparison compare(const double* got, const double* want, std::size_t count) {
  Comparison c;
  double diff2 = 0, ref2 = 0, worst = -1;
  for (std::size_t i = 0; i < count; ++i) {
    if (std::isnan(got[i])) {
      if (c.nans++ == 0) c.worst = i;
      continue;
    }
    const double diff = got[i] - want[i];
    diff2 += diff * diff;
    ref2 += want[i] * want[i];
    if (c.nans == 0 && std::abs(diff) > worst) {
      worst = std::abs(diff);
      c.worst = i;
    }
  }
  c.relative = c.nans ? INFINITY : std::sqrt(diff2) / std::max(std::sqrt(ref2), 1e-300);
  return c;
}

inline void check_close(const std::string& what, const double* got, const double* want, std::size_t count,
                        double tolerance) {
  REQUIRE(count > 0);
  const Comparison c = compare(got, want, count);
  std::printf("  %-48s rel err %.3e (tolerance %.0e)%s\n", what.c_str(), c.relative, tolerance,
              c.relative <= tolerance ? "" : "  <-- FAIL");
  CHECK_MESSAGE(c.relative <= tolerance, what << ": ‖got − want‖/‖want‖ = " << c.relative << " > "
                                              << tolerance << "; " << c.nans << " NaN (unwritten) of "
                                              << count << "; at [" << c.worst << "] got " << got[c.worst]
                                              << ", want " << want[c.worst]);
}

inline void check_close(const std::string& what, const std::vector<double>& got,
                        const std::vector<double>& want, double tolerance) {
  REQUIRE(got.size() == want.size());
  check_close(what, got.data(), want.data(), got.size(), tolerance);
}

inline ModelConfig custom_config(const char* name, int vocab, int d_model, int heads, int d_ff, int layers) {
  ModelConfig config;
  config.name = name;
  config.vocab = vocab;
  config.d_model = d_model;
  config.heads = heads;
  config.d_ff = d_ff;
  config.layers = layers;
  return config;
}

// Two layers, two heads, d_ff ≠ d: every structural feature, milliseconds on the CPU.
inline ModelConfig little_config() { return custom_config("little", 64, 32, 2, 48, 2); }

// The same with two 64-wide heads: the fused attention's kernels need d_head ≥ 64.
inline ModelConfig little_d64_config() { return custom_config("little-d64", 64, 128, 2, 96, 2); }

// Stated tolerances (norm-wise relative error against the double reference).
// One layer: fp32 ≈ a few float roundings; tf32 GEMM inputs keep 10 mantissa
// bits (unit roundoff 4.9e-4, and attention chains three GEMMs and a softmax
// gradient with cancellation); bf16 keeps 7 (3.9e-3) in stored tensors. The
// whole model compounds them over its layers, hence the looser second column.
// The third is for AdamW's updates (parameters after the steps minus before):
// Adam moves each element by about ±lr whatever its gradient's size, so an
// element whose gradient is within the gradient error of zero may move
// either way. The fraction of such elements is about the gradients' relative
// error ε, and the updates' norm-wise error about 2·√ε: 1e-3 for fp32 (ε near
// 1e-7), 0.1 for tf32 (ε near 1e-3), 0.3 for bf16 (ε near 1e-2). A wrong
// learning rate or bias correction changes every element's update.
struct Tolerance {
  double layer, model, update;
};
inline Tolerance tolerance_for(Precision precision) {
  switch (precision) {
    case Precision::fp32: return {1e-5, 5e-5, 1e-3};
    case Precision::tf32: return {3e-3, 1e-2, 0.1};
    case Precision::bf16: return {1e-2, 3e-2, 0.3};
  }
  return {0, 0, 0};
}

}  // namespace transformer::cuda::test
