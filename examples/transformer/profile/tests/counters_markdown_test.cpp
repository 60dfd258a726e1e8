// profile/tests/counters_markdown_test.cpp: --counters' file names, markdown
// and JSON on a synthetic run with counters (no device).
#include <doctest/doctest.h>

#include <string>

#include "profile/counters_results.hpp"
#include "support/json_parse.hpp"

using namespace transformer;
using namespace transformer::profile;

namespace {

gpuprof::ScopeNode scope(const std::string& path, const std::string& name, int parent, int depth) {
  gpuprof::ScopeNode node;
  node.path = path;
  node.name = name;
  node.parent = parent;
  node.depth = depth;
  node.count = 2;
  return node;
}

gpuprof::CounterRange range(const std::string& name, double ns, double bytes, double bf16_flops) {
  return {name,
          {{gpuprof::metric::duration_ns, ns},
           {gpuprof::metric::dram_bytes_read, bytes},
           {"sm__ops_path_tensor_src_bf16_dst_fp32.sum", bf16_flops}}};
}

// The forward of a two-scope model: a GEMM right of the ridge (1000 FLOP/B),
// an RMSNorm far left of it (0.5 FLOP/B), which declares twice the FLOPs measured.
CountersResults synthetic_results() {
  CountersResults results;
  results.device = "NVIDIA H100";
  results.batch = 4;
  results.warmup = 1;
  results.steps = 2;
  results.ceilings.pipes = {{"tensor bf16", 800e12}};
  results.ceilings.dram_bytes_per_s = 2e12;
  CountersRun run;
  run.label = "small ctx 128 bf16 cudnn";
  run.slug = "small-ctx128-bf16-cudnn";
  run.mode = Mode::fwd;
  run.report.nodes = {scope("fwd", "fwd", -1, 0), scope("fwd/gemm", "gemm", 0, 1),
                      scope("fwd/rmsnorm", "rmsnorm", 0, 1)};
  run.report.nodes[2].work.flops = 1e9;  // per call; measured 1e9 over 2 calls: +100 %
  run.report.counters.metrics = {gpuprof::metric::duration_ns, gpuprof::metric::dram_bytes_read};
  run.report.counters.passes = 2;
  run.report.counters.scopes = {range("fwd/gemm", 1e6, 4e8, 4e11), range("fwd/rmsnorm", 1e6, 2e9, 1e9)};
  run.report.ceilings = results.ceilings;
  results.runs.push_back(run);
  CountersRun failed = run;
  failed.mode = Mode::step;
  failed.status = RunStatus::oom;
  results.runs.push_back(failed);
  return results;
}

}  // namespace

TEST_CASE("counters: file names carry the configuration and the mode") {
  CHECK(counters_file(synthetic_results().runs[0], "svg") == "counters-small-ctx128-bf16-cudnn-fwd.svg");
}

TEST_CASE(
    "counters: the markdown says which scope is memory- and which compute-bound, and how far from its roof") {
  const std::string text = counters_markdown(synthetic_results());
  CHECK(text.find("DRAM 2000 GB/s; tensor bf16 800.0 TFLOP/s (ridge 400.0 FLOP/B)") != std::string::npos);
  const auto row = [&](const std::string& path) {
    const std::size_t at = text.find("| " + path + " ");
    REQUIRE(at != std::string::npos);
    return text.substr(at, text.find('\n', at) - at);
  };
  CHECK(row("fwd/gemm").find("compute") != std::string::npos);
  CHECK(row("fwd/gemm").find("| 50.0 |") != std::string::npos);  // 400 of 800 TFLOP/s
  CHECK(row("fwd/rmsnorm").find("memory") != std::string::npos);
  CHECK(row("fwd/rmsnorm").find("| 100.0 |") != std::string::npos);  // 2 TB/s of 2 TB/s
  CHECK(row("fwd/rmsnorm").find("100.0 % (over 20 %)") != std::string::npos);
  CHECK(text.find("| fwd |") == std::string::npos);  // no counters: no row
  CHECK(text.find("![roofline](counters-small-ctx128-bf16-cudnn-fwd.svg)") != std::string::npos);
  CHECK(text.find("Not measured (oom)") != std::string::npos);
}

TEST_CASE("counters: the JSON holds the ceilings and each run's derived values per scope") {
  const gpuprof_test::Json json = gpuprof_test::parse_json(counters_json(synthetic_results()));
  CHECK(json["schema"].as_string() == "transformer_profile.counters");
  CHECK(json["ceilings"]["dram_bytes_per_s"].as_number() == 2e12);
  const gpuprof_test::Json& scopes = json["runs"][0]["scopes"];
  REQUIRE(scopes.size() == 2);
  CHECK(scopes[0]["path"].as_string() == "fwd/gemm");
  CHECK(scopes[0]["counters"]["bound"].as_string() == "compute");
  CHECK(scopes[1]["counters"]["bound"].as_string() == "memory");
  CHECK(scopes[1]["counters"]["declared_work_flagged"].as_bool());
  CHECK(json["runs"][1]["status"].as_string() == "oom");
  CHECK(json["runs"][0]["report"].as_string() == "counters-small-ctx128-bf16-cudnn-fwd.json");
}
