// Kernel capture's window and aggregates (detail/kernel_aggregates.hpp) on
// synthetic records: a run that fits the window reports exactly what it did
// without one; past it, the summaries read aggregates over every record, the
// report says where it was cut, and each report folds only the new records.
#include <doctest/doctest.h>

#include <gpuprof/detail/kernel_aggregates.hpp>
#include <gpuprof/compare.hpp>
#include <gpuprof/error.hpp>
#include <gpuprof/kernel_summary.hpp>
#include <gpuprof/report/json.hpp>
#include <gpuprof/report/read_json.hpp>

#include <string>
#include <vector>

using namespace gpuprof;

namespace {
// step [forward], one instance each per step; instance ids 2s+1 (step), 2s+2 (forward).
Report run_of(int steps) {
  Report report;
  ScopeNode step, forward;
  step.path = step.name = "step";
  step.count = static_cast<std::uint64_t>(steps);
  forward.path = "step/forward";
  forward.name = "forward";
  forward.parent = 0;
  forward.depth = 1;
  forward.count = static_cast<std::uint64_t>(steps);
  report.nodes = {step, forward};
  for (int s = 0; s < steps; ++s) {
    const std::int64_t t = 1000 * s;
    report.instances.push_back({2ull * s + 1, 0, 0, t, t + 900, -1});
    report.instances.push_back({2ull * s + 2, 1, 0, t + 100, t + 800, -1});
  }
  return report;
}
KernelRecord kernel(const std::string& name, std::uint64_t scope, std::int64_t start, std::int64_t duration) {
  KernelRecord k;
  k.name = name + "(float*)";
  k.base_name = name;
  k.category = "gemm";
  k.scope_instance = scope;
  k.start_ns = start;
  k.end_ns = start + duration;
  return k;
}
// Per step: gemm in forward (100 + s % 7 ns), norm in step (50 ns), a copy outside any scope.
std::vector<KernelRecord> records_of(int steps) {
  std::vector<KernelRecord> records;
  for (int s = 0; s < steps; ++s) {
    records.push_back(kernel("gemm", 2ull * s + 2, 1000 * s + 200, 100 + s % 7));
    records.push_back(kernel("norm", 2ull * s + 1, 1000 * s + 850, 50));
    KernelRecord copy = kernel("[CUDA memcpy Host-to-Device]", 0, 1000 * s + 950, 20);
    copy.kind = ActivityKind::memcpy;
    records.push_back(copy);
  }
  return records;
}
void check_same(const std::vector<KernelSummaryRow>& a, const std::vector<KernelSummaryRow>& b) {
  REQUIRE(a.size() == b.size());
  for (std::size_t i = 0; i < a.size(); ++i) {
    CHECK(a[i].name == b[i].name);
    CHECK(a[i].instances == b[i].instances);
    CHECK(a[i].total_ns == b[i].total_ns);
    CHECK(a[i].min_ns == b[i].min_ns);
    CHECK(a[i].max_ns == b[i].max_ns);
    CHECK(a[i].avg_ns == doctest::Approx(b[i].avg_ns));
    CHECK(a[i].stddev_ns == doctest::Approx(b[i].stddev_ns));
    CHECK(a[i].time_percent == doctest::Approx(b[i].time_percent));
  }
}
// `steps` steps with every record in the report, as without a window.
Report every_record(int steps) {
  Report report = run_of(steps);
  report.kernels = records_of(steps);
  return report;
}
// The same through a capture window of `window` records.
Report through_window(int steps, std::size_t window) {
  Report report = run_of(steps);
  detail::KernelAggregates aggregates(window);
  const std::size_t folded = aggregates.contribute(report, records_of(steps));
  CHECK(folded == report.recorded_kernels - report.kernels.size());
  return report;
}
}  // namespace

TEST_CASE("a run that fits the kernel window reports exactly as without one") {
  const Report plain = every_record(50), windowed = through_window(50, 1000);
  CHECK(windowed.kernels.size() == plain.kernels.size());
  CHECK(windowed.recorded_kernels == 150);
  CHECK_FALSE(windowed.kernels_cut());
  CHECK(windowed.kernel_note().empty());
  for (const std::string filter : {"", "step", "forward"}) {
    const auto a = kern_sum(windowed, filter), b = kern_sum(plain, filter);
    check_same(a, b);
    for (std::size_t i = 0; i < a.size(); ++i) CHECK(a[i].median_ns == b[i].median_ns);
  }
  const auto a = scope_kern_sum(windowed), b = scope_kern_sum(plain);
  REQUIRE(a.size() == b.size());
  for (std::size_t i = 0; i < a.size(); ++i) CHECK(a[i].kernel.median_ns == b[i].kernel.median_ns);
}

