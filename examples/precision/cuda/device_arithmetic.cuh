// device_arithmetic.cuh: the GPU's fp32/fp16/bf16 arithmetic for the
// precision demos, each operation rounding exactly once to nearest even.
//
// __fadd_rn/__fsub_rn and __hadd/__hsub are IEEE operations that nvcc never
// fuses with a neighbouring multiply into an FMA (a plain a + b may be
// contracted under -fmad=true, nvcc's default) and that fast-math does not
// replace. Using them is what makes the device sums bit-identical to the
// CPU's; the accumulation target also builds with -fmad=false as a second
// guard (CMakeLists.txt).
#pragma once
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <type_traits>

#include "dtype.hpp"

namespace precision {

template <>
struct DtypeName<__half> {
  static constexpr const char* value = "fp16";
};
template <>
struct DtypeName<__nv_bfloat16> {
  static constexpr const char* value = "bf16";
};

namespace device {
__device__ inline float to_float(float x) { return x; }
__device__ inline float to_float(__half x) { return __half2float(x); }
__device__ inline float to_float(__nv_bfloat16 x) { return __bfloat162float(x); }

// float → T, rounding to nearest even.
template <class T>
__device__ inline T from_float(float x) {
  if constexpr (std::is_same_v<T, float>) return x;
  else if constexpr (std::is_same_v<T, __half>) return __float2half_rn(x);
  else return __float2bfloat16_rn(x);
}

// The next representable number above 1, minus 1: the format's epsilon.
template <class T>
__device__ inline float epsilon() {
  if constexpr (std::is_same_v<T, float>) return nextafterf(1.0f, 2.0f) - 1.0f;
  else if constexpr (std::is_same_v<T, __half>)
    return __half2float(__ushort_as_half(__half_as_ushort(__float2half_rn(1.0f)) + 1)) - 1.0f;
  else
    return __bfloat162float(__ushort_as_bfloat16(__bfloat16_as_ushort(__float2bfloat16_rn(1.0f)) + 1)) - 1.0f;
}
}  // namespace device

// The Ops of summation.hpp for the device.
struct DeviceOps {
  __device__ static float add(float a, float b) { return __fadd_rn(a, b); }
  __device__ static __half add(__half a, __half b) { return __hadd(a, b); }
  __device__ static __nv_bfloat16 add(__nv_bfloat16 a, __nv_bfloat16 b) { return __hadd(a, b); }
  __device__ static float sub(float a, float b) { return __fsub_rn(a, b); }
  __device__ static __half sub(__half a, __half b) { return __hsub(a, b); }
  __device__ static __nv_bfloat16 sub(__nv_bfloat16 a, __nv_bfloat16 b) { return __hsub(a, b); }

  // Keeps an addend of the accumulator's type; widens a narrower one to fp32
  // (exact). Narrowing is not an accumulation case, so it does not compile.
  template <class Acc, class Add>
  __device__ static Acc convert(Add x) {
    if constexpr (std::is_same_v<Acc, Add>) {
      return x;
    } else {
      static_assert(std::is_same_v<Acc, float>, "addends only widen to fp32");
      return device::to_float(x);
    }
  }
};

}  // namespace precision
