// Tests of transformer_bench's flag parsing: values, lists, defaults and the
// messages of bad input (each must name the flag and the value at fault).
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "bench/driver_options.hpp"

using namespace transformer;
using namespace transformer::bench;

namespace {

// The UsageError message of parsing `args`; fails the test when parsing succeeds.
std::string usage_error_of(const std::vector<std::string>& args) {
  try {
    parse_options(args);
  } catch (const harness::UsageError& error) {
    return error.what();
  }
  FAIL("expected a UsageError");
  return {};
}

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

}  // namespace

TEST_CASE("no flags leaves the device-dependent lists empty and the protocol defaults") {
  const DriverOptions options = parse_options(std::vector<std::string>{});
  CHECK(options.sizes.empty());
  CHECK(options.contexts.empty());
  CHECK(options.modes.empty());
  CHECK(options.precisions.empty());
  CHECK(options.batch == 4);
  CHECK(options.warmup == 5);
  CHECK(options.steps == 10);
  CHECK(options.device == harness::DeviceChoice::automatic);
  CHECK_FALSE(options.graph.has_value());
  CHECK_FALSE(options.help);
}

TEST_CASE("lists and numbers, with separate and inline values") {
  const DriverOptions options = parse_options(
      std::vector<std::string>{"--size",         "small,2.7B", "--ctx=128,1024", "--batch",      "8",
                               "--warmup",       "0",          "--steps=3",      "--mode",       "fwd,step",
                               "--precision",    "bf16,tf32",  "--device",       "cpu",          "--json",
                               "out.json",       "--csv",      "out.csv",        "--loss-curve", "50",
                               "--warmup-study", "--graph",    "--report",       "--seed",       "42"});
  CHECK(options.sizes == std::vector<std::string>{"small", "2.7B"});
  CHECK(options.contexts == std::vector<int>{128, 1024});
  CHECK(options.batch == 8);
  CHECK(options.warmup == 0);
  CHECK(options.steps == 3);
  CHECK(options.modes == std::vector<Mode>{Mode::fwd, Mode::step});
  CHECK(options.precisions == std::vector<Precision>{Precision::bf16, Precision::tf32});
  CHECK(options.device == harness::DeviceChoice::cpu);
  CHECK(options.json_path == "out.json");
  CHECK(options.csv_path == "out.csv");
  CHECK(options.loss_curve_steps == 50);
  CHECK(options.warmup_study);
  CHECK(options.graph == true);
  CHECK(options.print_report);
  CHECK(options.seed == 42);
}

TEST_CASE("resolve_defaults fills only what was not given") {
  SUBCASE("gpu") {
    DriverOptions options = parse_options(std::vector<std::string>{});
    resolve_defaults(options, true);
    CHECK(options.sizes == std::vector<std::string>{"small"});
    CHECK(options.contexts == std::vector<int>{128, 256, 512, 1024});
    CHECK(options.modes == std::vector<Mode>{Mode::fwd, Mode::fwdbwd, Mode::step});
    CHECK(options.precisions == std::vector<Precision>{Precision::fp32, Precision::bf16});
    CHECK(options.graph == true);
  }
  SUBCASE("cpu") {
    DriverOptions options = parse_options(std::vector<std::string>{});
    resolve_defaults(options, false);
    CHECK(options.sizes == std::vector<std::string>{"tiny"});
    CHECK(options.contexts == std::vector<int>{128});
    CHECK(options.precisions == std::vector<Precision>{Precision::fp32});
    CHECK(options.graph == false);
  }
  SUBCASE("given lists stay") {
    DriverOptions options =
        parse_options(std::vector<std::string>{"--ctx", "64", "--precision", "bf16", "--eager"});
    resolve_defaults(options, true);
    CHECK(options.contexts == std::vector<int>{64});
    CHECK(options.precisions == std::vector<Precision>{Precision::bf16});
    CHECK(options.graph == false);
  }
}

TEST_CASE("--attention: a list, else each configuration's default; fused only where it runs") {
  const DriverOptions options = parse_options(std::vector<std::string>{"--attention", "naive,fused"});
  CHECK(options.attentions == std::vector<Attention>{Attention::naive, Attention::fused});
  const ModelConfig small = *named_size("small"), tiny = *named_size("tiny");
  CHECK(harness::attentions_for(options.attentions, Precision::fp32, small, 512) == options.attentions);
  // The default for bf16 is cuDNN's attention where the build has cuDNN,
  // except at short contexts with 64-wide heads, where ours is faster.
  const bool cudnn = cudnn_attention_available();
  CHECK(harness::attentions_for({}, Precision::bf16, small, 512) ==
        std::vector<Attention>{cudnn ? Attention::cudnn : Attention::fused});
  CHECK(harness::attentions_for({}, Precision::bf16, small, 128) == std::vector<Attention>{Attention::fused});
  CHECK(harness::attentions_for({}, Precision::fp32, small, 128) == std::vector<Attention>{Attention::naive});
  CHECK(harness::attentions_for({}, Precision::bf16, tiny, 128) ==
        std::vector<Attention>{cudnn ? Attention::cudnn : Attention::naive});
  // A sweep over contexts gets each context's default, in context order.
  const DriverOptions sweep = parse_options(std::vector<std::string>{
      "--size", "small", "--ctx", "128,512", "--mode", "step", "--precision", "bf16"});
  const std::vector<RunConfig> configs = sweep_configurations(sweep);
  REQUIRE(configs.size() == 2);
  CHECK(configs[0].ctx == 128);
  CHECK(configs[0].attention == Attention::fused);
  CHECK(configs[1].ctx == 512);
  CHECK(configs[1].attention == (cudnn ? Attention::cudnn : Attention::fused));

  RunConfig config;
  config.model = small;
  config.precision = Precision::bf16;
  config.attention = Attention::fused;
  CHECK(harness::unsupported_attention(config).empty());
  config.precision = Precision::fp32;
  CHECK(contains(harness::unsupported_attention(config), "bf16 only"));
  config.precision = Precision::bf16;
  config.model = tiny;
  CHECK(contains(harness::unsupported_attention(config), "d_head 16"));
  config.attention = Attention::cudnn;
  if (cudnn) CHECK(harness::unsupported_attention(config).empty());  // cuDNN takes d_head 16
  else CHECK(contains(harness::unsupported_attention(config), "no cuDNN"));
  config.model = small;
  config.model.heads = 64;  // d_head 12
  if (cudnn) CHECK(contains(harness::unsupported_attention(config), "multiple of 8"));
  config.attention = Attention::naive;
  CHECK(harness::unsupported_attention(config).empty());
}

