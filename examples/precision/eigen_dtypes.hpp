// eigen_dtypes.hpp: dtype names for Eigen's 16-bit float types, the CPU's
// fp16 and bf16 (both round to nearest even on every operation).
#pragma once
#include <Eigen/Core>

#include "dtype.hpp"

namespace precision {

template <>
struct DtypeName<Eigen::half> {
  static constexpr const char* value = "fp16";
};
template <>
struct DtypeName<Eigen::bfloat16> {
  static constexpr const char* value = "bf16";
};

}  // namespace precision
