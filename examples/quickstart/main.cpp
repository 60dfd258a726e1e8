// quickstart: gpuprof in one page. Scopes build a call tree with statistics,
// bench() times a function with warm-up and honest statistics, and the report
// prints as a table (or JSON, CSV, a Chrome trace). Here the work is a small
// host matrix product so it runs anywhere; pass a CUDA stream to GPUPROF_SCOPE
// (and BenchOptions::stream) and GPU work is timed with CUDA events instead.
// Usage: quickstart [--quick] [--json PATH]
#include <cstring>
#include <exception>
#include <iostream>
#include <string>
#include <vector>

#include <gpuprof/gpuprof.hpp>

namespace {
constexpr int n = 96;
using Matrix = std::vector<double>;

void multiply(const Matrix& a, const Matrix& b, Matrix& c) {
  GPUPROF_SCOPE("matmul", nullptr, gpuprof::Work{2.0 * n * n * n, 3.0 * n * n * sizeof(double), 0});
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j) {
      double sum = 0;
      for (int k = 0; k < n; ++k) sum += a[i * n + k] * b[k * n + j];
      c[i * n + j] = sum;
    }
}

void step(Matrix& x, const Matrix& w, Matrix& scratch) {
  GPUPROF_SCOPE("step");
  { GPUPROF_SCOPE("forward"); multiply(x, w, scratch); }
  { GPUPROF_SCOPE("backward"); multiply(scratch, w, x); multiply(x, w, scratch); }
  for (double& value : x) value = 1e-3 * value;  // keep the numbers bounded
}
}  // namespace

int main(int argc, char** argv) try {
  bool quick = false;
  const char* json_path = nullptr;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--quick") == 0) quick = true;
    else if (std::strcmp(argv[i], "--json") == 0 && i + 1 < argc) json_path = argv[++i];
    else {  // a typo (or --json without a path) must not run silently
      std::cerr << "usage: quickstart [--quick] [--json PATH]\n";
      return 2;
    }
  }
  Matrix x(n * n, 1.0), w(n * n, 0.5), scratch(n * n);
  for (int i = 0; i < (quick ? 3 : 20); ++i) step(x, w, scratch);  // scopes: a call tree

  gpuprof::BenchOptions options;  // bench: cold call, warm-up, samples until 2 % noise
  options.warmup = 3;
  options.target_rel_noise = 0.02;
  options.max_iters = quick ? 10 : 200;
  const gpuprof::BenchResult result = gpuprof::bench([&] { step(x, w, scratch); }, options);
  std::cout << "bench(step): " << result.summary() << "\n  stopped: " << result.stop_reason << "\n\n";

  const gpuprof::Report report = gpuprof::profiler().report();
  report.print(std::cout);
  if (json_path) report.write_json(json_path);
  return 0;
} catch (const std::exception& error) {  // e.g. an unwritable --json path: a message, not a terminate()
  std::cerr << "quickstart: " << error.what() << "\n";
  return 1;
}
