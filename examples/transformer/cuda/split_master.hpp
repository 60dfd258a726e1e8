// cuda/split_master.hpp: how the mixed-precision backend stores its fp32
// master weights: as the two 16-bit halves of each float's bit pattern.
//
//   hi = the upper half, rounded to nearest (ties away from zero): a bf16,
//        the very copy of the weight that the GEMMs read;
//   lo = bits(θ) − hi·2¹⁶, a signed 16-bit remainder, so that
//        bits(θ) = hi·2¹⁶ + lo (mod 2³²) restores the float exactly.
//
// Rounding the upper half with +0x8000 leaves a remainder in [−2¹⁵, 2¹⁵), so
// it always fits, carries into the exponent are the correct rounding, and
// every finite float round-trips bit for bit. NaN is the one exception: it is
// stored as a quiet NaN of the same sign (the payload is not kept), because
// rounding its bits could turn it into an infinity or a zero.
//
// Why: AdamW reads θ and writes θ and its bf16 copy on every step. With the
// copy being the upper half of θ, the update moves 26 bytes per parameter
// instead of 28 (the step's largest memory-bound kernel) and the weights take
// 4 bytes per parameter instead of 6. The price is the bf16 weights' rounding
// on exact ties (1 in 65 536 floats): away from zero here, to even under
// PyTorch's autocast; it moves no weight by more than that rounding's half
// unit in the last place (docs/model.md).
//
// Plain C++, usable on host and device (the backend splits and joins on the
// host in set_parameters() and parameters(), the kernels on the device).
#pragma once
#include <cstddef>
#include <cstdint>
#include <cstring>

#if defined(__CUDACC__)
#define SPLIT_MASTER_HD __host__ __device__
#else
#define SPLIT_MASTER_HD
#endif

namespace transformer::cuda {

struct SplitBits {
  std::uint16_t hi;  // a bf16's bit pattern
  std::int16_t lo;
};

SPLIT_MASTER_HD inline SplitBits split_bits(std::uint32_t bits) {
  if ((bits & 0x7FFFFFFFu) > 0x7F800000u)  // NaN: a quiet NaN of its sign
    return {static_cast<std::uint16_t>((bits >> 16) | 0x0040u), 0};
  const auto hi = static_cast<std::uint16_t>((bits + 0x8000u) >> 16);
  const std::uint32_t remainder = bits - (std::uint32_t{hi} << 16);  // mod 2³²: [−2¹⁵, 2¹⁵)
  return {hi, static_cast<std::int16_t>(static_cast<std::int32_t>(remainder))};
}

SPLIT_MASTER_HD inline std::uint32_t join_bits(std::uint16_t hi, std::int16_t lo) {
  return (std::uint32_t{hi} << 16) + static_cast<std::uint32_t>(static_cast<std::int32_t>(lo));
}

// The master weights a kernel reads (an RMSNorm's gain, the embedding
// table): fp32 (the fp32 and tf32 backends, and the layer tests), or split
// (the bf16 backend). Kernels branch on `fp32`, the same way for every thread.
struct MasterWeights {
  const float* fp32 = nullptr;
  const std::uint16_t* hi = nullptr;
  const std::int16_t* lo = nullptr;

  // Implicit: fp32 is the plain case (the layer tests pass float pointers).
  SPLIT_MASTER_HD MasterWeights(const float* values) : fp32(values) {}
  SPLIT_MASTER_HD MasterWeights(const std::uint16_t* hi_bits, const std::int16_t* lo_bits)
      : hi(hi_bits), lo(lo_bits) {}
  SPLIT_MASTER_HD MasterWeights operator+(std::size_t n) const {
    return fp32 ? MasterWeights(fp32 + n) : MasterWeights(hi + n, lo + n);
  }
};

// Host side: whole flat buffers (parameters(), set_parameters()).
inline void split_floats(const float* values, std::uint16_t* hi, std::int16_t* lo, std::size_t count) {
  for (std::size_t i = 0; i < count; ++i) {
    std::uint32_t bits;
    std::memcpy(&bits, &values[i], sizeof bits);
    const SplitBits s = split_bits(bits);
    hi[i] = s.hi;
    lo[i] = s.lo;
  }
}

inline void join_floats(const std::uint16_t* hi, const std::int16_t* lo, float* values, std::size_t count) {
  for (std::size_t i = 0; i < count; ++i) {
    const std::uint32_t bits = join_bits(hi[i], lo[i]);
    std::memcpy(&values[i], &bits, sizeof bits);
  }
}

}  // namespace transformer::cuda
