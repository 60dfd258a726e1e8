// Tests of the driver's outputs: the gpuprof.bench document parsed back with
// the strict test parser and by gpuprof-compare's reader, the CSV's columns and quoting, the table's OOM and
// PyTorch cells.
#include <doctest/doctest.h>

#include <gpuprof/compare.hpp>
#include <gpuprof/report/read_bench_json.hpp>

#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "harness/output.hpp"
#include "support/json_parse.hpp"

using namespace transformer;
using namespace transformer::harness;

namespace {

ResultRow measured_row() {
  ResultRow row;
  row.size = "small";
  row.ctx = 512;
  row.batch = 4;
  row.mode = Mode::step;
  row.precision = Precision::bf16;
  row.backend = "cuda";
  row.warmup = 5;
  row.steps = 10;
  row.graph = true;
  row.params = 128625408;
  row.timing = "cuda_events";
  row.samples_ms = {40.0, 41.0, 39.75, 40.0, 41.75};
  row.mean_ms = 40.5;
  row.std_ms = 0.25;
  row.median_ms = 40.0;
  row.min_ms = 39.75;
  row.cold_ms = 812.0;
  row.tokens_per_s = 4.0 * 512 / 0.0405;
  row.tflops = 123.5;
  row.mfu = 0.16;
  row.peak_mem_bytes = 3LL << 30;
  row.allocated_bytes = std::size_t{2} << 30;
  TorchFigures torch;
  torch.median_ms = 73.5;
  torch.mean_ms = 74.0;
  torch.peak_mem_bytes = 6.0 * (1 << 30);
  row.torch = torch;
  return row;
}

ResultRow oom_row() {
  ResultRow row;
  row.size = "2.7B";
  row.ctx = 1024;
  row.batch = 4;
  row.mode = Mode::step;
  row.precision = Precision::fp32;
  row.backend = "cuda";
  row.status = RowStatus::oom;
  row.params = 3406809600;
  row.bytes_requested = std::size_t{3} << 29;  // 1.5 GiB
  row.bytes_free = std::size_t{1} << 28;       // 0.25 GiB
  return row;
}

ResultRow unsupported_row() {
  ResultRow row;
  row.size = "tiny";
  row.ctx = 128;
  row.batch = 4;
  row.mode = Mode::fwd;
  row.precision = Precision::bf16;
  row.backend = "cpu";
  row.status = RowStatus::unsupported;
  row.note = "the cpu backend computes in fp32 only, \"bf16\" skipped";
  return row;
}

BenchResults sample_results() {
  BenchResults results;
  results.device = "NVIDIA H100 80GB HBM3";
  results.backend = "cuda";
  results.cudnn = "9.14.0";
  results.batch = 4;
  results.warmup = 5;
  results.steps = 10;
  results.ceilings_tflops = {{"bf16", 773.0}, {"fp32", 51.0}, {"tf32", 393.0}};
  results.rows = {measured_row(), oom_row(), unsupported_row()};
  results.seed = 7;
  WarmupStudyRow warmup;
  warmup.size = "small";
  warmup.ctx = 512;
  warmup.mode = Mode::step;
  warmup.precision = Precision::bf16;
  warmup.attention = Attention::fused;
  warmup.steps = 3;
  warmup.mean_ms = 300.0;
  warmup.first_ms = 800.0;
  warmup.rest_mean_ms = 50.0;
  warmup.samples_ms = {800.0, 50.0, 50.0};
  warmup.gpu_timed = true;
  results.warmup_study = {warmup};
  LossCurve curve;
  curve.size = "tiny";
  curve.ctx = 128;
  curve.batch = 4;
  curve.precision = Precision::bf16;
  curve.losses = {9.25, 9.0, 8.5};
  curve.max_abs_divergence_from_fp32 = 0.01;
  results.loss_curves = {curve};
  return results;
}

}  // namespace

// The fields of one benchmark of the document, by name.
const gpuprof_test::Json& benchmark(const gpuprof_test::Json& document, const std::string& name) {
  for (const gpuprof_test::Json& entry : document["benchmarks"].elements())
    if (entry["name"].as_string() == name) return entry;
  FAIL("no benchmark " << name);
  throw std::logic_error("unreachable");
}