TEST_CASE("past the kernel window the summaries cover every record and the report says it was cut") {
  const Report full = every_record(300), windowed = through_window(300, 100);
  CHECK(windowed.kernels.size() == 100);
  CHECK(windowed.kernels.back().start_ns == full.kernels.back().start_ns);  // the newest are kept
  CHECK(windowed.recorded_kernels == 900);
  CHECK(windowed.kernel_note() == "kernels: last 100 of 900 records");
  REQUIRE(windowed.kernel_aggregates.size() == 3);
  CHECK(windowed.kernel_aggregates[0].scope_path == "step/forward");
  CHECK(windowed.kernel_aggregates[1].scope_path == "step");
  CHECK(windowed.kernel_aggregates[2].scope_path.empty());  // the copy, outside any scope
  for (const std::string filter : {"", "step", "forward", "step/forward"}) {
    const auto cut = kern_sum(windowed, filter), exact = kern_sum(full, filter);
    check_same(cut, exact);
    for (std::size_t i = 0; i < cut.size(); ++i)  // the sketch's median: within its relative error
      CHECK(cut[i].median_ns == doctest::Approx(exact[i].median_ns).epsilon(0.01));
  }
  // compare reads every record's figures too (copies included, as from the records).
  const MeasuredRun from_aggregates = measured_run(windowed), from_records = measured_run(full);
  REQUIRE(from_aggregates.rows.size() == from_records.rows.size());
  for (const auto& row : from_aggregates.rows) {
    if (row.kind != "kernel") continue;
    CHECK(row.measurement.n == 300);
  }
  const auto cut = scope_kern_sum(windowed), exact = scope_kern_sum(full);
  REQUIRE(cut.size() == exact.size());
  for (std::size_t i = 0; i < cut.size(); ++i) {
    CHECK(cut[i].range == exact[i].range);
    CHECK(cut[i].view == exact[i].view);
    CHECK(cut[i].kernel.total_ns == exact[i].kernel.total_ns);
    CHECK(cut[i].kernel.instances == exact[i].kernel.instances);
  }
}

TEST_CASE("each report folds only the records since the last one, and clear() starts again") {
  const std::vector<KernelRecord> all = records_of(300);
  detail::KernelAggregates aggregates(100);
  std::vector<KernelRecord> unfolded;
  Report report;
  for (int part = 0; part < 3; ++part) {
    unfolded.insert(unfolded.end(), all.begin() + 300 * part, all.begin() + 300 * (part + 1));
    report = run_of(300);
    // A report reads the window's 100 again and the 300 new records: all but
    // the newest 100 are folded once, never read again.
    CHECK(unfolded.size() == (part == 0 ? 300u : 400u));
    const std::size_t folded = aggregates.contribute(report, unfolded);
    CHECK(folded == unfolded.size() - 100);
    unfolded.erase(unfolded.begin(), unfolded.begin() + static_cast<std::ptrdiff_t>(folded));
    CHECK(aggregates.folded_records() == 300u * (part + 1) - 100);
    CHECK(report.recorded_kernels == 300u * (part + 1));
  }
  check_same(kern_sum(report, ""), kern_sum(every_record(300), ""));

  aggregates.clear();
  Report after = run_of(300);
  CHECK(aggregates.contribute(after, {all.begin(), all.begin() + 30}) == 0);
  CHECK(after.recorded_kernels == 30);
  CHECK_FALSE(after.kernels_cut());
  std::uint64_t counted = 0;
  for (const KernelAggregate& aggregate : after.kernel_aggregates) counted += aggregate.count;
  CHECK(counted == 30);
}

TEST_CASE("window 0 keeps every record") {
  const Report report = through_window(300, 0);
  CHECK(report.kernels.size() == 900);
  CHECK_FALSE(report.kernels_cut());
}

TEST_CASE("a cut report's aggregates survive the JSON file, and a file that hides records is refused") {
  const Report windowed = through_window(300, 100);
  const std::string text = to_json(windowed);
  const Report read = detail::report_from_json(detail::parse_json(text));
  CHECK(read.recorded_kernels == 900);
  CHECK(read.kernel_note() == "kernels: last 100 of 900 records");
  REQUIRE(read.kernel_aggregates.size() == windowed.kernel_aggregates.size());
  const auto before = kern_sum(windowed, ""), after = kern_sum(read, "");
  check_same(after, before);
  for (std::size_t i = 0; i < before.size(); ++i) CHECK(after[i].median_ns == before[i].median_ns);

  // A run inside the window writes no aggregates and reads back as before.
  const Report small = through_window(10, 1000);
  CHECK(to_json(small).find("kernel_aggregates") == std::string::npos);
  CHECK_FALSE(detail::report_from_json(detail::parse_json(to_json(small))).kernels_cut());

  std::string hidden = text;
  const std::size_t at = hidden.find("\"kernel_aggregates\"");
  REQUIRE(at != std::string::npos);
  hidden.replace(at, 19, "\"kernel_aggregatez\"");
  CHECK_THROWS_AS(detail::report_from_json(detail::parse_json(hidden)), InputError);
}

TEST_CASE("a record folded after its scope instance left the trace window keeps the scope a report found") {
  // 3 records a step against 2 scope instances: a kernel window of 60 records
  // holds 20 steps, a trace window of 10 instances 5. A report every 2 steps
  // finds each record's scope while its instance is in the report; the
  // record is folded 20 steps later, when its instance has left the report.
  const std::vector<KernelRecord> all = records_of(100);
  detail::KernelAggregates aggregates(60);
  std::vector<KernelRecord> unfolded;
  Report report;
  for (int steps = 2; steps <= 100; steps += 2) {
    unfolded.insert(unfolded.end(), all.begin() + 3 * (steps - 2), all.begin() + 3 * steps);
    report = run_of(steps);
    if (report.instances.size() > 10)
      report.instances.erase(report.instances.begin(), report.instances.end() - 10);
    const std::size_t folded = aggregates.contribute(report, unfolded);
    unfolded.erase(unfolded.begin(), unfolded.begin() + static_cast<std::ptrdiff_t>(folded));
  }
  CHECK(report.recorded_kernels == 300);
  CHECK(report.kernels_cut());
  for (const std::string filter : {"step", "step/forward"})
    check_same(kern_sum(report, filter), kern_sum(every_record(100), filter));
}
