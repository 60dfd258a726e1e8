// Profiler::step() and its schedule: the actions match torch.profiler.schedule
// step for step; only scopes begun in active steps reach the statistics and
// the trace window, the others are counted; repeat cycles end; reset() keeps
// the step count; bench()'s warm-up and set_warmup(n) still apply on top.
#include <doctest/doctest.h>

#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include <gpuprof/bench.hpp>
#include <gpuprof/error.hpp>
#include <gpuprof/profiler.hpp>
#include <gpuprof/scope.hpp>
#include <gpuprof/step_schedule.hpp>

namespace {
// A schedule set by a test is cleared whatever the test does.
struct ScheduleGuard {
  ~ScheduleGuard() {
    gpuprof::profiler().clear_schedule();
    gpuprof::profiler().set_warmup(0);
  }
};

// Runs `steps` steps, each one "step" scope holding one "inner" scope, and
// returns the step numbers they ran as.
std::vector<std::uint64_t> run_steps(int steps) {
  std::vector<std::uint64_t> numbers;
  auto& profiler = gpuprof::profiler();
  for (int i = 0; i < steps; ++i) {
    numbers.push_back(profiler.step_number());
    {
      GPUPROF_SCOPE("step");
      GPUPROF_SCOPE("inner");
    }
    profiler.step();
  }
  return numbers;
}

std::uint64_t count_of(const gpuprof::Report& report, const std::string& path) {
  for (const gpuprof::ScopeNode& node : report.nodes)
    if (node.path == path) return node.count;
  return 0;
}
}  // namespace

TEST_CASE("schedule actions are torch.profiler.schedule's") {
  using A = gpuprof::StepAction;
  // torch.profiler.schedule(wait=1, warmup=1, active=2, repeat=2, skip_first=1), steps 0..10.
  const gpuprof::StepSchedule s = gpuprof::schedule(1, 1, 2, 2, 1);
  const std::vector<A> expected = {A::none, A::none,   A::warmup, A::record,          A::record_and_save,
                                   A::none, A::warmup, A::record, A::record_and_save, A::none,
                                   A::none};
  for (std::uint64_t step = 0; step < expected.size(); ++step) {
    CAPTURE(step);
    CHECK(s.action(step) == expected[step]);
  }
  // repeat 0: cycles without end; active 1 is its own last step.
  const gpuprof::StepSchedule forever = gpuprof::schedule(0, 0, 1);
  CHECK(forever.action(0) == A::record_and_save);
  CHECK(forever.action(1'000'000) == A::record_and_save);
  const gpuprof::StepSchedule cycles = gpuprof::schedule(2, 0, 3);
  CHECK(cycles.action(5 * 1000 + 1) == A::none);
  CHECK(cycles.action(5 * 1000 + 2) == A::record);
  CHECK(cycles.action(5 * 1000 + 4) == A::record_and_save);
  CHECK_THROWS_AS(gpuprof::schedule(1, 1, 0), gpuprof::Error);
  CHECK_THROWS_AS(gpuprof::schedule(-1, 1, 1), gpuprof::Error);
  CHECK_THROWS_AS(gpuprof::schedule(0, 0, 1, -2), gpuprof::Error);
  CHECK_THROWS_AS(gpuprof::profiler().set_schedule(gpuprof::StepSchedule{1, 1, 0, 0, 0}), gpuprof::Error);
  CHECK_FALSE(gpuprof::profiler().schedule().has_value());
}

TEST_CASE("without a schedule step() only counts and every step is kept") {
  auto& profiler = gpuprof::profiler();
  profiler.reset();
  const std::uint64_t first = profiler.step_number();
  run_steps(5);
  CHECK(profiler.step_number() == first + 5);
  CHECK(profiler.step_action() == gpuprof::StepAction::record);
  const gpuprof::Report report = profiler.report();
  CHECK(count_of(report, "step") == 5);
  CHECK(profiler.instances_outside_active_steps() == 0);
}

