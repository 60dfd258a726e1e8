// expected_accumulation.hpp: docs/model.md's accumulation table, the values both
// the CPU and the GPU tests must reproduce exactly, plus the Kahan and
// pairwise totals, which are 1000 × addend rounded once to the accumulator
// (10.0 whenever the accumulator is as narrow as the addend).
#pragma once
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "accumulation.hpp"

namespace precision::testing {

struct ExpectedRow {
  const char* accumulator;
  const char* addend;
  double addend_value;
  double sequential;
  double recovered;  // Kahan and pairwise
};

inline const std::vector<ExpectedRow>& expected_accumulation() {
  static const std::vector<ExpectedRow> rows{
      {"fp32", "fp32", 0.009999999776482582, 10.000133514404297, 10.0},
      {"fp16", "fp16", 0.01000213623046875, 9.953125, 10.0},
      {"fp32", "fp16", 0.01000213623046875, 10.00213623046875, 10.00213623046875},
      {"fp32", "fp16→fp32", 0.01000213623046875, 10.00213623046875, 10.00213623046875},
      {"bf16", "bf16", 0.010009765625, 4.0, 10.0},
      {"fp32", "bf16", 0.010009765625, 10.009765625, 10.009765625},
  };
  return rows;
}

inline void check_against_model(const std::vector<AccumulationRow>& rows) {
  REQUIRE(rows.size() == expected_accumulation().size());
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const ExpectedRow& expected = expected_accumulation()[i];
    const AccumulationRow& row = rows[i];
    INFO("row " << i << ": " << row.accumulator << " + " << row.addend);
    CHECK(row.accumulator == std::string(expected.accumulator));
    CHECK(row.addend == std::string(expected.addend));
    // Exact comparisons: every value is a float, half or bfloat16 widened
    // to double without rounding, and docs/model.md's decimals name them exactly.
    CHECK(row.addend_value == expected.addend_value);
    CHECK(row.sequential == expected.sequential);
    CHECK(row.kahan == expected.recovered);
    CHECK(row.pairwise == expected.recovered);
    CHECK(row.nearest_total == expected.recovered);
  }
}

}  // namespace precision::testing
