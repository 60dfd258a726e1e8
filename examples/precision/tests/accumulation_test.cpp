// accumulation_test.cpp: the CPU accumulation demo against docs/model.md's exact
// values, against an independent emulation of round-to-nearest-even, and
// the helpers its explanation relies on.
#include <doctest/doctest.h>

#include <cmath>
#include <limits>

#include "accumulation.hpp"
#include "tests/expected_accumulation.hpp"

namespace precision {
namespace {

// x rounded to `bits` significant bits, to nearest even (the default
// rounding mode of nearbyint): an emulation of fp32/fp16/bf16 rounding that
// shares no code with Eigen, valid in the normal range the demo stays in.
double round_to_significand(double x, int bits) {
  if (x == 0) return 0;
  int exponent = 0;
  std::frexp(x, &exponent);  // x = m·2^exponent, m in [0.5, 1)
  const double scale = std::ldexp(1.0, bits - exponent);
  return std::nearbyint(x * scale) / scale;  // both scalings are exact
}

double emulated_sequential_sum(double addend, int bits) {
  double sum = 0;
  // s + addend is exact in double here (at most ~35 significant bits).
  for (int i = 0; i < kAddendCount; ++i) sum = round_to_significand(sum + addend, bits);
  return sum;
}

TEST_CASE("the CPU reproduces docs/model.md's accumulation table exactly") {
  testing::check_against_model(accumulate_on_cpu());
}

TEST_CASE("the CPU sums match an independent emulation of each format's rounding") {
  const double decimal = 0.01;
  CHECK(round_to_significand(decimal, 24) == 0.009999999776482582);
  CHECK(round_to_significand(decimal, 11) == 0.01000213623046875);
  CHECK(round_to_significand(decimal, 8) == 0.010009765625);
  const std::vector<AccumulationRow> rows = accumulate_on_cpu();
  CHECK(rows[0].sequential == emulated_sequential_sum(round_to_significand(decimal, 24), 24));
  CHECK(rows[1].sequential == emulated_sequential_sum(round_to_significand(decimal, 11), 11));
  CHECK(rows[2].sequential == emulated_sequential_sum(round_to_significand(decimal, 11), 24));
  CHECK(rows[4].sequential == emulated_sequential_sum(round_to_significand(decimal, 8), 8));
  CHECK(rows[5].sequential == emulated_sequential_sum(round_to_significand(decimal, 8), 24));
}

TEST_CASE("widening an addend per add or once up front gives the same bits") {
  const std::vector<AccumulationRow> rows = accumulate_on_cpu();
  CHECK(rows[2].sequential == rows[3].sequential);
  CHECK(rows[2].kahan == rows[3].kahan);
  CHECK(rows[2].pairwise == rows[3].pairwise);
}

TEST_CASE("stall_point finds bf16's stall at 4.0 and none for fp16 or fp32") {
  const std::vector<AccumulationRow> rows = accumulate_on_cpu();
  const AccumulationRow& bf16 = rows[4];
  CHECK(bf16.accumulator_epsilon == std::ldexp(1.0, -7));
  const std::optional<double> stall = stall_point(bf16.addend_value, bf16.accumulator_epsilon);
  REQUIRE(stall.has_value());
  CHECK(*stall == 4.0);
  CHECK(*stall == bf16.sequential);
  CHECK_FALSE(stall_point(rows[1].addend_value, rows[1].accumulator_epsilon).has_value());
  CHECK_FALSE(stall_point(rows[0].addend_value, rows[0].accumulator_epsilon).has_value());
  // Half an ulp exactly ties to the even sum: a stall too.
  CHECK(stall_point(1.0 / 128, 1.0 / 128) == 2.0);
}

TEST_CASE("python_repr prints what Python's repr prints") {
  CHECK(python_repr(4.0) == "4.0");
  CHECK(python_repr(10.000133514404297) == "10.000133514404297");
  CHECK(python_repr(static_cast<double>(0.01f)) == "0.009999999776482582");
  CHECK(python_repr(-6.0) == "-6.0");
  CHECK(python_repr(2.2351741790771484e-07) == "2.2351741790771484e-07");
  CHECK(python_repr(std::numeric_limits<double>::infinity()) == "inf");
}

}  // namespace
}  // namespace precision
