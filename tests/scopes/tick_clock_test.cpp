// Scope time stamps (detail::host_ticks(), the TSC where it is invariant)
// converted back onto the steady_clock axis: checked against steady_clock
// itself across 100 ms sleeps, where a wrong rate or offset would show.
#include <doctest/doctest.h>

#include <chrono>
#include <cstdint>
#include <thread>

#include <gpuprof/clock.hpp>
#include <gpuprof/detail/tick_clock.hpp>
#include <gpuprof/profiler.hpp>
#include <gpuprof/scope.hpp>

namespace {

// Well above a calibration point's error (tens of ns) and steady_clock's
// rate slewing over 200 ms (1 ppm: 0.2 us), well below a real mistake.
constexpr std::int64_t tolerance_ns = 5'000;

void sleep_ms(int milliseconds) { std::this_thread::sleep_for(std::chrono::milliseconds(milliseconds)); }

struct BracketedTicks {
  std::int64_t steady_before, ticks, steady_after;
};
BracketedTicks read_ticks() {
  BracketedTicks read{};
  read.steady_before = gpuprof::host_now_ns();
  read.ticks = gpuprof::detail::host_ticks();
  read.steady_after = gpuprof::host_now_ns();
  return read;
}

void check_converted(const gpuprof::detail::TickConverter& converter, const BracketedTicks& read) {
  const std::int64_t converted = converter.to_ns(read.ticks);
  CHECK(converted >= read.steady_before - tolerance_ns);
  CHECK(converted <= read.steady_after + tolerance_ns);
}

}  // namespace

TEST_CASE("ticks between calibrations convert to steady_clock time within a few us") {
  gpuprof::detail::TickClock clock;  // first point
  sleep_ms(100);
  const BracketedTicks middle = read_ticks();
  sleep_ms(100);
  const gpuprof::detail::TickConverter converter = clock.converter();  // second point
  check_converted(converter, middle);
}

TEST_CASE("ticks after the last calibration convert with the rate of the whole span") {
  gpuprof::detail::TickClock clock;
  sleep_ms(100);
  const gpuprof::detail::TickConverter converter = clock.converter();
  sleep_ms(100);
  check_converted(converter, read_ticks());  // 100 ms past the last point
}

TEST_CASE("a scope's report times are steady_clock times") {
  auto& profiler = gpuprof::profiler();
  profiler.reset();
  const std::int64_t before = gpuprof::host_now_ns();
  {
    GPUPROF_SCOPE("tick clock check");
    sleep_ms(100);
  }
  const std::int64_t after = gpuprof::host_now_ns();
  const gpuprof::Report report = profiler.report();
  REQUIRE(report.instances.size() == 1);
  const gpuprof::ScopeInstance& instance = report.instances.front();
  CHECK(instance.host_begin_ns >= before - tolerance_ns);
  CHECK(instance.host_end_ns <= after + tolerance_ns);
  CHECK(instance.host_end_ns - instance.host_begin_ns >= 100'000'000 - tolerance_ns);
}
