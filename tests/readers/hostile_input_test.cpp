// Hostile input to the readers (detail/json_reader.hpp, report/read_json.hpp,
// compare.hpp, merge.hpp) and to the text and markdown writers: each case is
// a report of the kind a probe crafted, made from a real one by a small edit,
// and must end in gpuprof::InputError with a message saying what is wrong,
// or print escaped. The same cases through the tools: hostile_tools.sh.
#include <gpuprof/compare.hpp>
#include <gpuprof/report/read_bench_json.hpp>
#include <gpuprof/merge.hpp>
#include <gpuprof/report.hpp>
#include <gpuprof/report/bench_json.hpp>
#include <gpuprof/report/chrome_trace.hpp>
#include <gpuprof/report/merged.hpp>
#include <gpuprof/report/read_json.hpp>

#include <doctest/doctest.h>

#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

#include "support/synthetic_report.hpp"
#include "support/temporary_directory.hpp"

namespace {

using gpuprof::InputError;
using gpuprof::Report;

// The synthetic report's JSON with the first `from` replaced by `to`.
std::string edited_report(const std::string& from, const std::string& to) {
  std::string text = gpuprof::to_json(gpuprof_test::synthetic_training_report());
  const std::size_t at = text.find(from);
  REQUIRE_MESSAGE(at != std::string::npos, "the report has no " << from);
  return text.replace(at, from.size(), to);
}

Report read_text(const std::string& text) {
  return gpuprof::detail::report_from_json(gpuprof::detail::parse_json(text));
}

// An edit of the report (`from` to `to`) and the message it is refused with.
struct Edit {
  const char* from;
  const char* to;
  const char* message;
};

void refused_all(const std::vector<Edit>& edits) {
  for (const Edit& edit : edits) {
    CAPTURE(edit.to);
    CHECK_THROWS_WITH_AS(read_text(edited_report(edit.from, edit.to)), doctest::Contains(edit.message),
                         InputError);
  }
}

void write(const std::string& path, const std::string& text) {
  std::ofstream(path, std::ios::binary) << text;
}

// The process-wide limit set for one test, restored after it.
struct InputLimit {
  explicit InputLimit(std::size_t bytes) { gpuprof::set_max_input_bytes(bytes); }
  ~InputLimit() { gpuprof::set_max_input_bytes(0); }
};

}  // namespace

TEST_CASE("readers: an unedited report reads back (the edits below are what the readers refuse)") {
  const Report report = read_text(edited_report("\"version\": 2", "\"version\": 2"));
  CHECK(report.nodes.size() == gpuprof_test::synthetic_training_report().nodes.size());
  CHECK_FALSE(report.kernels.empty());
  CHECK_FALSE(report.memory_timeline.allocations.empty());
}

TEST_CASE("readers: unbounded input stops at the size limit, /dev/zero included") {
  gpuprof_test::TemporaryDirectory dir;
  const InputLimit limit(1 << 20);
  CHECK_THROWS_WITH_AS(gpuprof::detail::parse_json_file("/dev/zero"),
                       doctest::Contains("/dev/zero: larger than the input limit of 1048576 bytes"),
                       InputError);
  // A JSON array of numbers past the limit (the probe's was 200 MB).
  std::string numbers = "[";
  while (numbers.size() < (3 << 19)) numbers += "1,";
  numbers += "1]";
  write(dir.file("numbers.json"), numbers);
  CHECK_THROWS_WITH_AS(gpuprof::read_measured_run(dir.file("numbers.json")),
                       doctest::Contains("larger than the input limit"), InputError);
  // Within the byte limit, a document is still refused past one value per 8 bytes of it.
  const InputLimit larger(4 << 20);
  CHECK(gpuprof::max_input_values(4 << 20) == (1 << 19));
  CHECK_THROWS_WITH_AS(gpuprof::read_measured_run(dir.file("numbers.json")),
                       doctest::Contains("more JSON values than the input limit allows"), InputError);
}

TEST_CASE("readers: the limit comes from set_max_input_bytes, else GPUPROF_MAX_INPUT_MB, else 64 MiB") {
  const char* saved = std::getenv("GPUPROF_MAX_INPUT_MB");
  const std::string restore = saved ? saved : "";
  ::unsetenv("GPUPROF_MAX_INPUT_MB");
  CHECK(gpuprof::max_input_bytes() == gpuprof::default_max_input_bytes);
  ::setenv("GPUPROF_MAX_INPUT_MB", "3", 1);
  CHECK(gpuprof::max_input_bytes() == (3u << 20));
  {
    const InputLimit limit(12345);
    CHECK(gpuprof::max_input_bytes() == 12345);
  }
  for (const char* bad : {"0", "-1", "2MB", "99999999999999999999"}) {
    ::setenv("GPUPROF_MAX_INPUT_MB", bad, 1);
    CHECK_THROWS_WITH_AS(gpuprof::max_input_bytes(), doctest::Contains("GPUPROF_MAX_INPUT_MB"), InputError);
  }
  if (saved) ::setenv("GPUPROF_MAX_INPUT_MB", restore.c_str(), 1);
  else ::unsetenv("GPUPROF_MAX_INPUT_MB");
}

