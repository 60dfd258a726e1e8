// Tests of the report writers: a Report built by hand is written as a table,
// markdown, CSV, JSON and Chrome trace, read back (tests/support/json_parse.hpp
// and the CSV reader below) and checked field by field; plus the JSON writer's
// escaping and the report writers' failure behaviour (the atomic file writer
// itself: test_atomic_file.cpp).
#include <doctest/doctest.h>

#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <limits>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include <gpuprof/atomic_file.hpp>
#include <gpuprof/json_writer.hpp>
#include <gpuprof/report.hpp>
#include <gpuprof/report/read_json.hpp>

#include "support/json_parse.hpp"
#include "support/temporary_directory.hpp"

namespace fs = std::filesystem;
using doctest::Approx;
using gpuprof_test::Json;
using gpuprof_test::TemporaryDirectory;

namespace {

// RFC 4180 reader: quoted fields may hold commas, doubled quotes and line breaks.
std::vector<std::vector<std::string>> parse_csv(const std::string& text) {
  std::vector<std::vector<std::string>> rows;
  std::vector<std::string> row;
  std::string field;
  bool quoted = false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (quoted) {
      if (c == '"' && i + 1 < text.size() && text[i + 1] == '"') {
        field += '"';
        ++i;
      } else if (c == '"') {
        quoted = false;
      } else {
        field += c;
      }
    } else if (c == '"') {
      quoted = true;
    } else if (c == ',') {
      row.push_back(std::move(field));
      field.clear();
    } else if (c == '\r' && i + 1 < text.size() && text[i + 1] == '\n') {
      row.push_back(std::move(field));
      field.clear();
      rows.push_back(std::move(row));
      row.clear();
      ++i;
    } else {
      field += c;
    }
  }
  REQUIRE_FALSE(quoted);
  REQUIRE(field.empty());  // the last row ends with CRLF
  return rows;
}

constexpr std::int64_t ms_ns = 1'000'000;
// Large, like real steady_clock readings, to catch lost integer precision.
constexpr std::int64_t t0 = 1'700'000'000'123'456'789;

gpuprof::ScopeNode make_node(const std::string& path, int parent, int depth, std::uint64_t count) {
  gpuprof::ScopeNode node;
  node.path = path;
  node.name = path.substr(path.rfind('/') + 1);
  node.parent = parent;
  node.depth = depth;
  node.count = count;
  return node;
}

gpuprof::ScopeInstance make_instance(std::uint64_t id, int node, std::uint32_t thread, std::int64_t begin_ms,
                                     std::int64_t end_ms, double gpu_ms) {
  gpuprof::ScopeInstance instance;
  instance.id = id;
  instance.node = node;
  instance.thread = thread;
  instance.host_begin_ns = t0 + begin_ms * ms_ns;
  instance.host_end_ns = t0 + end_ms * ms_ns;
  instance.gpu_ms = gpu_ms;
  return instance;
}

// step (GPU-timed, tokens, peak memory) > forward (GPU-timed, FLOPs and bytes)
// > attention (host clock only) on thread 0; loader on thread 1; a GEMM
// launched inside forward, a copy with no known launch time, and a kernel
// outside any scope.
gpuprof::Report sample_report() {
  gpuprof::Report report;
  report.timing_source = gpuprof::TimingSource::cuda_events;
  report.device_name = "NVIDIA H100 80GB HBM3";

  auto step = make_node("step", -1, 0, 2);
  step.host_ms = gpuprof::summarize({10, 12});
  step.gpu_ms = gpuprof::summarize({9, 11});
  step.work.tokens = 4096;
  step.peak_device_bytes = std::int64_t{3} << 29;  // 1.5 GiB
  auto forward = make_node("step/forward", 0, 1, 2);
  forward.host_ms = gpuprof::summarize({6, 7});
  forward.gpu_ms = gpuprof::summarize({6, 6.5});
  forward.work.flops = 1e12;
  forward.work.bytes = 2e9;
  auto attention = make_node("step/forward/attention", 1, 2, 2);
  attention.host_ms = gpuprof::summarize({2, 3});
  auto loader = make_node("loader", -1, 0, 1);
  loader.host_ms = gpuprof::summarize({1.5});
  report.nodes = {step, forward, attention, loader};

  report.instances = {make_instance(1, 0, 0, 0, 10, 9),    make_instance(2, 1, 0, 1, 7, 6),
                      make_instance(3, 2, 0, 2, 4, -1),    make_instance(4, 0, 0, 20, 32, 11),
                      make_instance(5, 1, 0, 21, 28, 6.5), make_instance(6, 2, 0, 22, 25, -1),
                      make_instance(7, 3, 1, 5, 7, -1)};

  gpuprof::KernelRecord gemm;
  gemm.name = "void cutlass::Kernel<cutlass_80_tensorop_s1688gemm>(Params)";
  gemm.base_name = "cutlass::Kernel";
  gemm.category = "gemm";
  gemm.start_ns = t0 + 3 * ms_ns;
  gemm.end_ns = t0 + 5 * ms_ns + 500;
  gemm.launch_ns = t0 + 1 * ms_ns + 250'000;
  gemm.stream = 7;
  gemm.correlation_id = 42;
  gemm.scope_instance = 2;
  gemm.grid[0] = 128;
  gemm.grid[1] = 2;
  gemm.grid[2] = 1;
  gemm.block[0] = 256;
  gemm.block[1] = 1;
  gemm.block[2] = 1;
  gemm.registers_per_thread = 168;
  gemm.shared_bytes = 49152;

  gpuprof::KernelRecord copy;
  copy.kind = gpuprof::ActivityKind::memcpy;
  copy.name = copy.base_name = "memcpy HtoD";
  copy.category = "memory";
  copy.start_ns = t0 + 21 * ms_ns;
  copy.end_ns = t0 + 22 * ms_ns;
  copy.scope_instance = 4;
  copy.bytes = 1 << 20;

  gpuprof::KernelRecord stray;
  stray.name = stray.base_name = "stray_kernel";
  stray.category = "other";
  stray.start_ns = t0 + 40 * ms_ns;
  stray.end_ns = t0 + 41 * ms_ns;
  stray.launch_ns = t0 + 39 * ms_ns;
  stray.device = 1;
  stray.stream = 3;

  report.kernels = {gemm, copy, stray};
  report.dropped_kernel_records = 5;
  return report;
}