TEST_CASE("only active steps reach the statistics and the trace; the rest is counted") {
  const ScheduleGuard guard;
  auto& profiler = gpuprof::profiler();
  profiler.reset();
  profiler.set_schedule(
      gpuprof::schedule(/*wait=*/2, /*warmup=*/1, /*active=*/2, /*repeat=*/2, /*skip_first=*/1));
  CHECK(profiler.step_number() == 0);
  const std::vector<std::uint64_t> numbers = run_steps(14);
  CHECK(numbers.front() == 0);
  CHECK(numbers.back() == 13);
  // Active: 1 skipped, then cycles of 5 from step 1: steps 4, 5 and 9, 10.
  const gpuprof::Report report = profiler.report();
  CHECK(count_of(report, "step") == 4);
  CHECK(count_of(report, "step/inner") == 4);
  CHECK(report.instances.size() == 8);
  CHECK(report.recorded_instances == 8);
  CHECK(profiler.instances_outside_active_steps() == 2 * 10);
  CHECK(report.timing_note.find("20 scope instance(s) began in steps outside the schedule's active steps") !=
        std::string::npos);
  // Past the last cycle nothing more is kept.
  run_steps(10);
  CHECK(count_of(profiler.report(), "step") == 4);
  CHECK(profiler.instances_outside_active_steps() == 2 * 20);
}

TEST_CASE("an instance belongs to the step it began in") {
  const ScheduleGuard guard;
  auto& profiler = gpuprof::profiler();
  profiler.reset();
  profiler.set_schedule(gpuprof::schedule(1, 0, 1));  // steps 0, 2, 4 wait; 1, 3, 5 active
  {
    GPUPROF_SCOPE("spans a boundary");  // begins in step 0: left out
    profiler.step();
    { GPUPROF_SCOPE("inside, in step 1"); }
  }
  const gpuprof::Report report = profiler.report();
  CHECK(count_of(report, "spans a boundary") == 0);
  CHECK(count_of(report, "spans a boundary/inside, in step 1") == 1);
  CHECK(profiler.instances_outside_active_steps() == 1);
}

TEST_CASE("reset() forgets the instances and keeps the step count; set_schedule starts again") {
  const ScheduleGuard guard;
  auto& profiler = gpuprof::profiler();
  profiler.reset();
  profiler.set_schedule(gpuprof::schedule(1, 0, 2));  // cycle of 3: steps 1, 2 active, 3 waits, ...
  run_steps(3);
  CHECK(count_of(profiler.report(), "step") == 2);
  profiler.reset();
  CHECK(profiler.step_number() == 3);
  CHECK(profiler.instances_outside_active_steps() == 0);
  run_steps(3);  // steps 3 (waits), 4, 5
  CHECK(count_of(profiler.report(), "step") == 2);
  CHECK(profiler.instances_outside_active_steps() == 2);
  // A report and a reset at each record_and_save step: one report per cycle.
  profiler.set_schedule(gpuprof::schedule(1, 1, 2, 3));
  profiler.reset();
  std::vector<std::uint64_t> per_cycle;
  for (int i = 0; i < 20; ++i) {
    const bool last_of_cycle = profiler.step_action() == gpuprof::StepAction::record_and_save;
    run_steps(1);
    if (last_of_cycle) {
      per_cycle.push_back(count_of(profiler.report(), "step"));
      profiler.reset();
    }
  }
  CHECK(per_cycle == std::vector<std::uint64_t>{2, 2, 2});
  CHECK(profiler.step_number() == 20);
}

TEST_CASE("set_warmup(n) counts the root instances the schedule keeps; bench()'s warm-up stays out") {
  const ScheduleGuard guard;
  auto& profiler = gpuprof::profiler();
  profiler.reset();
  profiler.set_warmup(1);
  profiler.set_schedule(gpuprof::schedule(1, 0, 3));  // steps 1, 2, 3 active; 5, 6, 7 ...
  run_steps(8);                                       // active: 1, 2, 3, 5, 6, 7
  gpuprof::Report report = profiler.report();
  CHECK(count_of(report, "step") == 5);  // the first active one is warm-up
  CHECK(report.warmup_instances_left_out == 2);
  CHECK(profiler.instances_outside_active_steps() == 2 * 2);

  profiler.set_warmup(0);
  profiler.reset();
  profiler.set_schedule(gpuprof::schedule(0, 0, 1));  // every step active
  gpuprof::BenchOptions options;
  options.warmup = 3;
  options.iters = 4;
  const gpuprof::BenchResult result = gpuprof::bench([] { GPUPROF_SCOPE("benched"); }, options);
  CHECK(result.host_ms.size() == 4);
  report = profiler.report();
  CHECK(count_of(report, "benched") == 4);  // the cold call and 3 warm-up calls left out
  CHECK(report.warmup_instances_left_out == 4);

  profiler.reset();
  profiler.set_schedule(gpuprof::schedule(1, 0, 1));  // step 0 waits: bench()'s scopes are left out too
  (void)gpuprof::bench([] { GPUPROF_SCOPE("benched"); }, options);
  CHECK(count_of(profiler.report(), "benched") == 0);
  CHECK(profiler.instances_outside_active_steps() == 8);
}