TEST_CASE("readers: a directory or a missing file says why, with the system's reason") {
  gpuprof_test::TemporaryDirectory dir;
  CHECK_THROWS_WITH_AS(gpuprof::read_report_json(dir.path().string()),
                       doctest::Contains(("cannot read " + dir.path().string() + ": Is a directory").c_str()),
                       InputError);
  CHECK_THROWS_WITH_AS(
      gpuprof::read_report_json(dir.file("missing.json")),
      doctest::Contains(("cannot open " + dir.file("missing.json") + ": No such file or directory").c_str()),
      InputError);
}

TEST_CASE("readers: duplicate keys are an error, wherever they are") {
  CHECK_THROWS_WITH_AS(gpuprof::detail::parse_json(R"({"a": 1, "b": 2, "a": 3})"),
                       doctest::Contains("duplicate key \"a\""), InputError);
  CHECK_THROWS_WITH_AS(read_text(edited_report("\"schema\": \"gpuprof.report\",",
                                               "\"schema\": \"gpuprof.report\", \"version\": 2,")),
                       doctest::Contains("duplicate key \"version\""), InputError);
  CHECK(gpuprof::detail::parse_json(R"([{"a": 1}, {"a": 2}])").size() == 2);  // one key per object is fine
}

TEST_CASE("readers: report version, counts, indices, depths and ranks checked against their context") {
  refused_all({
      {"\"version\": 2", "\"version\": 0", "version 0 is not one this reader knows"},
      {"\"version\": 2", "\"version\": -5", "version -5 is not one this reader knows"},
      {"\"version\": 2", "\"version\": 3", "version 3 is not one this reader knows"},
      {"\"recorded_instances\": ", "\"recorded_instances\": 0, \"x\": ",
       "recorded_instances is fewer than the instances"},
      {"\"count\": 3", "\"count\": -5", "-5 is not an integer from 0"},
      {"\"depth\": 1", "\"depth\": 2000000000", "has depth 2000000000; its place in the tree gives 1"},
      {"\"depth\": 0", "\"depth\": 2000000000000", "is not an integer from -2147483648"},
      {"\"parent\": 0", "\"parent\": 99", "names parent 99, not an earlier node"},
      {"\"parent\": -1", "\"parent\": -2", "names parent -2"},
      {"\"node\": 0", "\"node\": 99", "names node 99 of"},
      {"\"node\": 0", "\"node\": -1", "names node -1 of"},
      {"\"rank\": null", "\"rank\": 4294967296", "4294967296 is not an integer from -2147483648"},
      {"\"rank\": null", "\"rank\": -3", "rank -3 is negative"},
      {"\"world_size\": null", "\"world_size\": 0", "world_size 0"},
      {"\"rank\": null, \"world_size\": null", "\"rank\": 5, \"world_size\": 2",
       "rank 5 is outside a world of 2"},
      {"\"scope_node\": -1", "\"scope_node\": 1000", "names scope node 1000"},
      {"\"grid\": [", "\"grid\": [4294967296, ", "4294967296 is not an integer from 0 to 4294967295"},
  });
}

TEST_CASE("readers: time stamps and sizes that 64-bit arithmetic cannot hold are refused") {
  refused_all({
      // Kernel start/end whose difference overflows (kernel_record.hpp's duration_ns).
      {"\"start_ns\": ", "\"start_ns\": -9223372036854775807, \"x\": ",
       "start_ns -9223372036854775807 is outside"},
      {"\"end_ns\": ", "\"end_ns\": 9223372036854775807, \"x\": ", "end_ns 9223372036854775807 is outside"},
      {"\"end_ns\": ", "\"end_ns\": 0, \"x\": ", "ends (0) before it begins"},
      {"\"end_ns\": ", "\"end_ns\": 4000000000000000, \"x\": ", "lasts longer than an hour"},
      // A step's host begin/end (comm_overlap.hpp's step_ms).
      {"\"host_begin_ns\": ", "\"host_begin_ns\": -9223372036854775807, \"x\": ", "host_begin_ns"},
      {"\"host_end_ns\": ", "\"host_end_ns\": 1, \"x\": ", "ends (1) before it begins"},
      // Memory timeline times and sizes (report/chrome_trace.hpp's origin and running sum).
      {"\"alloc_ns\": ", "\"alloc_ns\": -9223372036854775807, \"x\": ",
       "alloc_ns -9223372036854775807 is outside"},
      {"\"bytes\": 419430400", "\"bytes\": -1", "bytes -1 is outside"},
      {"\"in_use\": [", "\"in_use\": [[-9223372036854775807, 0], ", "is outside 0 .. 2^62"},
  });
}

