// CPU tests of ddp/: buckets, flags, launcher, results.
#include <doctest/doctest.h>

#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdlib>
#include <thread>
#include <unistd.h>

#include "ddp/buckets.hpp"
#include "ddp/launcher.hpp"
#include "ddp/ddp_options.hpp"
#include "ddp/ddp_results.hpp"
#include "support/json_parse.hpp"
#include "support/temporary_directory.hpp"

using namespace transformer;
using namespace transformer::ddp;

namespace {

bool same(const std::vector<GradientRange>& got, const std::vector<GradientRange>& want) {
  if (got.size() != want.size()) return false;
  for (std::size_t i = 0; i < got.size(); ++i)
    if (got[i].begin != want[i].begin || got[i].end != want[i].end) return false;
  return true;
}

// Sets (or clears, for nullptr) an environment variable for one test.
struct ScopedEnv {
  std::string name;
  ScopedEnv(const char* n, const char* value) : name(n) {
    if (value) setenv(n, value, 1);
    else unsetenv(n);
  }
  ~ScopedEnv() { unsetenv(name.c_str()); }
};

}  // namespace

TEST_CASE("buckets close when they reach the cap, the rest is the last bucket") {
  // Ranges of 30, 20, 40, 10 elements announced top-down over [0, 100).
  const std::vector<GradientRange> ready = {{70, 100}, {50, 70}, {10, 50}, {0, 10}};
  CHECK(same(plan_buckets(ready, 100, 50), {{50, 100}, {0, 50}}));
  CHECK(same(plan_buckets(ready, 100, 45), {{50, 100}, {0, 50}}));
  CHECK(same(plan_buckets(ready, 100, 25), {{70, 100}, {10, 70}, {0, 10}}));
  CHECK(same(plan_buckets(ready, 100, 1), ready));          // one bucket per range
  CHECK(same(plan_buckets(ready, 100, 1000), {{0, 100}}));  // everything at the end
}

TEST_CASE("a bucket planner refuses gaps, overlaps and unfinished backward passes") {
  BucketPlanner planner(100, 50);
  CHECK_THROWS_AS(planner.add({60, 90}), std::logic_error);  // must end at 100
  CHECK_FALSE(planner.add({80, 100}));
  CHECK_THROWS_AS(planner.add({70, 75}), std::logic_error);  // gap
  CHECK_THROWS_AS(planner.add({80, 80}), std::logic_error);  // empty
  CHECK_THROWS_AS(planner.finish(), std::logic_error);       // [0, 80) never came
  CHECK_THROWS_AS(BucketPlanner(0, 1), std::invalid_argument);
  CHECK_THROWS_AS(BucketPlanner(1, 0), std::invalid_argument);
}

TEST_CASE("a planner starts over after each backward") {
  BucketPlanner planner(10, 100);
  for (int pass = 0; pass < 2; ++pass) {
    CHECK_FALSE(planner.add({4, 10}));
    CHECK_FALSE(planner.add({0, 4}));
    const auto last = planner.finish();
    REQUIRE(last);
    CHECK(last->begin == 0);
    CHECK(last->end == 10);
  }
}

TEST_CASE("the backend's ranges cover the layout top-down, one per block") {
  const ModelConfig tiny = *named_size("tiny");
  const ParameterLayout layout(tiny);
  const std::vector<GradientRange> ranges = backward_gradient_ranges(tiny, layout.total + 8);
  REQUIRE(ranges.size() == static_cast<std::size_t>(tiny.layers) + 3);
  CHECK(ranges.front().begin == layout.find("lm_head").offset);
  CHECK(ranges.front().end == layout.total + 8);  // the padding goes with the lm_head
  CHECK(ranges[1].begin == layout.find("final_norm").offset);
  CHECK(ranges[2].begin == layout.block_offset(tiny.layers - 1));
  CHECK(ranges.back().begin == 0);
  CHECK(ranges.back().end == layout.block_offset(0));
  // Adjacent and descending: a planner accepts them, and a small cap splits them.
  CHECK(plan_buckets(ranges, layout.total + 8, layout.total + 8).size() == 1);
  CHECK(plan_buckets(ranges, layout.total + 8, 64 * 1024).size() > 2);
  CHECK_THROWS_AS(backward_gradient_ranges(tiny, layout.total - 1), std::invalid_argument);
}

TEST_CASE("bucket caps in MiB become gradient elements (fp32 or bf16)") {
  CHECK(bucket_cap_elements(25, 4) == 25u * 1024 * 1024 / 4);
  CHECK(bucket_cap_elements(25, 2) == 25u * 1024 * 1024 / 2);
  CHECK(bucket_cap_elements(1e-9, 4) == 1);
}

