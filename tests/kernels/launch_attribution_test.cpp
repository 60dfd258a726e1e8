// adopt_by_launch_time on a hand-made report: kernels launched by a thread
// without scopes go to the deepest scope instance, on any thread, open at
// their launch; records that have a scope, belong to graph work or have no
// launch time stay as they are.
#include <doctest/doctest.h>

#include <gpuprof/launch_attribution.hpp>

#include <cstdint>
#include <string>

using namespace gpuprof;

namespace {
ScopeNode node(const std::string& path, int depth) {
  ScopeNode n;
  n.path = path;
  n.depth = depth;
  return n;
}

ScopeInstance instance(std::uint64_t id, int node_index, std::int64_t begin, std::int64_t end) {
  ScopeInstance i;
  i.id = id;
  i.node = node_index;
  i.host_begin_ns = begin;
  i.host_end_ns = end;
  return i;
}

KernelRecord launched_at(std::int64_t launch_ns, std::uint64_t scope_instance = 0) {
  KernelRecord k;
  k.name = "k" + std::to_string(launch_ns);
  k.launch_ns = launch_ns;
  k.start_ns = launch_ns + 5;
  k.end_ns = launch_ns + 10;
  k.scope_instance = scope_instance;
  return k;
}
}  // namespace

TEST_CASE("kernels launched outside scopes go to the deepest scope open at their launch") {
  Report report;
  report.nodes = {node("step", 0), node("step/forward", 1), node("step/backward", 1)};
  // step 100..1000 holds forward 200..400 and backward 500..900
  report.instances = {instance(1, 0, 100, 1000), instance(2, 1, 200, 400), instance(3, 2, 500, 900)};
  report.kernels = {launched_at(600),     // inside backward: the deepest open there
                    launched_at(300, 2),  // already charged by its own thread: kept
                    launched_at(450),     // between forward and backward: step
                    launched_at(50),      // before any scope: none
                    launched_at(950),     // after backward ended, step still open
                    launched_at(0)};      // no launch time: left alone
  report.kernels.push_back(launched_at(700));
  report.kernels.back().scope_node = 1;  // graph work charged to its capture node: not an orphan

  CHECK(adopt_by_launch_time(report) == 3);
  CHECK(report.kernels[0].scope_instance == 3);
  CHECK(report.kernels[1].scope_instance == 2);
  CHECK(report.kernels[2].scope_instance == 1);
  CHECK(report.kernels[3].scope_instance == 0);
  CHECK(report.kernels[4].scope_instance == 1);
  CHECK(report.kernels[5].scope_instance == 0);
  CHECK(report.kernels[6].scope_instance == 0);
}

TEST_CASE("an instance whose node left the report adopts nothing") {
  Report report;
  report.nodes = {node("step", 0)};
  report.instances = {instance(1, 0, 0, 1000), instance(2, -1, 100, 200)};
  report.kernels = {launched_at(150)};
  CHECK(adopt_by_launch_time(report) == 1);
  CHECK(report.kernels[0].scope_instance == 1);
}
