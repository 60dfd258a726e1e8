// timed_work: a small program to compare with itself. It times a fixed
// amount of CPU arithmetic with gpuprof::bench() (host clock), inside a
// scope, and writes the report.
//
//   timed_work OUT.json [--slowdown FRACTION]
//
// --slowdown 0.3 does 30 % more arithmetic per call: the regression that
// gpuprof-compare must still find (tests/compare/interleaved_gate.sh).
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>

#include <gpuprof/gpuprof.hpp>

namespace {

// About 100 µs of dependent integer arithmetic a call on a 3 GHz core: short
// enough that most calls finish inside one time slice of a busy machine, so
// preemption shows up as outliers rather than as a shift of the median.
constexpr std::uint64_t base_rounds = 150000;

std::uint64_t spin(std::uint64_t rounds) {
  std::uint64_t x = 0x9E3779B97F4A7C15ull;
  for (std::uint64_t i = 0; i < rounds; ++i) {  // xorshift64: each round waits on the last
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
  }
  return x;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2 && !(argc == 4 && std::string(argv[2]) == "--slowdown")) {
    std::fprintf(stderr, "usage: timed_work OUT.json [--slowdown FRACTION]\n");
    return 2;
  }
  double slowdown = 0;
  if (argc == 4) {
    char* end = nullptr;
    slowdown = std::strtod(argv[3], &end);
    if (end == argv[3] || *end != '\0' || !(slowdown >= 0 && slowdown <= 10)) {
      std::fprintf(stderr, "timed_work: --slowdown wants a fraction in [0, 10], got \"%s\"\n", argv[3]);
      return 2;
    }
  }
  try {
    gpuprof::profiler().set_gpu_timing(false);  // CPU work: the host clock is its time
    const auto rounds = static_cast<std::uint64_t>(static_cast<double>(base_rounds) * (1 + slowdown));
    volatile std::uint64_t sink = 0;
    gpuprof::BenchOptions options;
    options.warmup = 20;
    // About 0.4 s of samples: a burst of load on a shared machine (tens of
    // milliseconds) then covers a small part of the run and moves its median
    // little; over 200 samples (40 ms) one burst covered a whole run, and two
    // runs of this program came out 19 % apart.
    options.iters = 2000;
    gpuprof::bench(
        [&] {
          GPUPROF_SCOPE("work");
          sink = sink + spin(rounds);
        },
        options);
    gpuprof::write_json(gpuprof::profiler().report(), argv[1]);
  } catch (const std::exception& error) {
    std::fprintf(stderr, "timed_work: %s\n", error.what());
    return 1;
  }
  return 0;
}
