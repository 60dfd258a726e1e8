// GPUPROF_WARMUP=n (set by ctest for this program) leaves out the first n
// steps like set_warmup(n), and set_warmup wins over it; a value that is
// not a count is said on stderr and ignored.
#include <doctest/doctest.h>

#include <cstdlib>
#include <string>

#include <gpuprof/profiler.hpp>

#include "warmup_steps.hpp"

TEST_CASE("GPUPROF_WARMUP=1 leaves out a slow first step; set_warmup wins over it") {
  const char* value = std::getenv("GPUPROF_WARMUP");
  REQUIRE(value != nullptr);
  REQUIRE(std::string(value) == "1");
  auto& profiler = gpuprof::profiler();
  CHECK(profiler.warmup() == 1);
  run_steps(3, 100, 2);
  check_cold_step_left_out(profiler.report(), 3, 100);

  profiler.set_warmup(0);  // the call wins: nothing more is left out
  CHECK(profiler.warmup() == 0);
  profiler.reset();
  run_steps(2, 2, 2);
  CHECK(profiler.report().warmup_instances_left_out == 0);
}

TEST_CASE("a GPUPROF_WARMUP that is not a count leaves nothing out") {
  auto& profiler = gpuprof::profiler();
  CHECK(profiler.warmup() == 0);
  run_steps(2, 2, 2);
  CHECK(profiler.report().warmup_instances_left_out == 0);
}
