// dtype.hpp: the short name of a floating-point element type ("fp32",
// "fp16", "bf16", "fp64"), looked up from the C++ type itself.
//
// The toy model prints the dtype of each tensor it really produced by
// applying dtype_name to that tensor's element type, so the printed table
// cannot drift from the code. Each backend specialises DtypeName for the
// types it brings (Eigen's half/bfloat16 in eigen_dtypes.hpp, CUDA's
// __half/__nv_bfloat16 in cuda/device_arithmetic.cuh).
#pragma once

namespace precision {

template <class T>
struct DtypeName;  // no definition: an unnamed type is a compile error

template <>
struct DtypeName<float> {
  static constexpr const char* value = "fp32";
};
template <>
struct DtypeName<double> {
  static constexpr const char* value = "fp64";
};

template <class T>
constexpr const char* dtype_name() {
  return DtypeName<T>::value;
}

}  // namespace precision
