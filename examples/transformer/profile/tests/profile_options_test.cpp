// profile/tests/profile_options_test.cpp: transformer_profile's flags, and
// the ones it hands to transformer_bench's parser.
#include <doctest/doctest.h>

#include "harness/run_flags.hpp"
#include "profile/profile_options.hpp"

using namespace transformer;
using namespace transformer::profile;
using transformer::harness::UsageError;

TEST_CASE("defaults: small and large, ctx 128-1024, bf16, the bench protocol") {
  const ProfileOptions options = parse_profile_options({});
  CHECK(options.sizes == std::vector<std::string>{"small", "large"});
  CHECK(options.contexts == std::vector<int>{128, 256, 512, 1024});
  CHECK(options.precisions == std::vector<Precision>{Precision::bf16});
  CHECK(options.batch == 4);
  CHECK(options.warmup == 5);
  CHECK(options.steps == 10);
  CHECK(options.out_dir.empty());
  CHECK_FALSE(options.memory_table);
  CHECK_FALSE(options.trace);
  CHECK_FALSE(options.graph);
}

TEST_CASE("shared flags are parsed as transformer_bench parses them") {
  const ProfileOptions options = parse_profile_options(
      {"--size", "small", "--ctx=256,512", "--precision", "fp32,bf16", "--batch", "2", "--warmup=1",
       "--steps", "3", "--seed", "7", "--out", "results", "--memory-table", "--trace", "--graph"});
  CHECK(options.sizes == std::vector<std::string>{"small"});
  CHECK(options.contexts == std::vector<int>{256, 512});
  CHECK(options.precisions == std::vector<Precision>{Precision::fp32, Precision::bf16});
  CHECK(options.attentions.empty());  // each configuration's default
  CHECK(parse_profile_options({"--attention", "naive,fused"}).attentions ==
        std::vector<Attention>{Attention::naive, Attention::fused});
  CHECK(options.batch == 2);
  CHECK(options.warmup == 1);
  CHECK(options.steps == 3);
  CHECK(options.seed == 7);
  CHECK(options.out_dir == "results");
  CHECK(options.memory_table);
  CHECK(options.trace);
  CHECK(options.graph);
  CHECK(parse_profile_options({"--out=dir"}).out_dir == "dir");
  CHECK(parse_profile_options({"-h"}).help);
}

TEST_CASE("bad flags are usage errors") {
  CHECK_THROWS_AS(parse_profile_options({"--mode", "fwd"}), UsageError);  // the profile runs both modes
  CHECK_THROWS_AS(parse_profile_options({"--json", "x.json"}), UsageError);
  CHECK_THROWS_AS(parse_profile_options({"--trace"}), UsageError);  // needs --out
  CHECK_THROWS_AS(parse_profile_options({"--out"}), UsageError);
  CHECK_THROWS_AS(parse_profile_options({"--out="}), UsageError);
  CHECK_THROWS_AS(parse_profile_options({"--memory-table=yes"}), UsageError);
  CHECK_THROWS_AS(parse_profile_options({"--ctx", "0"}), UsageError);
  CHECK_THROWS_AS(parse_profile_options({"--ctx"}), UsageError);
  CHECK_THROWS_AS(parse_profile_options({"--size", "huge"}), UsageError);
  CHECK_THROWS_AS(parse_profile_options({"--precision", "fp8"}), UsageError);
  CHECK_THROWS_AS(parse_profile_options({"--attention", "flash"}), UsageError);
  CHECK_THROWS_AS(parse_profile_options({"--steps", "0"}), UsageError);
  CHECK_THROWS_AS(parse_profile_options({"stray"}), UsageError);
}

