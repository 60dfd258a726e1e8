// profile/tests/profile_report_test.cpp: the markdown and JSON renderings of
// a profile with one analysed configuration, one OOM configuration and a
// memory table; the JSON is read back with the strict test parser.
#include <doctest/doctest.h>

#include <string>

#include "profile/profile_results.hpp"
#include "profile/report_json.hpp"
#include "profile/report_markdown.hpp"
#include "profile/tests/scenario.hpp"
#include "support/json_parse.hpp"

using namespace transformer;
using namespace transformer::profile;

namespace {

StepTimes times(double mean_ms) {
  StepTimes t;
  t.mean_ms = mean_ms;
  t.std_ms = 0.01;
  t.steps = 10;
  t.clock = "cuda_events";
  return t;
}

ProfileResults make_results() {
  ProfileResults results;
  results.device = "Test GPU";
  results.batch = 4;
  results.warmup = 5;
  results.steps = 10;

  ConfigurationProfile ok;
  ok.size = "tiny";
  ok.ctx = 8;
  ok.plain_forward = times(2.0);
  ok.captured_forward = times(2.1);
  ok.plain_step = times(8.0);
  ok.captured_step = times(8.4);
  ok.answers = testing::scenario_answers();
  results.configurations.push_back(ok);

  ConfigurationProfile oom;
  oom.size = "large";
  oom.ctx = 1024;
  oom.status = RunStatus::oom;
  oom.oom_mode = Mode::step;
  oom.bytes_needed = std::size_t{3} << 29;  // 1.5 GiB
  results.configurations.push_back(oom);

  MemoryTable memory;
  memory.model = "2.7B";
  memory.d_model = 2560;
  memory.batch = 4;
  MemoryRow measured;
  measured.ctx = 128;
  measured.mode = Mode::fwd;
  measured.precision = Precision::bf16;
  measured.peak_bytes = std::int64_t{1} << 31;
  measured.allocated_bytes = std::size_t{1} << 30;
  measured.residual_stream_bytes = residual_stream_bytes(4, 128, 2560);
  MemoryRow too_big = measured;
  too_big.mode = Mode::step;
  too_big.precision = Precision::fp32;
  too_big.status = RunStatus::oom;
  too_big.peak_bytes.reset();
  too_big.allocated_bytes.reset();
  too_big.bytes_needed = std::size_t{100} << 30;
  memory.rows = {measured, too_big};
  results.memory = memory;
  return results;
}

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

}  // namespace

TEST_CASE("capture overhead is the step-time increase in percent") {
  CHECK(capture_overhead_percent(times(8.0), times(8.4)) == doctest::Approx(5.0));
  CHECK(capture_overhead_percent(times(0.0), times(1.0)) == 0.0);
}

TEST_CASE("markdown: summary, one section per configuration, OOM lines, memory table") {
  const std::string md = profile_markdown(make_results());
  CHECK(contains(md, "Device: Test GPU."));
  CHECK(contains(md, "## Summary"));
  CHECK(contains(md, "## tiny ctx 8 bf16"));
  CHECK(contains(md, "## large ctx 1024 bf16 naive\n\nOOM (needs 1.50 GiB) in mode step"));
  CHECK(contains(md, "| `ffn_gemm` | gemm |"));            // (b) in the summary
  CHECK(contains(md, "A different kernel leads"));         // (b) verdict
  CHECK(contains(md, "| `softmax_forward` | softmax |"));  // (c)
  CHECK_FALSE(contains(md, "| `rmsnorm` | norm |"));       // below 1%
  CHECK(contains(md, "+5.0%"));                            // train-step capture overhead
  CHECK(contains(md, "time 0.400, FLOPs 0.0125"));         // (e)
  CHECK(contains(md, "## Memory: 2.7B model, batch 4"));
  CHECK(contains(md, "| 128 | fwd | bf16 | naive | 2.00 | 1.00 | 5.0 |"));
  CHECK(contains(md, "| 128 | step | fp32 | naive | OOM (needs 100.00 GiB) | - | 5.0 |"));
  CHECK(contains(md, "kern_sum/tiny-ctx8-bf16-naive-inference-forward.csv"));
}

