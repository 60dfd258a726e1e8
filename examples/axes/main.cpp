// axes: one benchmark over named parameter axes (gpuprof/bench_axes.hpp). The
// work sums an n x n matrix of doubles by rows or by columns, so the two axes
// are the size and the memory order: every combination is its own row, named
// "sum[n=1024,order=columns]", with its values in the JSON's "axes". Two runs'
// files compare point by point: gpuprof-compare base.json new.json.
// Host work, timed by the host clock on any machine.
// Usage: axes [--quick] [--json PATH] (see usage below)
#include <cstddef>
#include <ostream>
#include <string>
#include <vector>

#include <gpuprof/bench_axes.hpp>
#include <gpuprof/profiler.hpp>
#include <gpuprof/report/bench_json.hpp>

#include "common/host_program.hpp"

namespace {
constexpr const char* usage =
    "usage: axes [--quick] [--json PATH]\n"
    "Sums an n x n matrix by rows and by columns, each (n, order) a row of its own.\n"
    "  --quick      n = 64, 256 and 5 samples a row instead of 256, 1024, 2048 and 20:\n"
    "               well under a second, for smoke tests (default: the full run)\n"
    "  --json PATH  write the rows as JSON (schema gpuprof.bench, docs/report-schema.md);\n"
    "               \"-\" writes it to standard output and the table to standard error\n"
    "               (default: no file)\n"
    "  -h, --help   this text\n"
    "Each option at most once.\n"
    "exit status: 0 done; 1 a failure (an output, standard output included, could not be\n"
    "written); 2 bad arguments\n";

// Setup, untimed: the matrix of this point. Timed: the sum, in the point's order.
auto summing(const gpuprof::AxisPoint& point) {
  const auto n = static_cast<std::size_t>(point.integer("n"));
  const bool by_rows = point.text("order") == "rows";
  return [matrix = std::vector<double>(n * n, 1.0), n, by_rows] {
    double sum = 0;
    for (std::size_t i = 0; i < n; ++i)
      for (std::size_t j = 0; j < n; ++j) sum += by_rows ? matrix[i * n + j] : matrix[j * n + i];
    volatile double kept = sum;  // the sum is used: the loops are not optimised away
    (void)kept;
  };
}

int run(const examples::HostFlags& options, std::ostream& text) {
  gpuprof::profiler().set_gpu_timing(false);  // host work: CUDA events would time an idle queue
  const std::vector<gpuprof::AxisValue> sizes = options.quick
                                                    ? std::vector<gpuprof::AxisValue>{64, 256}
                                                    : std::vector<gpuprof::AxisValue>{256, 1024, 2048};
  const gpuprof::Axes axes = gpuprof::Axes::product({{"n", sizes}, {"order", {"rows", "columns"}}});
  gpuprof::BenchOptions bench_options;
  bench_options.warmup = 2;
  bench_options.iters = options.quick ? 5 : 20;
  const std::vector<gpuprof::NamedBenchResult> rows = gpuprof::bench("sum", axes, summing, bench_options);
  for (const gpuprof::NamedBenchResult& row : rows) text << row.name << ": " << row.result.summary() << "\n";
  if (!options.json_path.empty())
    gpuprof::write_bench_json(rows, options.json_path, {gpuprof::capture_environment()});
  return 0;
}
}  // namespace

int main(int argc, char** argv) {
  examples::HostFlags options;
  return gpuprof::run_tool(
      "axes", usage, argc, argv,
      [&](gpuprof::Arguments& args, const std::string& arg) {
        if (!options.take(args, arg)) gpuprof::reject_argument(arg);
      },
      [&] { options.check(); }, gpuprof::run_reading_no_input([&] { return run(options, options.text()); }));
}