TEST_CASE("--idle-study: transformer_bench's default GPU sweep, narrowed by the shared lists and --mode") {
  const ProfileOptions options = parse_profile_options({"--idle-study"});
  CHECK(options.idle_study);
  CHECK(options.sizes == std::vector<std::string>{"small"});
  CHECK(options.contexts == std::vector<int>{128, 256, 512, 1024});
  CHECK(options.precisions == std::vector<Precision>{Precision::fp32, Precision::bf16});
  CHECK(options.modes == std::vector<Mode>{Mode::fwd, Mode::fwdbwd, Mode::step});
  const ProfileOptions narrowed = parse_profile_options({"--idle-study", "--ctx", "128", "--mode", "step"});
  CHECK(narrowed.contexts == std::vector<int>{128});
  CHECK(narrowed.modes == std::vector<Mode>{Mode::step});
  CHECK(narrowed.precisions == std::vector<Precision>{Precision::fp32, Precision::bf16});
  CHECK_THROWS_AS(parse_profile_options({"--idle-study", "--graph"}), UsageError);
  CHECK_THROWS_AS(parse_profile_options({"--idle-study", "--memory-table"}), UsageError);
  CHECK_THROWS_AS(parse_profile_options({"--idle-study=yes"}), UsageError);
  CHECK_THROWS_AS(parse_profile_options({"--idle-study", "--mode", "train"}), UsageError);
}

TEST_CASE(
    "--memory-timeline: the 2.7B model at ctx 128 and 512, one warm-up and one timed step, unless told") {
  const ProfileOptions options = parse_profile_options({"--memory-timeline", "--out", "dir"});
  CHECK(options.memory_timeline);
  CHECK(options.sizes == std::vector<std::string>{"2.7B"});
  CHECK(options.contexts == std::vector<int>{128, 512});
  CHECK(options.precisions == std::vector<Precision>{Precision::bf16});
  CHECK(options.warmup == 1);
  CHECK(options.steps == 1);
  CHECK(options.batch == 4);

  const ProfileOptions told = parse_profile_options(
      {"--memory-timeline", "--out=dir", "--size", "small", "--ctx=256", "--warmup", "0", "--steps=2"});
  CHECK(told.sizes == std::vector<std::string>{"small"});
  CHECK(told.contexts == std::vector<int>{256});
  CHECK(told.warmup == 0);
  CHECK(told.steps == 2);

  CHECK_FALSE(parse_profile_options({}).memory_timeline);
  CHECK(parse_profile_options({"--size", "small"}).warmup == 5);  // the defaults change only with the flag
}

TEST_CASE("--memory-timeline needs --out and runs on its own") {
  CHECK_THROWS_AS(parse_profile_options({"--memory-timeline"}), UsageError);
  CHECK_THROWS_AS(parse_profile_options({"--memory-timeline=yes", "--out", "dir"}), UsageError);
  CHECK_THROWS_AS(parse_profile_options({"--memory-timeline", "--out", "dir", "--memory-table"}), UsageError);
  CHECK_THROWS_AS(parse_profile_options({"--memory-timeline", "--out", "dir", "--trace"}), UsageError);
  CHECK_THROWS_AS(parse_profile_options({"--memory-timeline", "--out", "dir", "--graph"}), UsageError);
  CHECK_THROWS_AS(parse_profile_options({"--memory-timeline", "--out", "dir", "--idle-study"}), UsageError);
  CHECK_THROWS_AS(parse_profile_options({"--memory-timeline", "--out", "dir", "--ctx", "0"}), UsageError);
  CHECK(profile_usage_text().find("--memory-timeline") != std::string::npos);
}

TEST_CASE(
    "--counters: small and large at ctx 128, one warm-up and two timed steps, unless told; on its own") {
  const ProfileOptions options = parse_profile_options({"--counters", "--out", "dir"});
  CHECK(options.counters);
  CHECK(options.sizes == std::vector<std::string>{"small", "large"});
  CHECK(options.contexts == std::vector<int>{128});
  CHECK(options.warmup == 1);
  CHECK(options.steps == 2);
  const ProfileOptions told = parse_profile_options({"--counters", "--out=dir", "--ctx=512", "--steps", "4"});
  CHECK(told.contexts == std::vector<int>{512});
  CHECK(told.steps == 4);
  CHECK_THROWS_WITH_AS(parse_profile_options({"--counters"}), doctest::Contains("needs --out"), UsageError);
  CHECK_THROWS_WITH_AS(parse_profile_options({"--counters", "--out", "d", "--trace"}),
                       doctest::Contains("on its own"), UsageError);
  CHECK_THROWS_WITH_AS(parse_profile_options({"--counters", "--out", "d", "--memory-timeline"}),
                       doctest::Contains("on its own"), UsageError);
  CHECK_FALSE(parse_profile_options({}).counters);
}