TEST_CASE("transformer_ddp's flags") {
  const ScopedEnv rank("RANK", nullptr), id("GPUPROF_DDP_ID_FILE", nullptr);
  const DdpOptions defaults = parse_ddp_options({});
  CHECK(defaults.gpus == 0);
  CHECK_FALSE(defaults.launched_rank);
  const RunConfig config = rank_run_config(defaults);
  CHECK(config.model.name == "small");
  CHECK(config.ctx == 512);
  CHECK(config.precision == Precision::bf16);
  CHECK(config.mode == Mode::step);

  const DdpOptions options =
      parse_ddp_options({"--gpus", "2", "--size", "large", "--ctx=256", "--precision", "fp32", "--bucket-mb",
                         "4", "--profile", "--reports", "out", "--batch", "3"});
  CHECK(options.gpus == 2);
  CHECK(options.bucket_mb == 4);
  CHECK(options.profile);
  CHECK(options.report_dir == "out");
  CHECK(rank_run_config(options).batch == 3);
  CHECK(rank_run_config(options).attention == Attention::naive);

  using harness::UsageError;
  CHECK_THROWS_AS(parse_ddp_options({"--gpus", "0"}), UsageError);
  CHECK_THROWS_AS(parse_ddp_options({"--gpus", "two"}), UsageError);
  CHECK_THROWS_AS(parse_ddp_options({"--size", "small,large"}), UsageError);
  CHECK_THROWS_AS(parse_ddp_options({"--mode", "fwd"}), UsageError);
  CHECK_THROWS_AS(parse_ddp_options({"--device", "cpu"}), UsageError);
  CHECK_THROWS_AS(parse_ddp_options({"--bucket-mb", "0"}), UsageError);
  CHECK_THROWS_AS(parse_ddp_options({"--bucket-mb", "x"}), UsageError);
  CHECK_THROWS_AS(parse_ddp_options({"--precision", "fp32", "--attention", "fused"}), UsageError);
  CHECK_THROWS_AS(parse_ddp_options({"--id-file", "x"}), UsageError);  // only for launched ranks
  CHECK_THROWS_AS(parse_ddp_options({"--reports", "-"}), UsageError);  // a directory, not stdout
  CHECK_THROWS_AS(parse_ddp_options({"--ctx", "512,"}), UsageError);
  CHECK_THROWS_AS(parse_ddp_options({"--steps", "1", "--steps", "2"}), UsageError);
  CHECK(parse_ddp_options({"--help"}).help);
  CHECK(parse_ddp_options({"-h"}).help);
}

TEST_CASE("ranks started by another launcher: RANK, WORLD_SIZE, LOCAL_RANK and the id file") {
  const ScopedEnv id("GPUPROF_DDP_ID_FILE", nullptr), local("LOCAL_RANK", nullptr);
  {
    const ScopedEnv rank("RANK", "1"), world("WORLD_SIZE", "2");
    const DdpOptions options = parse_ddp_options({"--id-file", "/tmp/id"});
    REQUIRE(options.launched_rank);
    CHECK(options.launched_rank->rank == 1);
    CHECK(options.launched_rank->world_size == 2);
    CHECK(options.launched_rank->local_rank == 1);                // defaults to the rank
    CHECK_THROWS_AS(parse_ddp_options({}), harness::UsageError);  // no id file
    CHECK_THROWS_AS(parse_ddp_options({"--id-file", "/tmp/id", "--gpus", "2"}), harness::UsageError);
    const ScopedEnv from_env("GPUPROF_DDP_ID_FILE", "/tmp/env-id");
    CHECK(parse_ddp_options({}).id_file == "/tmp/env-id");
  }
  {
    const ScopedEnv rank("RANK", "2"), world("WORLD_SIZE", "2");
    CHECK_THROWS_AS(parse_ddp_options({"--id-file", "x"}), harness::UsageError);
  }
  {
    const ScopedEnv rank("RANK", "5"), world("WORLD_SIZE", "2");
    try {
      parse_ddp_options({"--id-file", "x"});
      FAIL("RANK outside WORLD_SIZE was accepted");
    } catch (const harness::UsageError& error) {
      CHECK(std::string(error.what()) == "RANK 5 outside WORLD_SIZE 2");
    }
  }
  {
    const ScopedEnv rank("RANK", "0"), world("WORLD_SIZE", nullptr);
    CHECK_THROWS_AS(parse_ddp_options({}), harness::UsageError);
  }
  {
    const ScopedEnv rank("RANK", "0"), world("WORLD_SIZE", "1");  // one rank needs no id file
    CHECK(parse_ddp_options({}).launched_rank->world_size == 1);
  }
}

