// Built with -DGPUPROF_DISABLE: every GPUPROF_* macro compiles to nothing, its
// arguments are never evaluated, and the profiler records nothing.
#include <doctest/doctest.h>

#include <string>

#include <gpuprof/gpuprof.hpp>

#ifndef GPUPROF_DISABLE
#error "this test must be compiled with GPUPROF_DISABLE"
#endif

namespace {
int evaluations = 0;
// Only the disabled macros name these: unused is the expected outcome.
[[maybe_unused]] std::string counted_name() {
  ++evaluations;
  return "side effect";
}
[[maybe_unused]] gpuprof::Work counted_work() {
  ++evaluations;
  return {};
}
}  // namespace

TEST_CASE("GPUPROF_DISABLE: macros vanish, arguments are not evaluated, nothing is recorded") {
  gpuprof::profiler().reset();
  for (int i = 0; i < 3; ++i) {
    GPUPROF_SCOPE(counted_name());
    GPUPROF_SCOPE("literal", nullptr);
    GPUPROF_SCOPE(counted_name(), nullptr, counted_work());
  }
  CHECK(evaluations == 0);
  const gpuprof::Report report = gpuprof::profiler().report();
  CHECK(report.nodes.empty());
  CHECK(report.instances.empty());
}
