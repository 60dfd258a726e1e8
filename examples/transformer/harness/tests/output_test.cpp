// Tests of the driver's outputs: the JSON document parsed back with the
// strict test parser, the CSV's columns and quoting, the table's OOM and
// PyTorch cells.
#include <doctest/doctest.h>

#include <sstream>
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
  results.warmup_study = {
      {"small", 512, Mode::step, Precision::bf16, 0, 10, 120.0, 250.0, 800.0, 40.0}};
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

TEST_CASE("the JSON document carries the schema, the ceilings and every row's fields") {
  const gpuprof_test::Json document = gpuprof_test::parse_json(results_json(sample_results()));
  CHECK(document["schema"].as_string() == "gpuprof.transformer_bench");
  CHECK(document["version"].as_int64() == 1);
  CHECK(document["device"].as_string() == "NVIDIA H100 80GB HBM3");
  CHECK(document["cudnn"].as_string() == "9.14.0");
  CHECK(document["ceilings_tflops"]["bf16"].as_number() == 773.0);
  CHECK(document["ceilings_tflops"]["tf32"].as_number() == 393.0);
  REQUIRE(document["rows"].size() == 3);

  const char* required[] = {"size",
                            "ctx",
                            "batch",
                            "mode",
                            "precision",
                            "attention",
                            "backend",
                            "warmup",
                            "steps",
                            "graph",
                            "mean_ms",
                            "std_ms",
                            "median_ms",
                            "min_ms",
                            "cold_ms",
                            "tokens_per_s",
                            "tflops",
                            "mfu",
                            "peak_mem_bytes",
                            "allocated_bytes",
                            "params",
                            "status",
                            "bytes_requested",
                            "torch_median_ms",
                            "speedup_vs_torch",
                            "torch_peak_mem_bytes"};
  for (const gpuprof_test::Json& row : document["rows"].elements())
    for (const char* key : required) CHECK_MESSAGE(row.contains(key), key);

  const gpuprof_test::Json& ok = document["rows"][std::size_t{0}];
  CHECK(ok["size"].as_string() == "small");
  CHECK(ok["ctx"].as_int64() == 512);
  CHECK(ok["mode"].as_string() == "step");
  CHECK(ok["precision"].as_string() == "bf16");
  CHECK(ok["status"].as_string() == "ok");
  CHECK(ok["median_ms"].as_number() == 40.0);
  CHECK(ok["mfu"].as_number() == 0.16);
  CHECK(ok["peak_mem_bytes"].as_int64() == (3LL << 30));
  CHECK(ok["params"].as_int64() == 128625408);
  CHECK(ok["timing"].as_string() == "cuda_events");
  CHECK(ok["graph"].as_bool());
  CHECK(ok["torch_median_ms"].as_number() == 73.5);
  CHECK(ok["speedup_vs_torch"].as_number() == doctest::Approx(73.5 / 40.0));
  CHECK(ok["memory_ratio_vs_torch"].as_number() == doctest::Approx(0.5));
  CHECK(ok["bytes_requested"].is_null());

  const gpuprof_test::Json& oom = document["rows"][1];
  CHECK(oom["status"].as_string() == "oom");
  CHECK(oom["bytes_requested"].as_int64() == (3LL << 29));
  CHECK(oom["bytes_free"].as_int64() == (1LL << 28));
  CHECK(oom["mean_ms"].is_null());
  CHECK(oom["timing"].is_null());
  CHECK(oom["torch_median_ms"].is_null());

  CHECK(document["rows"][2]["status"].as_string() == "unsupported");
  CHECK(document["rows"][2]["mfu"].is_null());

  CHECK(document["warmup_study"][std::size_t{0}]["first_ms"].as_number() == 800.0);
  const gpuprof_test::Json& curve = document["loss_curves"][std::size_t{0}];
  CHECK(curve["precision"].as_string() == "bf16");
  CHECK(curve["losses"].size() == 3);
  CHECK(curve["losses"][2].as_number() == 8.5);
  CHECK(curve["max_abs_divergence_from_fp32"].as_number() == 0.01);
}

TEST_CASE("a device is named with its cuDNN where one was loaded") {
  CHECK(device_text("NVIDIA H100 80GB HBM3", std::string("9.14.0")) == "NVIDIA H100 80GB HBM3 (cuDNN 9.14.0)");
  CHECK(device_text("CPU (Eigen backend)", std::nullopt) == "CPU (Eigen backend)");
}

TEST_CASE("an empty run is still a valid document") {
  BenchResults empty;
  empty.device = "CPU";
  empty.backend = "cpu";
  const gpuprof_test::Json document = gpuprof_test::parse_json(results_json(empty));
  CHECK(document["rows"].size() == 0);
  CHECK(document["ceilings_tflops"].size() == 0);
  CHECK(document["cudnn"].is_null());
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