TEST_CASE("the report names the cuDNN that was loaded, in the markdown and the JSON") {
  ProfileResults results = make_results();
  results.cudnn = "9.19.0";
  CHECK(contains(profile_markdown(results), "Device: Test GPU (cuDNN 9.19.0). Batch 4"));
  CHECK(gpuprof_test::parse_json(profile_json(results))["cudnn"].as_string() == "9.19.0");
}

TEST_CASE("a fused-attention configuration says so, and why question (e) is not answered") {
  ProfileResults results = make_results();
  results.configurations[0].attention = Attention::fused;
  const std::string md = profile_markdown(results);
  CHECK(contains(md, "## tiny ctx 8 bf16 fused"));
  CHECK(contains(md, "Run with --attention naive to time them apart."));
  CHECK_FALSE(contains(md, "time 0.400, FLOPs 0.0125"));
  CHECK(contains(md, "kern_sum/tiny-ctx8-bf16-fused-inference-forward.csv"));
  const gpuprof_test::Json doc = gpuprof_test::parse_json(profile_json(results));
  CHECK(doc["configurations"][0]["attention_path"].as_string() == "fused");
  CHECK(doc["configurations"][1]["attention_path"].as_string() == "naive");
}

TEST_CASE("JSON: the same numbers, at full precision, in valid JSON") {
  const ProfileResults results = make_results();
  const ProfileAnswers& answers = *results.configurations[0].answers;
  const gpuprof_test::Json doc = gpuprof_test::parse_json(profile_json(results));
  CHECK(doc["schema"].as_string() == json_schema_name);
  CHECK(doc["version"].as_number() == json_schema_version);
  CHECK(doc["cudnn"].is_null());  // make_results() names no cuDNN
  const gpuprof_test::Json& ok = doc["configurations"][0];
  CHECK(ok["status"].as_string() == "ok");
  CHECK(ok["forward_time"]["kernel_sum_ms"].as_number() == answers.forward.kernel_sum_ms);
  CHECK(ok["forward_time"]["event_ms"].as_number() == *answers.forward.event_ms);
  CHECK(ok["capture_overhead_percent"]["train_step"].as_number() == doctest::Approx(5.0));
  CHECK(ok["top_kernel"]["forward"]["base_name"].as_string() == "ffn_gemm");
  CHECK_FALSE(ok["top_kernel"]["same"].as_bool());
  CHECK(ok["non_gemm_forward"].size() == 2);
  const gpuprof_test::Json& gemm = ok["categories"][0];
  CHECK(gemm["category"].as_string() == "gemm");
  CHECK(gemm["inference_percent"].as_number() == answers.categories[0].inference_percent);
  CHECK(gemm["train_step_percent"].as_number() == answers.categories[0].train_percent);
  CHECK(ok["attention"]["time_ratio"].as_number() == answers.attention.time_ratio());
  CHECK(ok["attention"]["softmax_flops_per_score"].as_number() == 5);

  const gpuprof_test::Json& oom = doc["configurations"][1];
  CHECK(oom["status"].as_string() == "oom");
  CHECK(oom["oom_mode"].as_string() == "step");
  CHECK(oom["bytes_needed"].as_number() == static_cast<double>(std::size_t{3} << 29));

  const gpuprof_test::Json& rows = doc["memory"]["rows"];
  CHECK(rows[0]["peak_bytes"].as_number() == static_cast<double>(std::int64_t{1} << 31));
  CHECK(rows[0]["residual_stream_bytes"].as_number() == 5.0 * 1024 * 1024);
  CHECK(rows[1]["status"].as_string() == "oom");
  CHECK(rows[1]["peak_bytes"].is_null());
}