TEST_CASE("custom size takes its dimensions from the flags") {
  const DriverOptions options =
      parse_options(std::vector<std::string>{"--size", "custom,tiny", "--d-model", "96", "--d-ff", "256",
                                             "--layers", "2", "--heads", "3", "--vocab", "500"});
  const ModelConfig custom = model_for_size("custom", options.custom);
  CHECK(custom.name == "custom");
  CHECK(custom.d_model == 96);
  CHECK(custom.d_ff == 256);
  CHECK(custom.layers == 2);
  CHECK(custom.heads == 3);
  CHECK(custom.vocab == 500);
  CHECK(model_for_size("tiny", options.custom).name == "tiny");
}

TEST_CASE("bad input names the flag and the value") {
  const auto check_message = [](const std::vector<std::string>& args, const std::vector<std::string>& parts) {
    const std::string message = usage_error_of(args);
    for (const std::string& part : parts) {
      INFO("message: " << message << " -- expected to contain: " << part);
      CHECK(contains(message, part));
    }
  };
  check_message({"--size", "huge"}, {"--size", "huge", "unknown size", "small"});
  check_message({"--graph", "--eager"}, {"--eager", "exclude each other"});
  check_message({"--graph=1"}, {"--graph", "takes no value"});
  check_message({"--ctx", "128,0"}, {"--ctx", "'0'", "at least 1"});
  check_message({"--ctx", "-5"}, {"--ctx", "'-5'"});
  check_message({"--ctx", "12x"}, {"--ctx", "'12x'", "not a whole number"});
  check_message({"--ctx", "128,,256"}, {"--ctx", "empty item"});
  check_message({"--ctx", "128,"}, {"--ctx", "'128,'", "empty item"});
  check_message({"--ctx", ",128"}, {"--ctx", "',128'", "empty item"});
  check_message({"--precision", "bf16,"}, {"--precision", "empty item"});
  check_message({"--ctx", "128", "--ctx", "256"}, {"--ctx given twice"});
  check_message({"--ctx=128", "--ctx", "256"}, {"--ctx given twice"});
  check_message({"--report", "--report"}, {"--report given twice"});
  check_message({"--json", "a.json", "--json", "b.json"}, {"--json given twice"});
  check_message({"--dump", "-"}, {"--dump", "'-'", "standard output"});
  check_message({"--batch", "0"}, {"--batch", "'0'"});
  check_message({"--batch", "four"}, {"--batch", "'four'", "not a whole number"});
  check_message({"--batch", "99999999999"}, {"--batch", "out of range"});
  check_message({"--steps", "0"}, {"--steps", "'0'"});
  check_message({"--warmup", "-1"}, {"--warmup", "'-1'"});
  check_message({"--precision", "fp16"}, {"--precision", "'fp16'", "fp32, tf32, bf16"});
  check_message({"--mode", "train"}, {"--mode", "'train'", "fwd, fwdbwd, step"});
  check_message({"--attention", "flash"}, {"--attention", "'flash'", "naive, fused, cudnn"});
  check_message({"--device", "tpu"}, {"--device", "'tpu'"});
  check_message({"--frobnicate"}, {"unknown flag", "--frobnicate"});
  check_message({"--ctx"}, {"--ctx", "missing value"});
  check_message({"--json", ""}, {"--json", "empty path"});
  check_message({"--report=yes"}, {"--report", "takes no value"});
  check_message({"--d-model", "64"}, {"--d-model", "only applies to --size custom"});
  check_message({"--size", "custom", "--d-model", "64", "--d-ff", "128", "--layers", "2"},
                {"--size custom needs --heads"});
  // 64 is not divisible by 5 heads: the model's own validation speaks.
  check_message({"--size", "custom", "--d-model", "64", "--d-ff", "128", "--layers", "2", "--heads", "5"},
                {"--size custom"});
}

TEST_CASE("--help is a switch and the usage text lists every flag") {
  CHECK(parse_options(std::vector<std::string>{"--help"}).help);
  CHECK(parse_options(std::vector<std::string>{"-h"}).help);
  const std::string usage = usage_text();
  for (const char* flag :
       {"--size",   "--ctx",         "--batch", "--warmup", "--steps",       "--mode",         "--precision",
        "--device", "--json",        "--csv",   "--dump",   "--torch-jsonl", "--warmup-study", "--loss-curve",
        "--report", "--report-json", "--trace", "--graph",  "--eager",       "--help",         "--attention"})
    CHECK_MESSAGE(contains(usage, flag), flag);
}
