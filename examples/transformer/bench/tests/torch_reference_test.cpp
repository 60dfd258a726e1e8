// Tests of the reader of scripts/torch_reference.py's JSON lines and of the join.
#include <doctest/doctest.h>

#include <stdexcept>
#include <string>
#include <vector>

#include <gpuprof/input_limits.hpp>

#include "bench/torch_reference.hpp"

using namespace transformer;
using namespace transformer::bench;

namespace {

harness::ResultRow row_for(const std::string& size, int ctx, Mode mode, Precision precision) {
  harness::ResultRow row;
  row.size = size;
  row.ctx = ctx;
  row.mode = mode;
  row.precision = precision;
  row.batch = 4;
  row.median_ms = 10.0;
  row.peak_mem_bytes = 1LL << 30;
  return row;
}

}  // namespace

TEST_CASE("flat objects: strings with escapes, numbers, booleans, null") {
  const FlatJsonObject object = parse_flat_json_object(
      R"({"size": "2.7B", "ctx": 512, "x": -1.5e-3, "oom": true, "c": false, "n": null, "s": "a\"b\\c\u0041"})");
  CHECK(std::get<std::string>(object.at("size")) == "2.7B");
  CHECK(std::get<double>(object.at("ctx")) == 512.0);
  CHECK(std::get<double>(object.at("x")) == -1.5e-3);
  CHECK(std::get<bool>(object.at("oom")));
  CHECK_FALSE(std::get<bool>(object.at("c")));
  CHECK(std::holds_alternative<std::nullptr_t>(object.at("n")));
  CHECK(std::get<std::string>(object.at("s")) == "a\"b\\cA");
  CHECK(parse_flat_json_object("{}").empty());
}

TEST_CASE("\\u escapes: ASCII decoded, anything above kept as '?', bad digits refused") {
  // \u0141 and \u0100 would narrow to 'A' and NUL if cast to char first.
  const FlatJsonObject object = parse_flat_json_object(R"({"s": "\u007a\u00e9\u0141\u0100\u20AC"})");
  CHECK(std::get<std::string>(object.at("s")) == "z????");
  for (const char* bad : {R"({"s": "\u12"})", R"({"s": "\u12g4"})", R"({"s": "\u+123"})",
                          R"({"s": "\u 123"})", R"({"s": "\u-123"})"})
    CHECK_THROWS_AS(parse_flat_json_object(bad), std::runtime_error);
}

TEST_CASE("malformed lines are refused") {
  for (const char* bad : {"", "{", "{\"a\" 1}", "{\"a\": }", "{\"a\": [1]}", "{\"a\": {\"b\": 1}}",
                          "{\"a\": 1} extra", "{\"a\": 1,}", "[1, 2]"})
    CHECK_THROWS_AS(parse_flat_json_object(bad), std::runtime_error);
}

TEST_CASE("torch_reference.py rows join on size, ctx, mode and precision; the last line wins") {
  const TorchReference reference = TorchReference::from_lines(
      {R"({"size": "small", "ctx": 512, "mode": "step", "prec": "bf16", "compile": false, "params": 128625408, "mean_ms": 80.0, "std_ms": 1.0, "median_ms": 79.0, "min_ms": 78.0, "peak_mem_gib": 4.0, "wall_s": 3.2})",
       "",
       R"({"size": "small", "ctx": 512, "mode": "step", "prec": "bf16", "compile": false, "mean_ms": 74.0, "median_ms": 73.5, "peak_mem_gib": 2.0})",
       R"({"size": "2.7B", "ctx": 1024, "mode": "step", "prec": "fp32", "compile": false, "oom": true, "wall_s": 1.1})"},
      "torch.jsonl");
  CHECK(reference.size() == 2);

  harness::ResultRow small = row_for("small", 512, Mode::step, Precision::bf16);
  reference.join(small);
  REQUIRE(small.torch.has_value());
  CHECK(*small.torch->median_ms == 73.5);
  CHECK(*small.torch->peak_mem_bytes == 2.0 * 1073741824.0);
  CHECK(*small.speedup_vs_torch() == doctest::Approx(7.35));
  CHECK(*small.memory_ratio_vs_torch() == doctest::Approx(0.5));

  harness::ResultRow big = row_for("2.7B", 1024, Mode::step, Precision::fp32);
  reference.join(big);
  REQUIRE(big.torch.has_value());
  CHECK(big.torch->oom);
  CHECK_FALSE(big.speedup_vs_torch().has_value());

  harness::ResultRow unmatched = row_for("small", 512, Mode::fwd, Precision::bf16);
  reference.join(unmatched);
  CHECK_FALSE(unmatched.torch.has_value());

  // Rows that say no batch stand for the default, 4, only.
  harness::ResultRow other_batch = row_for("small", 512, Mode::step, Precision::bf16);
  other_batch.batch = 8;
  reference.join(other_batch);
  CHECK_FALSE(other_batch.torch.has_value());
}

TEST_CASE("a bad torch_reference.py line is reported with its file and line number") {
  try {
    TorchReference::from_lines({R"({"size": "small", "ctx": 128, "mode": "fwd", "prec": "fp32"})",
                                R"({"size": "small", "ctx": 128})"},
                               "runs.jsonl");
    FAIL("expected an error");
  } catch (const std::runtime_error& error) {
    CHECK(std::string(error.what()).find("runs.jsonl:2:") != std::string::npos);
  }
  CHECK_THROWS_AS(TorchReference::read("/nonexistent/torch.jsonl"), std::runtime_error);
}

TEST_CASE("the reference file is read like any input: bounded, a regular file, holding rows") {
  gpuprof::set_max_input_bytes(std::size_t{1} << 20);
  CHECK_THROWS_WITH_AS(TorchReference::read("/dev/zero"), doctest::Contains("larger than the input limit"),
                       std::runtime_error);
  gpuprof::set_max_input_bytes(0);
  CHECK_THROWS_WITH_AS(TorchReference::read("/"), doctest::Contains("Is a directory"), std::runtime_error);
  CHECK_THROWS_WITH_AS(TorchReference::read("/dev/null"), doctest::Contains("no torch_reference.py rows"),
                       std::runtime_error);
}

TEST_CASE("a row that states its batch joins rows of that batch") {
  const TorchReference reference = TorchReference::from_lines(
      {R"({"size": "small", "ctx": 128, "mode": "fwd", "prec": "fp32", "batch": 8, "median_ms": 3.0})"},
      "batch8.jsonl");
  harness::ResultRow row = row_for("small", 128, Mode::fwd, Precision::fp32);
  reference.join(row);
  CHECK_FALSE(row.torch.has_value());
  row.batch = 8;
  reference.join(row);
  REQUIRE(row.torch.has_value());
  CHECK(*row.torch->median_ms == 3.0);
}
