// accumulation.cpp: the CPU side of the accumulation demo and the text it
// prints. Built without fast-math and with FP contraction off (see
// CMakeLists.txt): every float/half/bfloat16 add below rounds once, in the
// order written.
#include "accumulation.hpp"

#include <cmath>
#include <limits>
#include <ostream>

#include <gpuprof/table.hpp>

#include "eigen_dtypes.hpp"
#include "summation.hpp"

#ifdef __FAST_MATH__
#error "The accumulation demo needs IEEE rounding on every add: build it without -ffast-math."
#endif

namespace precision {
namespace {

// Operator arithmetic: float rounds to float, and Eigen's half and bfloat16
// compute a + b in float (exact for two such values this close in
// magnitude) and round the result once, to nearest even.
struct HostOps {
  template <class T>
  static T add(T a, T b) {
    return a + b;
  }
  template <class T>
  static T sub(T a, T b) {
    return a - b;
  }
  template <class Acc, class Add>
  static Acc convert(Add x) {
    return static_cast<Acc>(x);
  }
};

template <class Acc>
Acc sum_pairwise(const std::vector<Acc>& addends) {
  std::vector<Acc> slots(kTreeWidth, Acc(0.0f));
  std::copy(addends.begin(), addends.end(), slots.begin());
  for (int stride = kTreeWidth / 2; stride >= 1; stride /= 2)
    for (int slot = 0; slot < stride; ++slot) tree_level<HostOps>(slots.data(), slot, stride);
  return slots[0];
}

// The gap between 1 and the next representable value, found by the type's
// own rounding. Not numeric_limits<T>::epsilon(): some Eigen releases return
// 2^-13 for Eigen::half (the GPU machine's Eigen does), where 2^-10 is right.
template <class T>
double machine_epsilon() {
  double epsilon = 1.0;
  // 1 + ε/2 is a tie that rounds to even, i.e. back to 1, exactly when ε is the gap.
  while (static_cast<double>(static_cast<float>(T(static_cast<float>(1.0 + epsilon / 2)))) != 1.0)
    epsilon /= 2;
  return epsilon;
}

template <class Acc, class Add>
AccumulationRow accumulate_case(AddendConversion conversion) {
  // 0.01 reaches the narrow formats through fp32 (Eigen converts from
  // float). For 0.01 this double rounding lands on the same value as a
  // direct rounding; the tests pin the stored values.
  const std::vector<Add> stored(kAddendCount, Add(0.01f));
  const std::vector<Acc> widened(stored.begin(), stored.end());

  AccumulationRow row;
  row.accumulator = dtype_name<Acc>();
  row.addend = dtype_name<Add>();
  row.addend_value = static_cast<double>(static_cast<float>(stored.front()));
  row.accumulator_epsilon = machine_epsilon<Acc>();
  // 1000 × addend has at most 34 significant bits; it reaches the narrow
  // formats through fp32 (Eigen converts from float), which is exact for
  // the fp16 and bf16 addends and the one rounding for the fp32 one.
  const auto total = static_cast<float>(kAddendCount * row.addend_value);
  row.nearest_total = static_cast<double>(static_cast<float>(static_cast<Acc>(total)));
  if (conversion == AddendConversion::once_up_front) {
    row.addend += std::string("→") + dtype_name<Acc>();
    row.sequential = static_cast<float>(sum_sequential<HostOps, Acc>(widened.data(), kAddendCount));
    row.kahan = static_cast<float>(sum_kahan<HostOps, Acc>(widened.data(), kAddendCount));
  } else {
    row.sequential = static_cast<float>(sum_sequential<HostOps, Acc>(stored.data(), kAddendCount));
    row.kahan = static_cast<float>(sum_kahan<HostOps, Acc>(stored.data(), kAddendCount));
  }
  // A tree adds partial sums, which are already in the accumulator's format.
  row.pairwise = static_cast<float>(sum_pairwise(widened));
  return row;
}

std::string error_vs_total(double value) {
  const double error = value - kExactTotal;  // exact: both fit in a double's 53 bits
  return (error > 0 ? "+" : "") + python_repr(error);
}

}  // namespace

std::vector<AccumulationRow> accumulate_on_cpu() {
  using Eigen::bfloat16;
  using Eigen::half;
  return {
      accumulate_case<float, float>(AddendConversion::per_add),
      accumulate_case<half, half>(AddendConversion::per_add),
      accumulate_case<float, half>(AddendConversion::per_add),
      accumulate_case<float, half>(AddendConversion::once_up_front),
      accumulate_case<bfloat16, bfloat16>(AddendConversion::per_add),
      accumulate_case<float, bfloat16>(AddendConversion::per_add),
  };
}

std::string python_repr(double value) {
  if (std::isnan(value)) return "nan";
  if (std::isinf(value)) return value > 0 ? "inf" : "-inf";
  std::string text = gpuprof::shortest_decimal(value);
  if (text.find_first_of(".e") == std::string::npos) text += ".0";
  return text;
}

void print_accumulation_table(std::ostream& out, const std::string& title,
                              const std::vector<AccumulationRow>& rows) {
  out << title << " (0.01 added " << kAddendCount << " times; error = result − 10)\n";
  // Minimum widths so the CPU and GPU tables line up column for column.
  gpuprof::Table table({{"acc", gpuprof::Align::left, 4},
                        {"addend", gpuprof::Align::left, 9},
                        {"addend value", gpuprof::Align::left, 21},
                        {"sequential", gpuprof::Align::left, 18},
                        {"error", gpuprof::Align::left, 21},
                        {"Kahan", gpuprof::Align::left, 17},
                        {"error", gpuprof::Align::left, 21},
                        {"pairwise", gpuprof::Align::left, 17},
                        {"error"}});
  for (const AccumulationRow& row : rows)
    table.add_row({row.accumulator, row.addend, python_repr(row.addend_value), python_repr(row.sequential),
                   error_vs_total(row.sequential), python_repr(row.kahan), error_vs_total(row.kahan),
                   python_repr(row.pairwise), error_vs_total(row.pairwise)});
  table.print(out, {"", " "});
}

std::optional<double> stall_point(double addend, double epsilon) {
  // On [2^e, 2^(e+1)) the spacing is epsilon·2^e. Once half of it reaches
  // the addend, s + addend rounds back to s (a tie goes to the even s). The
  // sum gets there exactly: below 2^e every add still moves it up by at
  // least one spacing, and an overshoot past 2^e rounds down onto 2^e.
  const double reachable = kAddendCount * addend;
  for (double power = 1.0 / 1024; power <= reachable; power *= 2)
    if (epsilon * power / 2 >= addend) return power;
  return std::nullopt;
}

void print_accumulation_explanation(std::ostream& out, const std::vector<AccumulationRow>& rows) {
  out << "\nWhy (error vs 10 = the addend's representation error + rounding 1000 × addend to the\n"
         "accumulator's format + the accumulation error of the summation order):\n";
  for (const AccumulationRow& row : rows) {
    const double represented_total = kAddendCount * row.addend_value;  // exact in double
    out << "  " << row.accumulator << " + " << row.addend
        << ": 1000 × addend = " << python_repr(represented_total) << " (representation error "
        << error_vs_total(represented_total) << "); nearest " << row.accumulator << ": "
        << python_repr(row.nearest_total) << "\n    sequential ends "
        << python_repr(row.sequential - row.nearest_total) << " from that (accumulation error); Kahan gives "
        << python_repr(row.kahan) << ", pairwise " << python_repr(row.pairwise) << "\n";
    if (const auto stall = stall_point(row.addend_value, row.accumulator_epsilon)) {
      out << "    stalls at " << python_repr(*stall) << ": there " << row.accumulator << " numbers are "
          << python_repr(row.accumulator_epsilon * *stall) << " apart, and the addend "
          << python_repr(row.addend_value)
          << " is not more than half of that, so s + addend rounds back to s.\n";
    }
  }
  out << "  0.01 has no finite binary expansion, so every format stores a nearby value:\n"
         "  that representation error is fixed before the first add, and no summation\n"
         "  method removes it (fp32 + fp16 ends at 1000 × fp16(0.01) whichever way). The\n"
         "  accumulation error comes from rounding the running sum: it grows with the\n"
         "  sum's spacing, which is why a wide accumulator over narrow addends is almost\n"
         "  exact, while an fp16 sum drifts and a bf16 sum stops. Converting the fp16\n"
         "  addend to fp32 per add or once up front gives the same bits: widening is exact.\n"
         "  Kahan carries each add's lost low bits into the next one and recovers the\n"
         "  correctly rounded total; a tree (what a GPU reduction does) adds numbers of\n"
         "  similar size, so each level rounds at most about half an ulp of its partial sums\n"
         "  and the error grows with log2(n) levels instead of n adds.\n";
}

}  // namespace precision