TEST_CASE(
    "the JSON document is gpuprof.bench: a benchmark per row, its steps as samples, its columns as fields") {
  const gpuprof_test::Json document = gpuprof_test::parse_json(results_json(sample_results()));
  CHECK(document["schema"].as_string() == "gpuprof.bench");
  CHECK(document["version"].as_int64() == 1);
  REQUIRE(document["benchmarks"].size() == 3 + 1 + 1);

  // Every row_fields() column, and the run's own figures, on every sweep row.
  for (std::size_t i = 0; i < 3; ++i) {
    const gpuprof_test::Json& fields = document["benchmarks"][i]["fields"];
    for (const auto& field : row_fields(ResultRow{}))
      CHECK_MESSAGE(fields.contains(field.first), field.first);
    CHECK(fields["study"].as_string() == "sweep");
    CHECK(fields["device"].as_string() == "NVIDIA H100 80GB HBM3");
    CHECK(fields["cudnn"].as_string() == "9.14.0");
    CHECK(fields["seed"].as_int64() == 7);
  }

  const gpuprof_test::Json& ok =
      benchmark(document, "lm[size=small,ctx=512,mode=step,precision=bf16,attention=naive]");
  CHECK(ok["timing_source"].as_string() == "cuda_events");
  CHECK(ok["cold_ms"].as_number() == 812.0);
  CHECK(ok["warmup_calls"].as_int64() == 5);
  CHECK(ok["stop_reason"].as_string() == "5 timed steps, each one replay of a CUDA graph");
  const gpuprof_test::Json& gpu = ok["gpu_ms"];
  CHECK(gpu["n"].as_int64() == 5);
  CHECK(gpu["median"].as_number() == 40.0);
  CHECK(gpu["samples_ms"][std::size_t{0}].as_number() == 39.75);  // sorted
  const gpuprof_test::Json& fields = ok["fields"];
  CHECK(fields["size"].as_string() == "small");
  CHECK(fields["ctx"].as_int64() == 512);
  CHECK(fields["mode"].as_string() == "step");
  CHECK(fields["precision"].as_string() == "bf16");
  CHECK(fields["status"].as_string() == "ok");
  CHECK(fields["median_ms"].as_number() == 40.0);
  CHECK(fields["mfu"].as_number() == 0.16);
  CHECK(fields["ceiling_tflops"].as_number() == 773.0);
  CHECK(fields["peak_mem_bytes"].as_int64() == (3LL << 30));
  CHECK(fields["params"].as_int64() == 128625408);
  CHECK(fields["timing"].as_string() == "cuda_events");
  CHECK(fields["graph"].as_bool());
  CHECK(fields["torch_median_ms"].as_number() == 73.5);
  CHECK(fields["speedup_vs_torch"].as_number() == doctest::Approx(73.5 / 40.0));
  CHECK(fields["memory_ratio_vs_torch"].as_number() == doctest::Approx(0.5));
  CHECK(fields["bytes_requested"].is_null());
  const gpuprof_test::Json& axes = ok["axes"];  // the sweep's point, which gpuprof-compare matches by
  CHECK(axes.keys() == std::vector<std::string>{"size", "ctx", "mode", "precision", "attention"});
  CHECK(axes["size"].as_string() == "small");
  CHECK(axes["ctx"].as_int64() == 512);
  CHECK(axes["attention"].as_string() == "naive");

  const gpuprof_test::Json& oom =
      benchmark(document, "lm[size=2.7B,ctx=1024,mode=step,precision=fp32,attention=naive]");
  CHECK(oom["host_ms"]["n"].as_int64() == 0);
  CHECK(oom["stop_reason"].as_string() == "OOM (needs 1.50 GiB, 0.25 GiB free)");
  CHECK(oom["fields"]["status"].as_string() == "oom");
  CHECK(oom["fields"]["bytes_requested"].as_int64() == (3LL << 29));
  CHECK(oom["fields"]["bytes_free"].as_int64() == (1LL << 28));
  CHECK(oom["fields"]["mean_ms"].is_null());
  CHECK(oom["fields"]["timing"].is_null());
  CHECK(oom["fields"]["ceiling_tflops"].as_number() == 51.0);

  const gpuprof_test::Json& unsupported =
      benchmark(document, "lm[size=tiny,ctx=128,mode=fwd,precision=bf16,attention=naive]");
  CHECK(unsupported["fields"]["status"].as_string() == "unsupported");
  CHECK(unsupported["stop_reason"].as_string().rfind("unsupported (the cpu backend", 0) == 0);
  CHECK(unsupported["fields"]["mfu"].is_null());

  const gpuprof_test::Json& warmup = benchmark(document, "warmup_study/step/small/ctx512/bf16/fused/warmup0");
  CHECK(warmup["fields"]["study"].as_string() == "warmup_study");
  CHECK(warmup["fields"]["first_ms"].as_number() == 800.0);
  CHECK(warmup["gpu_ms"]["samples_ms"].size() == 3);

  const gpuprof_test::Json& curve = benchmark(document, "loss_curve/tiny/ctx128/bf16");
  CHECK(curve["stop_reason"].as_string() == "not timed: a loss curve");
  CHECK(curve["fields"]["study"].as_string() == "loss_curve");
  CHECK(curve["fields"]["losses"].size() == 3);
  CHECK(curve["fields"]["losses"][2].as_number() == 8.5);
  CHECK(curve["fields"]["max_abs_divergence_from_fp32"].as_number() == 0.01);
}