void check_summary_json(const Json& json, const gpuprof::Summary& s) {
  CHECK(json["n"].as_int64() == static_cast<std::int64_t>(s.n));
  CHECK(json["mean"].as_number() == s.mean);
  CHECK(json["stddev"].as_number() == s.stddev);
  CHECK(json["min"].as_number() == s.min);
  CHECK(json["max"].as_number() == s.max);
  CHECK(json["median"].as_number() == s.median);
  CHECK(json["q1"].as_number() == s.q1);
  CHECK(json["q3"].as_number() == s.q3);
  CHECK(json["iqr"].as_number() == s.iqr);
  CHECK(json["p10"].as_number() == s.percentile(10));
  CHECK(json["p90"].as_number() == s.percentile(90));
  CHECK(json["cv"].as_number() == s.cv);
  CHECK(json["ci95_low"].as_number() == s.ci95_low);
  CHECK(json["ci95_high"].as_number() == s.ci95_high);
  CHECK(json["outliers"].as_int64() == static_cast<std::int64_t>(s.outliers));
  CHECK(json["unstable"].as_bool() == s.unstable);
  CHECK(json["unstable_reason"].as_string() == s.unstable_reason);
  CHECK(json["note"].as_string() == s.note);
  CHECK(json["discarded"].as_int64() == static_cast<std::int64_t>(s.discarded));
  REQUIRE(json["samples_ms"].size() == s.sorted.size());
  for (std::size_t i = 0; i < s.sorted.size(); ++i) CHECK(json["samples_ms"][i].as_number() == s.sorted[i]);
}

// Trace events by phase, for lookups.
std::vector<const Json*> events_with_phase(const Json& trace, const std::string& phase) {
  std::vector<const Json*> found;
  for (const Json& event : trace["traceEvents"].elements())
    if (event["ph"].as_string() == phase) found.push_back(&event);
  return found;
}

}  // namespace

