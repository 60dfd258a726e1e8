// A training loop whose first step is slow (a cold cuBLAS, a lazy
// allocation), for the warm-up tests: `count` steps, each a step scope with
// a backward scope inside that sleeps cold_ms the first time and warm_ms after.
#pragma once
#include <doctest/doctest.h>

#include <chrono>
#include <string>
#include <thread>

#include <gpuprof/profiler.hpp>

inline void run_steps(int count, int cold_ms, int warm_ms) {
  for (int i = 0; i < count; ++i) {
    GPUPROF_SCOPE("step");
    GPUPROF_SCOPE("backward");
    std::this_thread::sleep_for(std::chrono::milliseconds(i == 0 ? cold_ms : warm_ms));
  }
}

// The report of run_steps(count, cold_ms, ...) with the first step left out.
inline void check_cold_step_left_out(const gpuprof::Report& report, int count, int cold_ms) {
  for (const char* path : {"step", "step/backward"}) {
    const gpuprof::ScopeNode* node = nullptr;
    for (const auto& candidate : report.nodes)
      if (candidate.path == path) node = &candidate;
    REQUIRE(node != nullptr);
    CHECK(node->count == static_cast<std::uint64_t>(count - 1));
    CHECK(node->host_ms.max < cold_ms);  // the cold step is not in the statistics
    // But its time is kept. On a GPU it is a CUDA-event pair around the
    // sleep, which can read a few us short of it (99.9999 ms for 100 on an H200).
    CHECK(node->cold_ms >= 0.99 * cold_ms);
  }
}