TEST_CASE("gpuprof-compare's reader takes the document: rows by configuration, OOM rows not measured") {
  const gpuprof::MeasuredRun run =
      gpuprof::detail::measured_run_from_json(gpuprof::detail::parse_json(results_json(sample_results())));
  CHECK(run.kind == "gpuprof.bench");
  const gpuprof::Comparison c = gpuprof::compare_runs(run, run);
  REQUIRE(c.rows.size() == 5);
  CHECK(c.rows[0].key == "lm[size=small,ctx=512,mode=step,precision=bf16,attention=naive]");
  CHECK(c.rows[0].verdict == gpuprof::Verdict::same);
  CHECK(c.rows[0].test == "Mann-Whitney U");
  CHECK(c.rows[1].verdict == gpuprof::Verdict::not_measured);
  CHECK(c.rows[1].note == "base: OOM (needs 1.50 GiB, 0.25 GiB free)");
}

TEST_CASE("a device is named with its cuDNN where one was loaded") {
  CHECK(device_text("NVIDIA H100 80GB HBM3", std::string("9.14.0")) ==
        "NVIDIA H100 80GB HBM3 (cuDNN 9.14.0)");
  CHECK(device_text("CPU (Eigen backend)", std::nullopt) == "CPU (Eigen backend)");
}

TEST_CASE("an empty run is still a valid document") {
  BenchResults empty;
  empty.device = "CPU";
  empty.backend = "cpu";
  const gpuprof_test::Json document = gpuprof_test::parse_json(results_json(empty));
  CHECK(document["schema"].as_string() == "gpuprof.bench");
  CHECK(document["benchmarks"].size() == 0);
}

TEST_CASE("CSV has the JSON rows' columns, one line per row, RFC 4180 quoting") {
  const std::string csv = results_csv(sample_results());
  std::vector<std::string> lines;
  std::istringstream stream(csv);
  for (std::string line; std::getline(stream, line);) lines.push_back(line);
  REQUIRE(lines.size() == 4);

  std::string expected_header;
  for (const auto& field : row_fields(ResultRow{}))
    expected_header += (expected_header.empty() ? "" : ",") + field.first;
  CHECK(lines[0] == expected_header);
  CHECK(lines[1].rfind("small,512,4,step,bf16,naive,cuda,5,10,ok,", 0) == 0);
  CHECK(lines[2].rfind("2.7B,1024,4,step,fp32,naive,cuda,0,0,oom,", 0) == 0);
  // The note holds a comma and quotes: one quoted cell with doubled quotes.
  CHECK(lines[3].find(",\"the cpu backend computes in fp32 only, \"\"bf16\"\" skipped\",") !=
        std::string::npos);
}

TEST_CASE("the table spells OOM with the memory needed and shows the PyTorch columns") {
  std::ostringstream out;
  print_results_table(out, sample_results());
  const std::string table = out.str();
  CHECK(table.find("OOM (needs 1.50 GiB, 0.25 GiB free)") != std::string::npos);
  CHECK(table.find("cuda backend on NVIDIA H100 80GB HBM3 (cuDNN 9.14.0); batch 4") != std::string::npos);
  CHECK(table.find("torch ms") != std::string::npos);
  CHECK(table.find("1.84x") != std::string::npos);  // 73.5 / 40
  CHECK(table.find("16.0%") != std::string::npos);  // MFU

  // Aligned: the "median ms" column ends at the same offset on every row.
  std::istringstream lines(table);
  std::string line;
  std::getline(lines, line);  // the caption
  std::getline(lines, line);  // the header
  const auto column_end = line.find("median ms") + std::string("median ms").size();
  std::getline(lines, line);  // the rule
  std::getline(lines, line);  // the first row: its median is 40.00
  CHECK(line.substr(column_end - 5, 5) == "40.00");
}

TEST_CASE("every row status has its JSON name") {
  CHECK(std::string(to_string(RowStatus::ok)) == "ok");
  CHECK(std::string(to_string(RowStatus::oom)) == "oom");
  CHECK(std::string(to_string(RowStatus::unsupported)) == "unsupported");
  CHECK(std::string(to_string(RowStatus::error)) == "error");
}
