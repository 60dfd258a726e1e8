// accumulation.hpp: the precision-accumulation demo (docs/model.md): 0.01 added
// kAddendCount times for each accumulator/addend pair, summed sequentially,
// with Kahan compensation and as a pairwise tree; the table, the explanation
// under it and the JSON report share one row type for the CPU and the GPU.
#pragma once
#include <iosfwd>
#include <optional>
#include <string>
#include <vector>

#include "summation.hpp"  // kAddendCount, kTreeWidth

namespace precision {

constexpr double kExactTotal = 10.0;  // 1000 × 0.01 in exact arithmetic

// When an addend narrower than the accumulator becomes the accumulator's
// type: at every add (what `s += x` does through type promotion) or once,
// into a converted copy, before the loop (`x.to(float32)` in the course).
enum class AddendConversion { per_add, once_up_front };

struct AccumulationRow {
  std::string accumulator;  // dtype of the running sum
  std::string addend;       // dtype of the stored addend, "fp16→fp32" when converted up front
  double addend_value = 0;  // 0.01 as the addend's format stores it (exactly)
  double sequential = 0;    // s = s + x, rounded every add
  double kahan = 0;         // compensated sum, same formats
  double pairwise = 0;      // tree reduction (summation.hpp's order)
  // 1000 × addend_value rounded once to the accumulator's format: the best
  // any summation order can return.
  double nearest_total = 0;
  // Machine epsilon of the accumulator's format (spacing of numbers in [1, 2)).
  double accumulator_epsilon = 0;
};

// docs/model.md's six cases, in its order, computed on the CPU with float and
// Eigen's half/bfloat16.
std::vector<AccumulationRow> accumulate_on_cpu();

// The shortest decimal that reads back as the same double, Python-style
// ("4.0", "10.000133514404297"). Every value in the table is a float, half
// or bfloat16 widened exactly to double, so this names it unambiguously.
std::string python_repr(double value);

void print_accumulation_table(std::ostream& out, const std::string& title,
                              const std::vector<AccumulationRow>& rows);

// Why each result is what it is: the error vs 10 split into the addend's
// representation error and the accumulation error, and where a sum stalls.
void print_accumulation_explanation(std::ostream& out, const std::vector<AccumulationRow>& rows);

// The value at which adding `addend` stops changing a sum whose format has
// machine epsilon `epsilon` (the addend falls to half an ulp or below), or
// nullopt if the exact total is reached first.
std::optional<double> stall_point(double addend, double epsilon);

}  // namespace precision
