// What a CounterCapture adds to a report (detail/counter_contribution.hpp),
// on plain data: nothing before a measurement, then the last set and the
// ceilings beside it; a later set
// replaces it whole. No GPU, no CUPTI.
#include <gpuprof/detail/counter_contribution.hpp>

#include <doctest/doctest.h>

namespace {

gpuprof::CounterRange copy_range(const char* name, double bytes) {
  return {name, {{gpuprof::metric::duration_ns, 1e6}, {gpuprof::metric::dram_bytes_read, bytes}}};
}

}  // namespace

TEST_CASE("a report gets the last set and the ceilings; nothing before a set") {
  gpuprof::detail::CounterContribution contribution;
  gpuprof::RooflineCeilings ceilings;
  ceilings.pipes = {{"fp32", 67e12}};
  ceilings.dram_bytes_per_s = 4.8e12;
  ceilings.source = "table: NVIDIA H200 data sheet";
  contribution.set_ceilings(ceilings);

  gpuprof::Report report;
  contribution.add_to(report);
  CHECK(report.counters.empty());
  CHECK(report.counters.note.empty());
  CHECK(report.ceilings.empty());

  gpuprof::CounterSet set;
  set.chip = "GH100";
  set.passes = 5;
  set.scopes = {copy_range("step", 3e9), copy_range("step/copy", 2e9)};
  contribution.keep(set);
  contribution.add_to(report);
  CHECK(report.counters.chip == "GH100");
  CHECK(report.counters.passes == 5);
  REQUIRE(report.counters.scopes.size() == 2);
  CHECK(report.counters.scopes[1].name == "step/copy");
  CHECK(*report.counters.scopes[1].find(gpuprof::metric::dram_bytes_read) == 2e9);
  CHECK(report.ceilings.source == "table: NVIDIA H200 data sheet");
  CHECK(report.ceilings.dram_bytes_per_s == 4.8e12);

  // A failed or inactive measurement replaces the set too: the report says why.
  gpuprof::CounterSet failed;
  failed.note = "collection stopped: out of memory";
  contribution.keep(failed);
  gpuprof::Report later;
  contribution.add_to(later);
  CHECK(later.counters.empty());
  CHECK(later.counters.note == "collection stopped: out of memory");
}