TEST_CASE("JSON report reads back field by field") {
  const gpuprof::Report report = sample_report();
  TemporaryDirectory dir;
  gpuprof::write_json(report, dir.file("report.json"));
  const Json doc = gpuprof_test::parse_json_file(dir.file("report.json"));

  CHECK(doc["schema"].as_string() == "gpuprof.report");
  CHECK(doc["version"].as_int64() == 2);
  CHECK(doc["timing_source"].as_string() == "cuda_events");
  CHECK(doc["timing_note"].as_string().empty());
  CHECK(doc["device"].as_string() == "NVIDIA H100 80GB HBM3");
  CHECK(doc["dropped_kernel_records"].as_int64() == 5);

  REQUIRE(doc["nodes"].size() == report.nodes.size());
  for (std::size_t i = 0; i < report.nodes.size(); ++i) {
    const gpuprof::ScopeNode& node = report.nodes[i];
    const Json& json = doc["nodes"][i];
    CAPTURE(node.path);
    CHECK(json["index"].as_int64() == static_cast<std::int64_t>(i));
    CHECK(json["path"].as_string() == node.path);
    CHECK(json["name"].as_string() == node.name);
    CHECK(json["parent"].as_int64() == node.parent);
    CHECK(json["depth"].as_int64() == node.depth);
    CHECK(json["count"].as_int64() == static_cast<std::int64_t>(node.count));
    CHECK(json["timing"].as_string() == (node.gpu_timed() ? "cuda_events" : "host_clock"));
    CHECK(json["total_ms"].as_number() == node.total_ms());
    check_summary_json(json["host_ms"], node.host_ms);
    if (node.gpu_timed()) check_summary_json(json["gpu_ms"], node.gpu_ms);
    else CHECK(json["gpu_ms"].is_null());
    CHECK(json["work"]["flops"].as_number() == node.work.flops);
    CHECK(json["work"]["bytes"].as_number() == node.work.bytes);
    CHECK(json["work"]["tokens"].as_number() == node.work.tokens);
  }
  const Json& step = doc["nodes"][0];
  const Json& forward = doc["nodes"][1];
  const Json& attention = doc["nodes"][2];
  CHECK(step["percent_of_parent"].is_null());
  CHECK(forward["percent_of_parent"].as_number() == Approx(62.5));      // 2 x 6.25 of 2 x 10
  CHECK(attention["percent_of_parent"].as_number() == Approx(40.0));    // 2 x 2.5 of 2 x 6.25
  CHECK(forward["rates"]["tflop_per_s"].as_number() == Approx(160.0));  // 1e12 / 6.25 ms
  CHECK(forward["rates"]["gb_per_s"].as_number() == Approx(320.0));
  CHECK(forward["rates"]["flops_per_byte"].as_number() == Approx(500.0));
  CHECK(forward["rates"]["tokens_per_s"].is_null());
  CHECK(step["rates"]["tokens_per_s"].as_number() == Approx(409600.0));  // 4096 / 10 ms
  CHECK(step["peak_device_bytes"].as_int64() == (std::int64_t{3} << 29));
  CHECK(forward["peak_device_bytes"].is_null());

  REQUIRE(doc["instances"].size() == report.instances.size());
  for (std::size_t i = 0; i < report.instances.size(); ++i) {
    const gpuprof::ScopeInstance& instance = report.instances[i];
    const Json& json = doc["instances"][i];
    CHECK(json["id"].as_int64() == static_cast<std::int64_t>(instance.id));
    CHECK(json["node"].as_int64() == instance.node);
    CHECK(json["thread"].as_int64() == instance.thread);
    CHECK(json["host_begin_ns"].as_int64() == instance.host_begin_ns);
    CHECK(json["host_end_ns"].as_int64() == instance.host_end_ns);
    if (instance.gpu_ms >= 0) CHECK(json["gpu_ms"].as_number() == instance.gpu_ms);
    else CHECK(json["gpu_ms"].is_null());
  }

  REQUIRE(doc["kernels"].size() == report.kernels.size());
  const gpuprof::KernelRecord& gemm = report.kernels[0];
  const Json& kernel = doc["kernels"][0];
  CHECK(kernel["kind"].as_string() == "kernel");
  CHECK(kernel["name"].as_string() == gemm.name);
  CHECK(kernel["base_name"].as_string() == gemm.base_name);
  CHECK(kernel["category"].as_string() == "gemm");
  CHECK(kernel["start_ns"].as_int64() == gemm.start_ns);
  CHECK(kernel["end_ns"].as_int64() == gemm.end_ns);
  CHECK(kernel["duration_ns"].as_int64() == gemm.duration_ns());
  CHECK(kernel["launch_ns"].as_int64() == gemm.launch_ns);
  CHECK(kernel["device"].as_int64() == 0);
  CHECK(kernel["stream"].as_int64() == 7);
  CHECK(kernel["correlation_id"].as_int64() == 42);
  CHECK(kernel["scope_instance"].as_int64() == 2);
  CHECK(kernel["scope_node"].as_int64() == -1);  // eager: its scope is the instance's
  CHECK(kernel["graph_node_id"].as_int64() == 0);
  CHECK(kernel["graph_launch"].as_int64() == 0);
  for (std::size_t axis = 0; axis < 3; ++axis) {
    CHECK(kernel["grid"][axis].as_int64() == gemm.grid[axis]);
    CHECK(kernel["block"][axis].as_int64() == gemm.block[axis]);
  }
  CHECK(kernel["registers_per_thread"].as_int64() == 168);
  CHECK(kernel["shared_bytes"].as_int64() == 49152);
  CHECK(doc["kernels"][1]["kind"].as_string() == "memcpy");
  CHECK(doc["kernels"][1]["bytes"].as_int64() == (1 << 20));
}

