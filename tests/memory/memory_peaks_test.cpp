// Per-scope memory peaks (memory.hpp) from synthetic boundary samples and
// allocation records: the bookkeeping MemoryWatch runs, without a GPU.
#include <doctest/doctest.h>

#include <gpuprof/memory.hpp>

#include <vector>

using namespace gpuprof;
using namespace gpuprof::detail;  // the peak bookkeeping MemoryWatch runs on

namespace {
MemorySample used(std::int64_t device_used) {
  MemorySample s;
  s.device_used = device_used;
  return s;
}
MemorySample pooled(std::int64_t device_used, std::int64_t reserved, std::int64_t used_high) {
  return MemorySample{device_used, reserved, used_high};
}
AllocationRecord allocation(std::int64_t time, std::int64_t bytes, bool from_pool = false) {
  AllocationRecord a;
  a.time_ns = time;
  a.bytes = bytes;
  a.from_pool = from_pool;
  return a;
}
}  // namespace

TEST_CASE("boundary samples: a scope's peak includes its nested scopes' boundaries") {
  MemoryPeakTracker tracker;
  tracker.begin(1, used(100));  // outer
  tracker.begin(2, used(300));  // inner
  tracker.end(2, used(250));
  tracker.begin(3, used(120));  // on another thread, while 1 is open
  tracker.end(1, used(150));
  tracker.end(3, used(110));
  const auto& done = tracker.finished();
  REQUIRE(done.size() == 3);
  CHECK(done.at(1).boundaries_peak == 300);
  CHECK(done.at(1).device_used_at_begin == 100);
  CHECK(done.at(2).boundaries_peak == 300);
  CHECK(done.at(3).boundaries_peak == 150);  // saw scope 1 end at 150
  CHECK(done.at(1).pool_peak == -1);         // no pool watched
  CHECK(done.at(1).peak() == 300);
}

TEST_CASE("pool high-water: memory outside the pool at begin plus the pool's high mark") {
  MemoryPeakTracker tracker;
  // 1000 in use, of which the pool has reserved 400 (so 600 outside it).
  tracker.begin(1, pooled(1000, 400, 50));
  // Before the inner scope resets the mark, the pool reached 700 used.
  tracker.begin(2, pooled(1300, 700, 700));
  // After the reset the pool peaked at 900 inside scope 2.
  tracker.end(2, pooled(1300, 900, 900));
  tracker.end(1, pooled(1300, 900, 200));
  const auto& done = tracker.finished();
  CHECK(done.at(1).pool_peak == 600 + 900);
  CHECK(done.at(2).pool_peak == (1300 - 700) + 900);
  CHECK(done.at(1).peak() == 1500);
}

TEST_CASE("allocation replay finds a peak between boundaries") {
  const std::vector<AllocationRecord> records = {
      allocation(5, 1000),  // before the window
      allocation(20, 500),        allocation(30, 300), allocation(40, -500),
      allocation(45, 5000, true),  // pool sub-allocation: the pool source's job
      allocation(50, -300),       allocation(60, 100), allocation(200, 9000)};  // after the window
  CHECK(replayed_peak(records, 10, 100, 2000) == 2800);
  CHECK(replayed_peak(records, 35, 100, 2000) == 2000);  // frees first: never below the start
  CHECK(replayed_peak({}, 0, 100, 7) == 7);
}

TEST_CASE("apply_memory_peaks: highest execution per node, -1 where unwatched") {
  Report report;
  report.nodes.resize(3);
  ScopeInstance a, b, c;
  a.id = 1;
  a.node = 0;
  a.host_begin_ns = 10;
  a.host_end_ns = 100;
  b.id = 2;
  b.node = 0;
  b.host_begin_ns = 200;
  b.host_end_ns = 300;
  c.id = 3;
  c.node = 1;
  c.host_begin_ns = 400;
  c.host_end_ns = 500;
  report.instances = {a, b, c};
  std::unordered_map<std::uint64_t, InstanceMemory> finished;
  finished[1] = InstanceMemory{1000, 1200, -1};
  finished[2] = InstanceMemory{1000, 1100, 1300};
  finished[3] = InstanceMemory{1000, 1000, -1};
  apply_memory_peaks(report, finished, {});
  CHECK(report.nodes[0].peak_device_bytes == 1300);
  CHECK(report.nodes[1].peak_device_bytes == 1000);
  CHECK(report.nodes[2].peak_device_bytes == -1);

  report.nodes[1].peak_device_bytes = -1;
  apply_memory_peaks(report, finished,
                     {allocation(450, 4000), allocation(460, -4000), allocation(50, 99999)});
  CHECK(report.nodes[1].peak_device_bytes == 5000);  // 1000 at begin + 4000 alive for 10 ns
}
