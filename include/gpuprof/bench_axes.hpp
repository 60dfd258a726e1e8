// gpuprof/bench_axes.hpp: bench(name, axes, setup), one bench() row per point
// of named parameter axes (axes.hpp).
//
// ```cpp
// #include <gpuprof/bench_axes.hpp>
// #include <gpuprof/report/bench_json.hpp>
// #include <iostream>
// #include <numeric>
// #include <vector>
// int main() {
//   const gpuprof::Axes axes = gpuprof::Axes::product({{"n", {1000, 100000}}, {"order", {"forward",
//   "reverse"}}}); const auto rows = gpuprof::bench("sum", axes, [](const gpuprof::AxisPoint& point) {
//     std::vector<double> data(static_cast<std::size_t>(point.integer("n")), 1.0);  // setup: not timed
//     const bool reverse = point.text("order") == "reverse";
//     return [data, reverse] {  // timed
//       volatile double sum = reverse ? std::accumulate(data.rbegin(), data.rend(), 0.0)
//                                     : std::accumulate(data.begin(), data.end(), 0.0);
//       (void)sum;
//     };
//   });
//   for (const gpuprof::NamedBenchResult& row : rows)  // sum[n=1000,order=forward] ...
//     std::cout << row.name << ": " << row.result.summary() << '\n';
//   gpuprof::write_bench_json(rows, "sum.json", {gpuprof::capture_environment()});  // matched by n and order
// }
// ```
//
// For each point, in the axes' order, setup(point) runs once, untimed. When
// it returns a callable, bench() times that callable (setup allocates and
// fills, the callable is the work); when it returns nothing, bench() times
// setup(point) itself. Each point gets the whole protocol of bench() (cold
// call, warm-up, samples) with `options`, and one row: named
// point.row_name(name), its values in NamedBenchResult::axes. A setup that
// throws SkipPoint (out of memory, a combination the code does not support)
// leaves its row without samples, the reason as the stop reason, which
// gpuprof-compare shows as "not measured"; any other exception propagates.
#pragma once
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "axes.hpp"
#include "bench.hpp"
#include "config.hpp"
#include "error.hpp"
#include "report/bench_json.hpp"

GPUPROF_NAMESPACE_BEGIN

// Thrown by a setup: this point is not measured, for the reason given.
struct SkipPoint : Error {
  using Error::Error;
};

template <class Setup>
std::vector<NamedBenchResult> bench(const std::string& name, const Axes& axes, Setup&& setup,
                                    const BenchOptions& options = {}) {
  std::vector<NamedBenchResult> rows;
  for (const AxisPoint& point : axes.points()) {
    NamedBenchResult row(point.row_name(name), BenchResult{});
    row.axes = point;
    try {
      if constexpr (std::is_void_v<std::invoke_result_t<Setup&, const AxisPoint&>>) {
        row.result = bench([&setup, &point] { setup(point); }, options);
      } else {
        auto work = setup(point);
        row.result = bench(work, options);
      }
    } catch (const SkipPoint& skipped) {
      row.result.stop_reason = std::string("skipped: ") + skipped.what();
    }
    rows.push_back(std::move(row));
  }
  return rows;
}

GPUPROF_NAMESPACE_END
