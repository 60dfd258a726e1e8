// comm_overlap.hpp: interval arithmetic and communication/computation time
// per scope and per step, against hand-computed values.
#include <gpuprof/comm_overlap.hpp>
#include <gpuprof/kernel_names.hpp>

#include <doctest/doctest.h>

#include <vector>

#include "ranks/rank_reports.hpp"

using doctest::Approx;
using gpuprof::TimeInterval;
using gpuprof_test::add_kernel;
using gpuprof_test::rank_report;

namespace {
std::vector<std::int64_t> flat(const std::vector<TimeInterval>& intervals) {
  std::vector<std::int64_t> ends;
  for (const TimeInterval& interval : intervals)
    ends.insert(ends.end(), {interval.begin_ns, interval.end_ns});
  return ends;
}
}  // namespace

TEST_CASE("interval_union: overlapping, nested, touching and empty intervals") {
  // [5,10) and [8,20) overlap; [12,14) is nested; [20,25) touches; [30,30) is empty; [40,50) is apart.
  const auto merged = gpuprof::interval_union({{40, 50}, {8, 20}, {5, 10}, {12, 14}, {20, 25}, {30, 30}});
  CHECK(flat(merged) == std::vector<std::int64_t>{5, 25, 40, 50});
  CHECK(gpuprof::covered_ns(merged) == 30);
  CHECK(gpuprof::interval_union({}).empty());
}

TEST_CASE("interval_intersection: partial, containing and disjoint pieces") {
  const std::vector<TimeInterval> a = {{0, 10}, {20, 40}, {60, 70}};
  const std::vector<TimeInterval> b = {{5, 25}, {30, 35}, {45, 55}, {65, 100}};
  // [5,10) + [20,25) + [30,35) + [65,70); [45,55) meets nothing.
  CHECK(flat(gpuprof::interval_intersection(a, b)) ==
        std::vector<std::int64_t>{5, 10, 20, 25, 30, 35, 65, 70});
  CHECK(gpuprof::covered_ns(gpuprof::interval_intersection(a, b)) == 20);
  CHECK(gpuprof::interval_intersection(a, {}).empty());
}

TEST_CASE("NCCL kernels fall in the communication category") {
  const gpuprof::CategoryRules rules = gpuprof::CategoryRules::defaults();
  for (const char* name :
       {"ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevKernelArgsStorage<4096ul>)",
        "ncclKernel_AllGather_RING_LL_Sum_int8_t(ncclWorkElem)",
        "void ncclDevKernel_ReduceScatter_Sum_bf16_RING_LL(ncclDevKernelArgsStorage<4096ul>)"}) {
    gpuprof::KernelRecord record;
    gpuprof::name_record(record, name, rules);
    CHECK_MESSAGE(record.category == "communication", name);
    CHECK(gpuprof::is_communication(record));
    CHECK_FALSE(gpuprof::is_computation(record));
  }
}

TEST_CASE("communication vs computation: multi-stream, nested, disjoint, copies ignored") {
  gpuprof::Report report = rank_report(0, 1, {10, 10});
  // Step 0. Computation on two streams: [0,100) and [150,300) on 1, [250,400) on 2 -> union [0,100)+[150,400)
  // = 350 us.
  add_kernel(report, 0, 2, "gemm", 1, 0, 100);
  add_kernel(report, 0, 2, "elementwise", 1, 150, 300);
  add_kernel(report, 0, 3, "gemm", 2, 250, 400);
  // Communication [80,200) with a nested [90,120) on another stream -> 120 us.
  add_kernel(report, 0, 3, "communication", 3, 80, 200);
  add_kernel(report, 0, 3, "communication", 4, 90, 120);
  // A copy and a "memory" kernel count as neither.
  add_kernel(report, 0, 3, "memory", 1, 500, 600, gpuprof::ActivityKind::memcpy);
  add_kernel(report, 0, 3, "memory", 1, 600, 650);
  // Step 1: disjoint, communication [700,800) after computation [0,50).
  add_kernel(report, 1, 2, "gemm", 1, 0, 50);
  add_kernel(report, 1, 3, "communication", 3, 700, 800);

  const auto steps = gpuprof::comm_compute_by_step(report, "train");
  REQUIRE(steps.size() == 2);
  CHECK(steps[0].computation_ms == Approx(0.350));
  CHECK(steps[0].communication_ms == Approx(0.120));
  CHECK(steps[0].overlap_ms == Approx(0.070));  // [80,100) + [150,200)
  CHECK(steps[0].exposed_communication_ms() == Approx(0.050));
  CHECK(steps[0].overlap_fraction() == Approx(70.0 / 120));
  CHECK(steps[1].computation_ms == Approx(0.050));
  CHECK(steps[1].communication_ms == Approx(0.100));
  CHECK(steps[1].overlap_ms == 0);
  CHECK(steps[1].exposed_communication_ms() == Approx(0.100));

  // Per scope, inclusive: forward launched only computation, backward the
  // rest; train holds both steps, setup nothing.
  const auto scopes = gpuprof::comm_compute_by_scope(report);
  REQUIRE(scopes.size() == 4);
  CHECK(scopes[0].computation_ms == 0);
  CHECK(scopes[0].communication_ms == 0);
  CHECK(scopes[2].computation_ms == Approx(0.100 + 0.150 + 0.050));
  CHECK(scopes[2].communication_ms == 0);
  CHECK(scopes[3].computation_ms == Approx(0.150));
  CHECK(scopes[3].communication_ms == Approx(0.220));
  CHECK(scopes[3].overlap_ms == 0);  // its computation [250,400) starts after its communication ends
  CHECK(scopes[1].computation_ms == Approx(0.350 + 0.050));
  CHECK(scopes[1].communication_ms == Approx(0.220));
  CHECK(scopes[1].overlap_ms == Approx(0.070));
}

TEST_CASE(
    "comm_compute_by_step: work without a launching scope goes by its launch time, graph work by its node, "
    "another thread's in no step") {
  gpuprof::Report report = rank_report(0, 1, {10, 10});
  add_kernel(report, 1, 2, "communication", 3, 0, 40);
  report.kernels.back().scope_instance = 0;  // launched outside any scope, during step 1
  report.kernels.back().launch_ns = gpuprof_test::step_begin_ns(1) + 2 * gpuprof_test::us;
  add_kernel(report, 0, 2, "gemm", 1, 0, 30);
  report.kernels.back().scope_instance = 0;  // graph work captured in train/backward
  report.kernels.back().scope_node = 3;
  // Launched from a scope of another host thread during step 0: in no step of thread 0.
  report.instances.push_back(
      {99, 2, 1, gpuprof_test::step_begin_ns(0) + 10, gpuprof_test::step_begin_ns(0) + 20, 0.0});
  add_kernel(report, 0, 2, "gemm", 5, 0, 1000);
  report.kernels.back().scope_instance = 99;
  const auto steps = gpuprof::comm_compute_by_step(report, "train");
  CHECK(steps[1].communication_ms == Approx(0.040));
  CHECK(steps[0].computation_ms == Approx(0.030));
  const auto scopes = gpuprof::comm_compute_by_scope(report);
  CHECK(scopes[3].computation_ms == Approx(0.030));
  CHECK(scopes[1].computation_ms == Approx(1.000));  // the other thread's kernel covers the graph work
  CHECK(scopes[1].communication_ms == 0);            // no launching scope: charged to none
}