TEST_CASE("readers: the Chrome trace adds up allocations as large as a report may hold without overflow") {
  gpuprof_test::TemporaryDirectory dir;
  Report report = gpuprof_test::synthetic_training_report();
  for (gpuprof::TimelineAllocation& allocation : report.memory_timeline.allocations)
    allocation.bytes = gpuprof::detail::max_time_ns;  // 2^62 each: their int64 sum would overflow
  gpuprof::write_json(report, dir.file("huge.json"));
  const Report back = gpuprof::read_report_json(dir.file("huge.json"));
  gpuprof::write_chrome_trace(back, dir.file("trace.json"));  // UBSan (asan preset) checks the arithmetic
  std::ifstream trace(dir.file("trace.json"));
  const std::string text((std::istreambuf_iterator<char>(trace)), std::istreambuf_iterator<char>());
  CHECK(text.find("Allocated (kernel capture)") != std::string::npos);
}

TEST_CASE("compare: two kinds of file are refused, naming both") {
  gpuprof_test::TemporaryDirectory dir;
  gpuprof::write_json(gpuprof_test::synthetic_training_report(), dir.file("report.json"));
  gpuprof::BenchResult result;
  result.host_ms = {1.0, 1.1, 0.9, 1.0, 1.2};
  result.host = gpuprof::summarize(result.host_ms);
  write(dir.file("bench.json"), gpuprof::to_bench_json({{"step", result}}, {}));
  const gpuprof::MeasuredRun bench = gpuprof::read_measured_run(dir.file("bench.json"));
  const gpuprof::MeasuredRun report = gpuprof::read_measured_run(dir.file("report.json"));
  CHECK(bench.kind == "gpuprof.bench");
  CHECK_THROWS_WITH_AS(
      gpuprof::compare_runs(bench, report),
      doctest::Contains(("cannot compare two kinds of file: " + dir.file("bench.json") +
                         " is a gpuprof.bench file, " + dir.file("report.json") + " is a gpuprof.report file")
                            .c_str()),
      InputError);
  CHECK_NOTHROW(gpuprof::compare_runs(report, report));
}

TEST_CASE("merge: the same report given twice as two ranks is refused") {
  Report report = gpuprof_test::synthetic_training_report();
  report.rank = {};
  CHECK_THROWS_WITH_AS(gpuprof::merge({report, report}),
                       doctest::Contains("reports 1 and 2 are the same run"), InputError);
}

TEST_CASE("output: control characters in names are escaped on the terminal, HTML in markdown") {
  const std::string hostile = "evil\x1b]0;owned\x07\x1b[2J<img src=x onerror=alert(1)>";
  Report report = gpuprof_test::synthetic_training_report();
  report.nodes[0].path = report.nodes[0].name = hostile;
  report.environment.host_name = hostile;
  report.rank = {};
  Report other = report;
  for (gpuprof::ScopeInstance& instance : other.instances) instance.host_end_ns += 1;
  const std::string raw_escape = "\x1b";
  const gpuprof::Comparison comparison = gpuprof::compare(report, other);
  const gpuprof::MergedReport merged = gpuprof::merge({report, other});
  for (const std::string& text : {gpuprof::to_table(comparison), gpuprof::to_table(merged)}) {
    CHECK(text.find(raw_escape) == std::string::npos);
    CHECK(text.find('\x07') == std::string::npos);
    CHECK(text.find("evil\\x1b]0;owned\\x07\\x1b[2J") != std::string::npos);
  }
  for (const std::string& text :
       {gpuprof::to_markdown(comparison), gpuprof::to_markdown(merged), gpuprof::to_markdown(report)}) {
    CHECK(text.find("<img") == std::string::npos);
    CHECK(text.find("&lt;img src=x onerror=alert(1)&gt;") != std::string::npos);
    CHECK(text.find(raw_escape) == std::string::npos);
  }
}