TEST_CASE("CSV report has stable columns, one row per node, RFC 4180 quoting") {
  gpuprof::Report report = sample_report();
  report.nodes[3].name = "load \"shard\", part\n2";  // needs quoting
  TemporaryDirectory dir;
  gpuprof::write_csv(report, dir.file("report.csv"));
  const auto rows = parse_csv(gpuprof_test::read_text_file(dir.file("report.csv")));

  REQUIRE(rows.size() == report.nodes.size() + 1);
  const std::vector<std::string> expected_columns = {"path",
                                                     "name",
                                                     "depth",
                                                     "parent_path",
                                                     "count",
                                                     "timing",
                                                     "total_ms",
                                                     "mean_ms",
                                                     "stddev_ms",
                                                     "median_ms",
                                                     "q1_ms",
                                                     "q3_ms",
                                                     "p10_ms",
                                                     "p90_ms",
                                                     "min_ms",
                                                     "max_ms",
                                                     "ci95_low_ms",
                                                     "ci95_high_ms",
                                                     "cv",
                                                     "outliers",
                                                     "unstable",
                                                     "unstable_reason",
                                                     "host_mean_ms",
                                                     "gpu_mean_ms",
                                                     "percent_of_parent",
                                                     "flops",
                                                     "bytes",
                                                     "tokens",
                                                     "tflop_per_s",
                                                     "gb_per_s",
                                                     "tokens_per_s",
                                                     "flops_per_byte",
                                                     "peak_device_bytes",
                                                     "discarded",
                                                     "dram_bytes",
                                                     "measured_flops",
                                                     "measured_flops_per_byte",
                                                     "measured_flop_per_s",
                                                     "percent_of_roof",
                                                     "bound",
                                                     "l2_hit_pct",
                                                     "occupancy_pct",
                                                     "declared_flops_difference_pct",
                                                     "declared_bytes_difference_pct",
                                                     "peak_allocated_bytes",
                                                     "reserved_bytes"};
  CHECK(rows[0] == expected_columns);
  for (const auto& row : rows) CHECK(row.size() == expected_columns.size());

  const auto cell = [&](std::size_t row, const std::string& column) {
    const auto at = std::find(rows[0].begin(), rows[0].end(), column) - rows[0].begin();
    return rows.at(row).at(static_cast<std::size_t>(at));
  };
  const auto number = [&](std::size_t row, const std::string& column) {
    return std::stod(cell(row, column));
  };
  // Row 2 is step/forward.
  CHECK(cell(2, "path") == "step/forward");
  CHECK(cell(2, "parent_path") == "step");
  CHECK(cell(2, "depth") == "1");
  CHECK(cell(2, "count") == "2");
  CHECK(cell(2, "timing") == "cuda_events");
  CHECK(number(2, "mean_ms") == report.nodes[1].gpu_ms.mean);
  CHECK(number(2, "host_mean_ms") == report.nodes[1].host_ms.mean);
  CHECK(number(2, "total_ms") == report.nodes[1].total_ms());
  CHECK(number(2, "ci95_high_ms") == report.nodes[1].gpu_ms.ci95_high);
  CHECK(number(2, "percent_of_parent") == Approx(62.5));
  CHECK(number(2, "tflop_per_s") == Approx(160.0));
  CHECK(cell(2, "tokens") == "");
  CHECK(cell(2, "peak_device_bytes") == "");
  CHECK(cell(1, "peak_device_bytes") == std::to_string(std::int64_t{3} << 29));
  CHECK(cell(1, "percent_of_parent") == "");
  // attention is host-timed: its GPU column is empty and its times are host times.
  CHECK(cell(3, "timing") == "host_clock");
  CHECK(cell(3, "gpu_mean_ms") == "");
  CHECK(number(3, "median_ms") == 2.5);
  CHECK(cell(3, "unstable") == "true");
  CHECK(cell(3, "unstable_reason") == report.nodes[2].host_ms.unstable_reason);
  CHECK(cell(4, "name") == report.nodes[3].name);
  // loader ran once: the verdict says so.
  CHECK(cell(4, "unstable") == "true");
  CHECK(cell(4, "unstable_reason") == "fewer than 2 samples");
  CHECK(cell(4, "discarded") == "0");
  CHECK(cell(1, "peak_allocated_bytes") == "");  // no TorchMemoryWatch: unknown, not 0
  CHECK(cell(1, "reserved_bytes") == "");
}

