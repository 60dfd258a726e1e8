// The memory timeline builder, reports read back from JSON, the environment
// every report carries, and the HTML page's text (the browser test,
// html_browser_test.cmake, checks how it draws).
#include <gpuprof/environment.hpp>
#include <gpuprof/report.hpp>
#include <gpuprof/report/html.hpp>
#include <gpuprof/build_memory_timeline.hpp>
#include <gpuprof/report/read_json.hpp>

#include <doctest/doctest.h>

#include <algorithm>
#include <fstream>
#include <sstream>
#include <string>

#include "support/occurrences.hpp"
#include "support/synthetic_report.hpp"
#include "support/temporary_directory.hpp"

using doctest::Approx;

using gpuprof_test::occurrences;

TEST_CASE("memory timeline: allocations paired with their release and attributed to the innermost scope") {
  const gpuprof::Report report = gpuprof_test::synthetic_training_report();
  const gpuprof::MemoryTimeline& timeline = report.memory_timeline;
  REQUIRE(timeline.allocations.size() == 1 + 3 * 3);
  const gpuprof::TimelineAllocation& weights = timeline.allocations[0];
  CHECK(weights.bytes == 400 << 20);
  CHECK(weights.free_ns == -1);  // never freed
  CHECK(weights.scope_path.empty());
  CHECK(weights.scope_instance == 0);
  const gpuprof::TimelineAllocation& attention = timeline.allocations[1];
  CHECK(attention.scope_path == "step/forward/attention");
  CHECK(attention.free_ns - attention.alloc_ns == 775'000);
  CHECK(timeline.allocations[2].scope_path == "step/forward/mlp");
  CHECK(timeline.allocations[3].scope_path == "step/backward");
  for (const auto& allocation : timeline.allocations)
    if (allocation.scope_instance != 0) {
      const auto& instance = *std::find_if(report.instances.begin(), report.instances.end(),
                                           [&](const auto& i) { return i.id == allocation.scope_instance; });
      CHECK(report.nodes[static_cast<std::size_t>(instance.node)].path == allocation.scope_path);
    }
  const auto largest = gpuprof::largest_allocations(timeline, 3);
  REQUIRE(largest.size() == 3);
  CHECK(largest[0].bytes == 400 << 20);
  CHECK(largest[1].bytes == 160 << 20);
  CHECK(largest[1].alloc_ns < largest[2].alloc_ns);  // ties keep time order
  CHECK(timeline.in_use.size() == 2 * report.instances.size());
}

TEST_CASE("memory timeline: a release without its allocation is ignored; addresses are reused") {
  gpuprof::Report report;  // no scopes at all
  const std::vector<gpuprof::AllocationRecord> records = {
      {10, -64, 0x10, 0, false},  // allocated before capture began
      {20, 100, 0x20, 0, false},
      {30, -100, 0x20, 0, false},
      {40, 50, 0x20, 0, false}};
  const gpuprof::MemoryTimeline timeline = gpuprof::build_memory_timeline(report, {}, records);
  REQUIRE(timeline.allocations.size() == 2);
  CHECK(timeline.allocations[0].free_ns == 30);
  CHECK(timeline.allocations[1].alloc_ns == 40);
  CHECK(timeline.allocations[1].free_ns == -1);
}

TEST_CASE("report JSON reads back into the same report model") {
  const gpuprof::Report report = gpuprof_test::synthetic_training_report();
  gpuprof_test::TemporaryDirectory dir;
  gpuprof::write_json(report, dir.file("report.json"));
  const gpuprof::Report back = gpuprof::read_report_json(dir.file("report.json"));
  REQUIRE(back.nodes.size() == report.nodes.size());
  for (std::size_t i = 0; i < back.nodes.size(); ++i) {
    CHECK(back.nodes[i].path == report.nodes[i].path);
    CHECK(back.nodes[i].parent == report.nodes[i].parent);
    CHECK(back.nodes[i].gpu_ms.median == report.nodes[i].gpu_ms.median);
    CHECK(back.nodes[i].gpu_ms.sorted == report.nodes[i].gpu_ms.sorted);
  }
  CHECK(back.instances.size() == report.instances.size());
  CHECK(back.instances[3].host_begin_ns == report.instances[3].host_begin_ns);
  REQUIRE(back.kernels.size() == report.kernels.size());
  CHECK(back.kernels[0].name == report.kernels[0].name);
  CHECK(back.kernels[0].scope_instance == report.kernels[0].scope_instance);
  CHECK(back.environment.host_name == "test-host");
  REQUIRE(back.memory_timeline.allocations.size() == report.memory_timeline.allocations.size());
  CHECK(back.memory_timeline.allocations[1].scope_path == "step/forward/attention");
  CHECK(back.memory_timeline.allocations[0].free_ns == -1);
  CHECK(back.memory_timeline.in_use.back().bytes_in_use == report.memory_timeline.in_use.back().bytes_in_use);

  std::ofstream(dir.file("other.json")) << R"({"schema": "gpuprof.bench", "version": 1})";
  CHECK_THROWS_WITH_AS(gpuprof::read_report_json(dir.file("other.json")),
                       doctest::Contains("not a gpuprof report"), gpuprof::Error);
}

TEST_CASE("environment: captured at report time, written and read back, differences named") {
  const gpuprof::Environment env = gpuprof::capture_environment();
  CHECK_FALSE(env.host_name.empty());
  CHECK_FALSE(env.compiler.empty());
  CHECK(env.time_utc.size() == 20);  // 2026-01-01T00:00:00Z
  CHECK_FALSE(env.build_type.empty());
  if (env.gpu_uuid.empty()) {  // no GPU here: clocks unknown, and the note says why
    CHECK(env.sm_clock_mhz_end == -1);
    CHECK_FALSE(env.clocks_note.empty());
  }
  gpuprof::JsonWriter json;
  gpuprof::write_environment_json(json, env);
  const gpuprof::Environment back =
      gpuprof::detail::environment_from_json(gpuprof::detail::parse_json(json.str()));
  CHECK(back.host_name == env.host_name);
  CHECK(back.compiler_flags == env.compiler_flags);
  CHECK(back.git_revision == env.git_revision);
  CHECK(gpuprof::environment_differences(env, back).empty());
  gpuprof::Environment other = env;
  other.driver_version = "999.1";
  other.git_revision = "different";  // revisions differ by design: not a warning
  const auto differences = gpuprof::environment_differences(env, other);
  REQUIRE(differences.size() == 1);
  CHECK(differences[0].rfind("driver: ", 0) == 0);
  CHECK(gpuprof::throttle_reason_names(gpuprof::throttle_reason::sw_power_cap |
                                       gpuprof::throttle_reason::hw_slowdown) == "sw_power_cap+hw_slowdown");
  CHECK(gpuprof::ClockSample{1980, 2619, gpuprof::throttle_reason::sw_thermal_slowdown}.throttled());
  CHECK_FALSE(gpuprof::ClockSample{1980, 2619, gpuprof::throttle_reason::gpu_idle}.throttled());
}

TEST_CASE("HTML page: self-contained, static markup, every name escaped") {
  gpuprof::Report report = gpuprof_test::synthetic_training_report();
  report.nodes[6].name = "</script><img src=x onerror=alert(1)>";
  report.nodes[6].path = report.nodes[6].name;
  const std::string page = gpuprof::to_html(report, {"a <b> title"});
  CHECK(page.rfind("<!DOCTYPE html>", 0) == 0);
  CHECK(occurrences(page, "</script>") == 1);  // the page's own script, nothing else
  CHECK(occurrences(page, "<img") == 0);
  CHECK(page.find("&lt;/script&gt;&lt;img src=x onerror=alert(1)&gt;") != std::string::npos);
  CHECK(page.find("<title>a &lt;b&gt; title</title>") != std::string::npos);
  // Nothing is fetched: no external scripts, styles or images.
  CHECK(page.find("<script src") == std::string::npos);
  CHECK(page.find("<link") == std::string::npos);
  CHECK(page.find("https://") == std::string::npos);
  CHECK(page.find("//cdn") == std::string::npos);
  // The content is markup, not data for a script to draw: one chart element
  // and one table row per scope, the kernels, the memory picture.
  CHECK(occurrences(page, "<rect class=\"flame-node\"") == report.nodes.size());
  CHECK(occurrences(page, "<tr data-node=") == report.nodes.size());
  CHECK(page.find("<td class=\"name\">sm90_xmma_gemm_bf16") != std::string::npos);
  CHECK(page.find("<polygon class=\"allocation\"") != std::string::npos);
  CHECK(page.find("gpuprof-data") == std::string::npos);
}

TEST_CASE("HTML page: samples as at most 24 bins per scope, so the page does not grow with them") {
  gpuprof::Report report = gpuprof_test::synthetic_training_report();
  const auto page_with = [&](std::size_t samples) {
    std::vector<double> ms;
    for (std::size_t i = 0; i < samples; ++i) ms.push_back(1.0 + 0.001 * static_cast<double>(i % 97));
    report.nodes[0].gpu_ms = gpuprof::summarize(ms);
    return gpuprof::to_html(report);
  };
  const std::string small = page_with(10), large = page_with(100000);
  CHECK(large.size() < small.size() + 200);  // a few longer numbers, not 100000 samples

  const std::size_t row = large.find("<tr data-node=\"0\" data-bins=\"");
  REQUIRE(row != std::string::npos);
  const std::size_t begin = large.find("data-bins=\"", row) + 11;
  std::istringstream bins(large.substr(begin, large.find('"', begin) - begin));
  std::string scale;
  double low = 0, high = 0;
  bins >> scale >> low >> high;
  CHECK(scale == "linear");  // max under 4 x min
  CHECK(low == Approx(1.0));
  CHECK(high == Approx(1.096));
  std::size_t count = 0, total = 0, n = 0;
  while (bins >> count) {
    total += count;
    ++n;
  }
  CHECK(n == 24);
  CHECK(total == 100000);

  // A long tail (max 16 x min): bins equal in log(time), 5 samples in 5 bins,
  // one in each (linear bins would put 1, 2 and 4 ms into the first two).
  report.nodes[0].gpu_ms = gpuprof::summarize({1, 2, 4, 8, 16});
  CHECK(gpuprof::to_html(report).find("data-bins=\"log 1 16 1 1 1 1 1\"") != std::string::npos);
}

TEST_CASE("HTML page: PyTorch allocator columns only when some scope was watched") {
  gpuprof::Report report = gpuprof_test::synthetic_training_report();
  CHECK(gpuprof::to_html(report).find("alloc peak MiB") == std::string::npos);
  CHECK(gpuprof::to_html(report).find("reserved MiB") == std::string::npos);

  report.nodes[0].peak_allocated_bytes = std::int64_t{5} << 30;  // beyond 32 bits
  report.nodes[0].reserved_bytes = std::int64_t{3} << 31;
  const std::string page = gpuprof::to_html(report);
  CHECK(
      page.find(
          "<th>peak MiB</th><th>alloc peak MiB</th><th>reserved MiB</th><th class=\"name\">unstable</th>") !=
      std::string::npos);
  // The watched scope's row: its figures in MiB; every other row empty cells, not 0.
  const std::size_t row = page.find("<tr data-node=\"0\"");
  REQUIRE(row != std::string::npos);
  const std::string watched = page.substr(row, page.find("</tr>", row) - row);
  CHECK(watched.find("<td>5120.0</td><td>6144.0</td><td class=\"name\">") != std::string::npos);
  const std::size_t other = page.find("<tr data-node=\"1\"");
  REQUIRE(other != std::string::npos);
  CHECK(page.substr(other, page.find("</tr>", other) - other).find("<td></td><td></td><td class=\"name\">") !=
        std::string::npos);
}

TEST_CASE("markdown report names the machine under its heading") {
  gpuprof::Report report = gpuprof_test::synthetic_training_report();
  report.environment.driver_version = "580.65.06";
  const std::string markdown = gpuprof::to_markdown(report);
  CHECK(markdown.find("GPU: Synthetic GPU \xC2\xB7 driver: 580.65.06") != std::string::npos);
  CHECK(markdown.find("host: test-host") != std::string::npos);
  CHECK(markdown.find("time (UTC): 2026-01-01T00:00:00Z") != std::string::npos);
}