TEST_CASE("forked ranks pass rank 0's id to every other rank") {
  LaunchOptions launch;
  launch.world = 4;
  const std::string id(128, 'x');
  const int status = launch_forked(launch, [&](int rank, IdChannel& ids) {
    if (rank == 0) {
      ids.publish(id);
      return 0;
    }
    return ids.receive(id.size()) == id ? 0 : 3;
  });
  CHECK(status == 0);
}

TEST_CASE("a failing rank stops the others instead of leaving them waiting") {
  LaunchOptions launch;
  launch.world = 3;
  launch.grace = std::chrono::milliseconds(200);
  const auto start = std::chrono::steady_clock::now();
  const int status = launch_forked(launch, [](int rank, IdChannel& ids) {
    if (rank == 0) throw std::runtime_error("rank 0 fails before sending the id");
    (void)ids.receive(128);  // end of file: rank 0 died
    pause();                 // a rank stuck in a collective; the launcher must kill it
    return 0;
  });
  CHECK(status == 1);
  CHECK(std::chrono::steady_clock::now() - start < std::chrono::seconds(10));
}

TEST_CASE("a run past its timeout is terminated") {
  LaunchOptions launch;
  launch.world = 2;
  launch.timeout = std::chrono::milliseconds(300);
  launch.grace = std::chrono::milliseconds(100);
  const int status = launch_forked(launch, [](int, IdChannel&) {
    signal(SIGTERM, SIG_IGN);  // only SIGKILL ends this one
    for (;;) pause();
    return 0;
  });
  CHECK(status == 1);
}

TEST_CASE("questions answered in a child process") {
  CHECK(run_in_child([] { return std::string("42"); }) == "42");
  CHECK_THROWS_WITH_AS(run_in_child([]() -> std::string { throw std::runtime_error("no GPU"); }), "no GPU",
                       std::runtime_error);
}

TEST_CASE("the id file: written once, read by the others, removed after joining") {
  gpuprof_test::TemporaryDirectory dir;
  const std::string path = dir.file("nccl.id");
  FileIdChannel rank0(path, std::chrono::milliseconds(100)), rank1(path, std::chrono::milliseconds(100));
  CHECK_THROWS_AS(rank1.receive(4), std::runtime_error);  // nothing yet: times out
  rank0.publish("abcd");
  CHECK(rank1.receive(4) == "abcd");
  CHECK_THROWS_AS(rank1.receive(5), std::runtime_error);       // wrong size
  CHECK_THROWS_AS(rank0.publish("abcd"), std::runtime_error);  // stale file refused
  rank0.everyone_joined();
  CHECK(dir.entries().empty());
}

TEST_CASE("results: the slowest rank sets the step, JSON nulls what was not profiled") {
  DdpResults results;
  results.config.model = *named_size("tiny");
  results.config.batch = 4;
  results.config.ctx = 128;
  results.world = 2;
  RankFigures fast, slow;
  fast.step_median_ms = 10;
  slow.step_median_ms = 20;
  fast.communication_ms = slow.communication_ms = NAN;
  fast.computation_ms = slow.computation_ms = fast.overlap_ms = slow.overlap_ms = NAN;
  results.ranks = {fast, slow};
  CHECK(results.step_ms() == 20);
  CHECK(results.tokens_per_s() == doctest::Approx(2 * 4 * 128 / 0.020));
  const RankFigures back = RankFigures::from_vector(slow.to_vector().data());
  CHECK(back.step_median_ms == 20);
  const auto json = gpuprof_test::parse_json(ddp_json(results));
  CHECK(json["schema"].as_string() == "gpuprof.transformer_ddp");
  CHECK(json["ranks"].size() == 2);
  CHECK(json["ranks"][1]["communication_ms"].is_null());
  CHECK(json["cudnn"].is_null());
  CHECK(ddp_table(results).find("tokens/s") != std::string::npos);
  results.device = "NVIDIA H200";
  results.cudnn = "9.14.0";
  CHECK(gpuprof_test::parse_json(ddp_json(results))["cudnn"].as_string() == "9.14.0");
  CHECK(ddp_table(results).find("MiB, NVIDIA H200 (cuDNN 9.14.0)\n") != std::string::npos);
}
