// cpu/tests/split_master_test.cpp: the bf16 backend's split master weights
// (cuda/split_master.hpp, plain C++): every float is restored bit for bit,
// and the upper half is the bf16 nearest to it, ties away from zero, checked
// against a reference that compares distances in double.
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include <doctest/doctest.h>

#include "cuda/split_master.hpp"

namespace transformer::cuda {
namespace {

float from_bits(std::uint32_t bits) {
  float f;
  std::memcpy(&f, &bits, sizeof f);
  return f;
}

// The bf16 (as its bits) nearest to finite x: of the two bf16 values that
// bracket it (the truncation, and the next one away from zero), the closer
// one, the one away from zero on a tie.
std::uint16_t nearest_bf16_ties_away(std::uint32_t bits) {
  const auto toward_zero = static_cast<std::uint16_t>(bits >> 16);
  const auto away = static_cast<std::uint16_t>(toward_zero + 1);
  const double x = from_bits(bits);
  const double below_value = from_bits(std::uint32_t{toward_zero} << 16);
  const double below = std::abs(x - below_value);
  const double above_value = from_bits(std::uint32_t{away} << 16);
  if (std::isinf(above_value)) {
    // The next one up is infinity: rounding reaches it from half an ulp above the largest bf16.
    const double half_ulp = std::ldexp(1.0, 127 - 8);
    return below >= half_ulp ? away : toward_zero;
  }
  const double above = std::abs(above_value - x);
  return above <= below ? away : toward_zero;
}

struct Tally {
  std::size_t checked = 0, not_restored = 0, not_nearest = 0;
  std::uint32_t first_bad = 0;
  void check(std::uint32_t bits) {
    ++checked;
    const SplitBits s = split_bits(bits);
    const float x = from_bits(bits);
    const float back = from_bits(join_bits(s.hi, s.lo));
    if (std::isnan(x)) {
      // A quiet NaN of the same sign, in both the bf16 half and the float.
      const float hi = from_bits(std::uint32_t{s.hi} << 16);
      if (!std::isnan(hi) || !std::isnan(back) || std::signbit(hi) != std::signbit(x))
        fail(bits, not_restored);
      return;
    }
    if (join_bits(s.hi, s.lo) != bits) fail(bits, not_restored);
    if (s.hi != nearest_bf16_ties_away(bits)) fail(bits, not_nearest);
  }
  void fail(std::uint32_t bits, std::size_t& counter) {
    if (not_restored + not_nearest == 0) first_bad = bits;
    ++counter;
  }
};

TEST_CASE("split master weights: every float restored bit for bit, the upper half its nearest bf16") {
  Tally tally;
  // Every upper half (zeros, subnormals, the largest floats, infinities, NaNs)
  // with the remainders at and around the rounding boundary.
  const std::uint32_t lows[] = {0x0000, 0x0001, 0x3FFF, 0x4000, 0x7FFE, 0x7FFF,
                                0x8000, 0x8001, 0xBFFF, 0xC000, 0xFFFE, 0xFFFF};
  for (std::uint32_t upper = 0; upper <= 0xFFFF; ++upper)
    for (const std::uint32_t low : lows) tally.check(upper << 16 | low);
  // And a few million arbitrary patterns.
  std::mt19937 rng(20261126);
  for (int i = 0; i < 4'000'000; ++i) tally.check(static_cast<std::uint32_t>(rng()));
  INFO("first failing bit pattern (as an unsigned integer): " << tally.first_bad);
  CHECK(tally.not_restored == 0);
  CHECK(tally.not_nearest == 0);
  CHECK(tally.checked > 4'500'000);
}

TEST_CASE("split master weights: whole buffers round-trip through split_floats and join_floats") {
  const std::vector<float> values{0.0f,
                                  -0.0f,
                                  1.0f,
                                  -1.5f,
                                  3.0e-39f,
                                  -1.0e-45f,
                                  std::numeric_limits<float>::max(),
                                  std::numeric_limits<float>::infinity(),
                                  0.1f,
                                  -7.25e5f};
  std::vector<std::uint16_t> hi(values.size());
  std::vector<std::int16_t> lo(values.size());
  split_floats(values.data(), hi.data(), lo.data(), values.size());
  std::vector<float> back(values.size());
  join_floats(hi.data(), lo.data(), back.data(), back.size());
  for (std::size_t i = 0; i < values.size(); ++i) {
    CAPTURE(i);
    CHECK(std::memcmp(&back[i], &values[i], sizeof(float)) == 0);
  }
  CHECK(hi[2] == 0x3F80);  // 1.0f's upper half is bf16 1.0
}

}  // namespace
}  // namespace transformer::cuda