TEST_CASE("Chrome trace has host and GPU tracks, kernel args and launch flows") {
  const gpuprof::Report report = sample_report();
  TemporaryDirectory dir;
  gpuprof::write_chrome_trace(report, dir.file("trace.json"));
  const Json trace = gpuprof_test::parse_json_file(dir.file("trace.json"));
  const std::int64_t origin = t0;  // the first scope begins at t0
  CHECK(trace["otherData"]["origin_ns"].as_int64() == origin);
  CHECK(trace["otherData"]["dropped_kernel_records"].as_int64() == 5);

  // Track names: (pid, tid) -> name, and pid -> process name.
  std::map<std::pair<std::int64_t, std::int64_t>, std::string> thread_names;
  std::map<std::int64_t, std::string> process_names;
  for (const Json* event : events_with_phase(trace, "M")) {
    const std::int64_t pid = (*event)["pid"].as_int64();
    if ((*event)["name"].as_string() == "thread_name")
      thread_names[{pid, (*event)["tid"].as_int64()}] = (*event)["args"]["name"].as_string();
    if ((*event)["name"].as_string() == "process_name")
      process_names[pid] = (*event)["args"]["name"].as_string();
  }
  CHECK(process_names.at(1) == "Host");
  CHECK(process_names.at(1000) == "GPU 0 (NVIDIA H100 80GB HBM3)");
  CHECK(process_names.at(1001) == "GPU 1 (NVIDIA H100 80GB HBM3)");
  CHECK(thread_names.at({1, 0}) == "host thread 0");
  CHECK(thread_names.at({1, 1}) == "host thread 1");
  CHECK(thread_names.at({1000, 7}) == "stream 7");
  CHECK(thread_names.at({1000, 0}) == "stream 0");
  CHECK(thread_names.at({1001, 3}) == "stream 3");

  const auto slices = events_with_phase(trace, "X");
  REQUIRE(slices.size() == report.instances.size() + report.kernels.size());
  std::size_t scopes_seen = 0;
  for (const Json* slice : slices) {
    const Json& event = *slice;
    if (event["cat"].as_string() != "scope") continue;
    const auto& instance = report.instances.at(scopes_seen++);
    const auto& node = report.nodes.at(static_cast<std::size_t>(instance.node));
    CHECK(event["name"].as_string() == node.name);
    CHECK(event["pid"].as_int64() == 1);
    CHECK(event["tid"].as_int64() == instance.thread);
    CHECK(event["ts"].as_number() == Approx(static_cast<double>(instance.host_begin_ns - origin) / 1e3));
    CHECK(event["dur"].as_number() ==
          Approx(static_cast<double>(instance.host_end_ns - instance.host_begin_ns) / 1e3));
    CHECK(event["args"]["path"].as_string() == node.path);
    CHECK(event["args"]["instance"].as_int64() == static_cast<std::int64_t>(instance.id));
    CHECK(event["args"].contains("gpu_ms") == (instance.gpu_ms >= 0));
  }
  CHECK(scopes_seen == report.instances.size());

  const Json* gemm = nullptr;
  const Json* copy = nullptr;
  for (const Json* slice : slices) {
    const Json& slice_args = (*slice)["args"];
    if (!slice_args.contains("category")) continue;  // a scope
    if (slice_args["category"].as_string() == "gemm") gemm = slice;
    if (slice_args["category"].as_string() == "memory") copy = slice;
  }
  REQUIRE(gemm != nullptr);
  REQUIRE(copy != nullptr);
  CHECK((*gemm)["name"].as_string() == "cutlass::Kernel");
  CHECK((*gemm)["pid"].as_int64() == 1000);
  CHECK((*gemm)["tid"].as_int64() == 7);
  CHECK((*gemm)["ts"].as_number() == Approx(3000.0));
  CHECK((*gemm)["dur"].as_number() == Approx(2000.5));
  const Json& args = (*gemm)["args"];
  CHECK(args["name"].as_string() == report.kernels[0].name);
  CHECK(args["category"].as_string() == "gemm");
  CHECK(args["scope"].as_string() == "step/forward");
  CHECK(args["grid"][0].as_int64() == 128);
  CHECK(args["grid"][1].as_int64() == 2);
  CHECK(args["block"][0].as_int64() == 256);
  CHECK(args["registers_per_thread"].as_int64() == 168);
  CHECK(args["shared_bytes"].as_int64() == 49152);
  CHECK((*copy)["args"]["bytes"].as_int64() == (1 << 20));
  CHECK((*copy)["args"]["scope"].as_string() == "step");

  // One flow: the copy has no launch time and the stray kernel no scope.
  const auto starts = events_with_phase(trace, "s");
  const auto finishes = events_with_phase(trace, "f");
  REQUIRE(starts.size() == 1);
  REQUIRE(finishes.size() == 1);
  const Json& start = *starts[0];
  const Json& finish = *finishes[0];
  CHECK(start["id"].as_int64() == finish["id"].as_int64());
  CHECK(start["pid"].as_int64() == 1);
  CHECK(start["tid"].as_int64() == 0);
  CHECK(start["ts"].as_number() == Approx(1250.0));  // inside forward, [1000, 7000] us
  CHECK(finish["pid"].as_int64() == 1000);
  CHECK(finish["tid"].as_int64() == 7);
  CHECK(finish["ts"].as_number() == (*gemm)["ts"].as_number());
  CHECK(finish["bp"].as_string() == "e");
}

TEST_CASE("graph work names the scope it was captured in, in the JSON report and the trace") {
  gpuprof::Report report = sample_report();
  gpuprof::KernelRecord replayed = report.kernels[0];
  replayed.scope_instance = 0;
  replayed.scope_node = 2;  // step/forward/attention
  replayed.graph_node_id = 77;
  replayed.graph_launch = 99;
  replayed.correlation_id = 99;
  replayed.start_ns += 10 * ms_ns;
  replayed.end_ns += 10 * ms_ns;
  report.kernels.push_back(replayed);
  TemporaryDirectory dir;
  gpuprof::write_json(report, dir.file("report.json"));
  const Json doc = gpuprof_test::parse_json_file(dir.file("report.json"));
  const Json& kernel = doc["kernels"][3];
  CHECK(kernel["scope_instance"].as_int64() == 0);
  CHECK(kernel["scope_node"].as_int64() == 2);
  CHECK(kernel["graph_node_id"].as_int64() == 77);
  CHECK(kernel["graph_launch"].as_int64() == 99);

  gpuprof::write_chrome_trace(report, dir.file("trace.json"));
  const Json trace = gpuprof_test::parse_json_file(dir.file("trace.json"));
  std::size_t graph_slices = 0;
  for (const Json* slice : events_with_phase(trace, "X")) {
    const Json& args = (*slice)["args"];
    if (!args.contains("graph_node_id")) continue;
    ++graph_slices;
    CHECK(args["scope"].as_string() == "step/forward/attention");
    CHECK(args["graph_node_id"].as_int64() == 77);
    CHECK(args["graph_launch"].as_int64() == 99);
  }
  CHECK(graph_slices == 1);
  CHECK(events_with_phase(trace, "s").size() == 1);  // no launch flow: no instance launched it
}

