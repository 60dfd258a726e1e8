// quickstart: gpuprof in one page. Scopes build a call tree with statistics,
// bench() times a function with warm-up and honest statistics, and the report
// prints as a table (or JSON, CSV, a Chrome trace). Here the work is a small
// host matrix product so it runs anywhere, timed by the host clock whatever
// the machine holds. For GPU work, leave GPU timing on (the default) and pass
// a CUDA stream to GPUPROF_SCOPE (and BenchOptions::stream): it is then timed
// with CUDA events.
// Usage: quickstart [--quick] [--json PATH] [--slowdown FRACTION] (see usage below)
#include <cmath>
#include <ostream>
#include <string>
#include <vector>

#include <gpuprof/gpuprof.hpp>

#include "common/host_program.hpp"

namespace {
constexpr const char* usage =
    "usage: quickstart [--quick] [--json PATH] [--slowdown FRACTION]\n"
    "Times a small host matrix product with scopes and bench(), then prints the report.\n"
    "  --quick      3 profiled steps and at most 10 bench samples instead of 20 and 200:\n"
    "               a run of well under a second, for smoke tests (default: the full run)\n"
    "  --json PATH  also write the report as JSON (schema gpuprof.report, docs/report-schema.md);\n"
    "               \"-\" writes it to standard output and the tables to standard error\n"
    "               (default: no file)\n"
    "  --slowdown F  test-only: each matrix product computes F of its 96 rows again, rounded\n"
    "               (0.15: 14 rows, 14.6 % more work; 0.05: 5 rows, 5.2 %), the regression that\n"
    "               scripts/compare_power.sh must find; a ratio in [0, 1] or a percentage (15%)\n"
    "               (default 0)\n"
    "  -h, --help   this text\n"
    "Each option at most once.\n"
    "exit status: 0 done; 1 a failure (an output, standard output included, could not be\n"
    "written); 2 bad arguments\n";

struct Options : examples::HostFlags {
  double slowdown = 0;  // extra fraction of rows per product
};

constexpr int n = 96;
using Matrix = std::vector<double>;
int repeated_rows = 0;  // --slowdown: rows computed twice, a known amount of extra work

void multiply(const Matrix& a, const Matrix& b, Matrix& c) {
  GPUPROF_SCOPE("matmul", nullptr, gpuprof::Work{2.0 * n * n * n, 3.0 * n * n * sizeof(double), 0});
  for (int row = 0; row < n + repeated_rows; ++row) {
    const int i = row % n;
    for (int j = 0; j < n; ++j) {
      double sum = 0;
      for (int k = 0; k < n; ++k) sum += a[i * n + k] * b[k * n + j];
      c[i * n + j] = sum;
    }
  }
}

void step(Matrix& x, const Matrix& w, Matrix& scratch) {
  GPUPROF_SCOPE("step");
  {
    GPUPROF_SCOPE("forward");
    multiply(x, w, scratch);
  }
  {
    GPUPROF_SCOPE("backward");
    multiply(scratch, w, x);
    multiply(x, w, scratch);
  }
  for (double& value : x) value = 1e-3 * value;  // keep the numbers bounded
}

int run(const Options& options, std::ostream& text) {
  // Host work: CUDA events would time the GPU's idle queue, not the product.
  gpuprof::profiler().set_gpu_timing(false);
  repeated_rows = static_cast<int>(std::lround(options.slowdown * n));
  Matrix x(n * n, 1.0), w(n * n, 0.5), scratch(n * n);
  for (int i = 0; i < (options.quick ? 3 : 20); ++i) step(x, w, scratch);  // scopes: a call tree

  gpuprof::BenchOptions bench_options;  // bench: cold call, warm-up, samples until 2 % noise
  bench_options.warmup = 3;
  bench_options.target_rel_noise = 0.02;
  bench_options.max_iters = options.quick ? 10 : 200;
  const gpuprof::BenchResult result = gpuprof::bench([&] { step(x, w, scratch); }, bench_options);
  text << "bench(step): " << result.summary() << "\n  stopped: " << result.stop_reason << "\n\n";

  const gpuprof::Report report = gpuprof::profiler().report();
  gpuprof::print_table(report, text);
  if (!options.json_path.empty()) gpuprof::write_json(report, options.json_path);
  return 0;
}
}  // namespace

int main(int argc, char** argv) {
  Options options;
  return gpuprof::run_tool(
      "quickstart", usage, argc, argv,
      [&](gpuprof::Arguments& args, const std::string& arg) {
        if (arg == "--slowdown") options.slowdown = gpuprof::parse_fraction(args.value_of(arg), arg);
        else if (!options.take(args, arg)) gpuprof::reject_argument(arg);
      },
      [&] { options.check(); }, gpuprof::run_reading_no_input([&] { return run(options, options.text()); }));
}