TEST_CASE("terminal table lists the tree with the right columns") {
  const gpuprof::Report report = sample_report();
  std::ostringstream out;
  gpuprof::print_table(report, out);
  const std::string text = out.str();
  CAPTURE(text);
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  REQUIRE(lines.size() >= 6);
  CHECK(lines[0] == "gpuprof report: timing by CUDA events; device: NVIDIA H100 80GB HBM3");
  for (const char* column : {"Scope", "Count", "Total ms", "Mean ms", "Std ms", "Median ms", "P90 ms",
                             "Min ms", "Max ms", "% parent", "TFLOP/s", "GB/s", "tokens/s", "Peak MiB"})
    CHECK(lines[1].find(column) != std::string::npos);
  CHECK(lines[2].rfind("step ", 0) == 0);
  CHECK(lines[3].rfind("  forward ", 0) == 0);
  CHECK(lines[4].rfind("    attention ", 0) == 0);
  CHECK(lines[5].rfind("loader ", 0) == 0);
  CHECK(lines[3].find("62.5") != std::string::npos);
  CHECK(lines[3].find("160.0") != std::string::npos);   // TFLOP/s
  CHECK(lines[2].find("1536.0") != std::string::npos);  // Peak MiB
  CHECK(lines[2].find("20.00") != std::string::npos);   // total ms of step
  CHECK(text.find("unstable: step/forward/attention: cv ") != std::string::npos);
  // Scopes that ran once share one note instead of a line each.
  CHECK(text.find("unstable: loader") == std::string::npos);
  CHECK(
      text.find("note: 1 of 4 scope(s) finished fewer than 2 times: no spread can be estimated for them\n") !=
      std::string::npos);
}

TEST_CASE(
    "a one-shot program's table gets one note for its single samples, marks open scopes, counts warm-up") {
  gpuprof::Report report;
  for (int i = 0; i < 30; ++i) {
    gpuprof::ScopeNode node;
    node.name = node.path = "phase" + std::to_string(i);
    node.count = 1;
    node.host_ms = gpuprof::summarize({1.0 + i});
    report.nodes.push_back(node);
  }
  gpuprof::ScopeNode main_scope;
  main_scope.name = main_scope.path = "main";
  main_scope.open_instances = 1;
  main_scope.host_ms = gpuprof::summarize({});
  report.nodes.push_back(main_scope);
  report.warmup_instances_left_out = 6;
  std::ostringstream out;
  gpuprof::print_table(report, out);
  const std::string text = out.str();
  CAPTURE(text);
  CHECK(text.find("unstable:") == std::string::npos);
  CHECK(text.find("\nmain (open) ") != std::string::npos);
  CHECK(text.find("note: 1 scope(s) marked (open) were still running when the report was taken") !=
        std::string::npos);
  CHECK(text.find("note: 31 of 31 scope(s) finished fewer than 2 times") != std::string::npos);
  CHECK(text.find("note: 6 scope instance(s) from bench() cold calls and warm-up are left out") !=
        std::string::npos);
  const std::string markdown = gpuprof::to_markdown(report);
  CHECK(markdown.find("| main (open) |") != std::string::npos);
  CHECK(markdown.find("Notes:\n\n- 1 scope(s) marked (open)") != std::string::npos);

  TemporaryDirectory dir;
  gpuprof::write_json(report, dir.file("report.json"));
  const Json doc = gpuprof_test::parse_json_file(dir.file("report.json"));
  CHECK(doc["warmup_instances_left_out"].as_int64() == 6);
  CHECK(doc["nodes"][30]["open_instances"].as_int64() == 1);
  CHECK(doc["nodes"][0]["open_instances"].as_int64() == 0);
  const gpuprof::Report back = gpuprof::read_report_json(dir.file("report.json"));
  CHECK(back.warmup_instances_left_out == 6);
  CHECK(back.nodes[30].open_instances == 1);
}

TEST_CASE("optional table columns appear only when some node has their data") {
  gpuprof::Report report = sample_report();
  for (auto& node : report.nodes) {
    node.work = {};
    node.peak_device_bytes = -1;
  }
  report.timing_source = gpuprof::TimingSource::host_clock;
  report.timing_note = "no CUDA device";
  report.device_name.clear();
  std::ostringstream out;
  gpuprof::print_table(report, out);
  const std::string text = out.str();
  CHECK(text.find("timing by host clock (no CUDA device); device: none") != std::string::npos);
  for (const char* column : {"TFLOP/s", "GB/s", "tokens/s", "Peak MiB", "Alloc peak MiB", "Reserved MiB"})
    CHECK(text.find(column) == std::string::npos);
}

TEST_CASE("PyTorch allocator figures go to JSON and back, and into the table") {
  gpuprof::Report report = sample_report();
  report.nodes[0].peak_allocated_bytes = std::int64_t{5} << 30;  // beyond 32 bits
  report.nodes[0].reserved_bytes = std::int64_t{3} << 31;
  TemporaryDirectory dir;
  gpuprof::write_json(report, dir.file("report.json"));
  const Json doc = gpuprof_test::parse_json_file(dir.file("report.json"));
  CHECK(doc["nodes"][0]["peak_allocated_bytes"].as_int64() == (std::int64_t{5} << 30));
  CHECK(doc["nodes"][0]["reserved_bytes"].as_int64() == (std::int64_t{3} << 31));
  CHECK(doc["nodes"][1]["peak_allocated_bytes"].is_null());
  CHECK(doc["nodes"][1]["reserved_bytes"].is_null());
  const gpuprof::Report back = gpuprof::read_report_json(dir.file("report.json"));
  CHECK(back.nodes[0].peak_allocated_bytes == (std::int64_t{5} << 30));
  CHECK(back.nodes[0].reserved_bytes == (std::int64_t{3} << 31));
  CHECK(back.nodes[1].peak_allocated_bytes == -1);
  CHECK(back.nodes[1].reserved_bytes == -1);
  std::ostringstream out;
  gpuprof::print_table(report, out);
  CHECK(out.str().find("Alloc peak MiB") != std::string::npos);
  CHECK(out.str().find("5120.0") != std::string::npos);
  CHECK(out.str().find("6144.0") != std::string::npos);

  gpuprof::write_csv(report, dir.file("report.csv"));
  const auto rows = parse_csv(gpuprof_test::read_text_file(dir.file("report.csv")));
  const auto column = [&](const std::string& name) {
    return static_cast<std::size_t>(std::find(rows[0].begin(), rows[0].end(), name) - rows[0].begin());
  };
  REQUIRE(column("reserved_bytes") < rows[0].size());
  CHECK(rows[1][column("peak_allocated_bytes")] == std::to_string(std::int64_t{5} << 30));
  CHECK(rows[1][column("reserved_bytes")] == std::to_string(std::int64_t{3} << 31));
  CHECK(rows[2][column("peak_allocated_bytes")].empty());
  CHECK(rows[2][column("reserved_bytes")].empty());
}

TEST_CASE("markdown table is a GitHub table with indented names") {
  const gpuprof::Report report = sample_report();
  const std::string text = gpuprof::to_markdown(report);
  CHECK(text.find("| Scope | Count | Total ms |") != std::string::npos);
  CHECK(text.find("|:---|---:|---:|") !=
        std::string::npos);  // was "|---|": one Table renderer, left columns ":---"
  CHECK(text.find("| &nbsp;&nbsp;forward | 2 |") != std::string::npos);
  CHECK(text.find("| &nbsp;&nbsp;&nbsp;&nbsp;attention | 2 |") != std::string::npos);
  CHECK(text.find("Unstable statistics:") != std::string::npos);
  CHECK(text.find("- loader: fewer than 2 samples\n") == std::string::npos);
  CHECK(text.find("Notes:\n\n- 1 of 4 scope(s) finished fewer than 2 times") != std::string::npos);

  TemporaryDirectory dir;
  gpuprof::write_markdown(report, dir.file("report.md"));
  CHECK(gpuprof_test::read_text_file(dir.file("report.md")) == text);
}

TEST_CASE("JSON strings are escaped and always valid UTF-8") {
  const std::string tricky = "q\"b\\s/\n\r\t\b\f\x01\x1f caf\xC3\xA9 \xE2\x82\xAC \xF0\x9F\x98\x80";
  gpuprof::JsonWriter json;
  json.begin_object()
      .member("text", tricky)
      .member("bad",
              "a\xFF"
              "b\xC3")
      .end_object();
  CHECK(json.str().find("\\u0001") != std::string::npos);
  CHECK(json.str().find("\\u001f") != std::string::npos);
  const Json doc = gpuprof_test::parse_json(json.str());
  CHECK(doc["text"].as_string() == tricky);
  CHECK(doc["bad"].as_string() ==
        "a\xEF\xBF\xBD"
        "b\xEF\xBF\xBD");  // U+FFFD for each bad byte

  gpuprof::Report report = sample_report();
  report.nodes[3].name = report.nodes[3].path = tricky;
  report.timing_note = tricky;
  TemporaryDirectory dir;
  gpuprof::write_json(report, dir.file("r.json"));
  gpuprof::write_chrome_trace(report, dir.file("t.json"));
  CHECK(gpuprof_test::parse_json_file(dir.file("r.json"))["nodes"][3]["name"].as_string() == tricky);
  CHECK(gpuprof_test::parse_json_file(dir.file("t.json"))["otherData"]["timing_note"].as_string() == tricky);
}

TEST_CASE("JSON numbers round-trip exactly; non-finite numbers become null") {
  gpuprof::JsonWriter json;
  json.begin_array(gpuprof::JsonWriter::one_line)
      .value(0.1)
      .value(1.0 / 3.0)
      .value(1e-300)
      .value(std::numeric_limits<double>::quiet_NaN())
      .value(-std::numeric_limits<double>::infinity())
      .value(std::numeric_limits<std::int64_t>::min())
      .value(std::numeric_limits<std::uint64_t>::max())
      .end_array();
  CHECK(json.str().rfind("[0.1, 0.3333333333333333, 1e-300, null, null, ", 0) == 0);
  const Json doc = gpuprof_test::parse_json(json.str());
  CHECK(doc[1].as_number() == 1.0 / 3.0);
  CHECK(doc[2].as_number() == 1e-300);
  CHECK(doc[5].as_int64() == std::numeric_limits<std::int64_t>::min());
  CHECK(json.str().find("18446744073709551615") != std::string::npos);
}

TEST_CASE("JSON writer refuses malformed documents") {
  gpuprof::JsonWriter json;
  json.begin_object();
  CHECK_THROWS_AS(json.value(1), gpuprof::Error);  // no key
  CHECK_THROWS_AS(json.end_array(), gpuprof::Error);
  CHECK_THROWS_AS(json.str(), gpuprof::Error);  // still open
  json.key("a");
  CHECK_THROWS_AS(json.key("b"), gpuprof::Error);      // two keys
  CHECK_THROWS_AS(json.end_object(), gpuprof::Error);  // key without value
  json.value(true).end_object();
  CHECK(json.str() == "{\n  \"a\": true\n}");
  CHECK_THROWS_AS(json.value(2), gpuprof::Error);  // second top-level value
}

TEST_CASE("the test JSON parser is strict") {
  for (const char* bad : {"", "{", "[1,]", "{\"a\":1,}", "01", "1.", "-", "NaN", "\"a\nb\"", "\"\\x\"",
                          "\"\\ud800\"", "[1] 2", "tru", "{a:1}"}) {
    CAPTURE(bad);
    CHECK_THROWS_AS(gpuprof_test::parse_json(bad), std::runtime_error);
  }
  const Json doc =
      gpuprof_test::parse_json(" {\"k\": [true, false, null, -0.5e2, \"\\u00e9\\ud83d\\ude00\"]} ");
  CHECK(doc["k"][0].as_bool());
  CHECK_FALSE(doc["k"][1].as_bool());
  CHECK(doc["k"][2].is_null());
  CHECK(doc["k"][3].as_number() == -50.0);
  CHECK(doc["k"][4].as_string() == "\xC3\xA9\xF0\x9F\x98\x80");
  CHECK_THROWS_AS(doc["missing"], std::runtime_error);
  CHECK_THROWS_AS(doc["k"][0].as_number(), std::runtime_error);
}

TEST_CASE("writing to an unwritable path throws with the path and leaves nothing behind") {
  const gpuprof::Report report = sample_report();
  TemporaryDirectory dir;
  const std::string plain_file = dir.file("plain-file");
  gpuprof::write_file_atomically(plain_file, "not a directory");
  const std::string existing_directory = dir.file("a-directory");
  fs::create_directory(existing_directory);

  const auto expect_failure = [&](const std::string& path, const auto& write) {
    CAPTURE(path);
    try {
      write(path);
      FAIL("no exception for " << path);
    } catch (const gpuprof::Error& error) {
      const std::string message = error.what();
      CHECK(message.find(path) != std::string::npos);
    }
    CHECK_FALSE(fs::exists(path));
  };
  const auto write_json = [&](const std::string& path) { gpuprof::write_json(report, path); };
  const auto write_csv = [&](const std::string& path) { gpuprof::write_csv(report, path); };
  const auto write_trace = [&](const std::string& path) { gpuprof::write_chrome_trace(report, path); };
  const auto write_markdown = [&](const std::string& path) { gpuprof::write_markdown(report, path); };

  expect_failure("/nonexistent-dir/x.json", write_json);
  expect_failure(plain_file + "/x.json", write_json);
  expect_failure(plain_file + "/x.csv", write_csv);
  expect_failure(plain_file + "/trace.json", write_trace);
  expect_failure(plain_file + "/report.md", write_markdown);
  // A directory is never replaced, and no temporary is left beside it.
  try {
    gpuprof::write_json(report, existing_directory);
    FAIL("no exception for a directory");
  } catch (const gpuprof::Error& error) {
    CHECK(std::string(error.what()).find(existing_directory) != std::string::npos);
  }
  CHECK(fs::is_directory(existing_directory));
  CHECK(gpuprof_test::read_text_file(plain_file) == "not a directory");
  std::vector<std::string> left = dir.entries();
  std::sort(left.begin(), left.end());
  CHECK(left == std::vector<std::string>{"a-directory", "plain-file"});
  CHECK_THROWS_AS(gpuprof::write_file_atomically("", "x"), gpuprof::Error);
}
