// Kernel capture inside CUDA graphs, on synthetic records: graph node ids
// map to the scope their node was captured in (through clones), the graph
// launch's own scope only gets what was captured outside every scope, and
// each launch of a graph is one execution of the scopes captured into it.
#include <doctest/doctest.h>

#include <gpuprof/detail/cupti_join.hpp>
#include <gpuprof/kernel_summary.hpp>

#include <string>
#include <unordered_set>
#include <vector>

using namespace gpuprof;

namespace {
KernelRecord graph_work(std::uint32_t launch, std::uint64_t node_id) {
  KernelRecord record;
  record.correlation_id = launch;
  record.graph_node_id = node_id;
  return record;
}
}  // namespace

TEST_CASE("graph nodes: created nodes keep their scope, clones follow their original") {
  detail::GraphNodeScopes nodes;
  nodes.add_created(100, 5);  // captured inside scope instance 5
  nodes.add_created(101, 6);
  nodes.add_created(102, 0);  // captured outside any scope
  nodes.add_clone(200, 100);  // cudaGraphInstantiate: the exec graph's nodes are clones
  nodes.add_clone(201, 101);
  nodes.add_clone(202, 102);
  nodes.add_clone(300, 200);  // a clone of a clone (a cloned graph, instantiated)
  nodes.add_clone(203, 999);  // original never seen: created before the capture began
  CHECK(nodes.scope_of(200) == 5);
  CHECK(nodes.scope_of(201) == 6);
  CHECK(nodes.scope_of(202) == 0);
  CHECK(nodes.scope_of(300) == 5);
  CHECK(nodes.scope_of(203) == 0);
  CHECK(nodes.scope_of(12345) == 0);

  // Whichever CUPTI reports first, a clone belongs where its original was
  // captured, never to the scope around the instantiation.
  nodes.add_clone(204, 100);
  nodes.add_created(204, 9);
  CHECK(nodes.scope_of(204) == 5);
  nodes.add_created(205, 9);
  nodes.add_clone(205, 101);
  CHECK(nodes.scope_of(205) == 6);
  nodes.add_created(206, 9);
  nodes.add_clone(206, 999);
  CHECK(nodes.scope_of(206) == 0);
}

TEST_CASE("join: graph work goes to its capture scope, else to the launch's scope") {
  detail::GraphNodeScopes nodes;
  nodes.add_created(100, 5);
  nodes.add_created(102, 0);
  nodes.add_clone(200, 100);
  nodes.add_clone(202, 102);
  detail::CorrelationTables tables;
  tables.add_external(50, 7);     // the first cudaGraphLaunch, inside scope instance 7
  tables.add_api_call(50, 5000);
  tables.add_external(51, 8);     // an eager launch inside scope instance 8
  tables.add_api_call(51, 6000);
  tables.add_api_call(52, 7000);  // the second cudaGraphLaunch, outside any scope

  std::vector<KernelRecord> records = {graph_work(50, 200), graph_work(50, 202), graph_work(50, 777),
                                       graph_work(51, 0),   graph_work(52, 200), graph_work(52, 202)};
  CHECK(detail::join_correlations(records, tables, nodes) == 1);
  CHECK(records[0].scope_instance == 5);  // captured in 5: not swallowed by the launch's scope 7
  CHECK(records[0].graph_launch == 50);
  CHECK(records[0].launch_ns == 5000);
  CHECK(records[1].scope_instance == 7);  // captured outside any scope: the launch's scope
  CHECK(records[1].graph_launch == 0);
  CHECK(records[2].scope_instance == 7);  // node never seen: the launch's scope too
  CHECK(records[2].graph_launch == 0);
  CHECK(records[3].scope_instance == 8);  // eager
  CHECK(records[3].graph_launch == 0);
  CHECK(records[4].scope_instance == 5);  // the capture scope, whatever surrounds the launch
  CHECK(records[4].graph_launch == 52);
  CHECK(records[4].launch_ns == 7000);
  CHECK(records[5].scope_instance == 0);  // captured and launched outside every scope
  CHECK(records[5].graph_launch == 0);

  SUBCASE("a capture scope the report no longer holds falls back to the launch's scope") {
    const std::unordered_set<std::uint64_t> reported = {7, 8};
    CHECK(detail::join_correlations(records, tables, nodes, &reported) == 2);
    CHECK(records[0].scope_instance == 7);
    CHECK(records[0].graph_launch == 0);
    CHECK(records[4].scope_instance == 0);
    CHECK(records[3].scope_instance == 8);
  }
}

namespace {
ScopeNode node(const std::string& path, int parent, int depth, std::uint64_t count) {
  ScopeNode n;
  n.path = path;
  n.name = path.substr(path.rfind('/') == std::string::npos ? 0 : path.rfind('/') + 1);
  n.parent = parent;
  n.depth = depth;
  n.count = count;
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

KernelRecord joined(const std::string& name, std::uint64_t scope, std::uint32_t launch, std::int64_t start,
                    std::int64_t end) {
  KernelRecord k;
  k.name = name;
  k.base_name = name;
  k.category = name == "gemm" ? "gemm" : "elementwise";
  k.scope_instance = scope;
  k.graph_launch = launch;
  k.graph_node_id = launch != 0 ? 1 : 0;
  k.start_ns = start;
  k.end_ns = end;
  return k;
}

//   step#1 [layer#2] captured into a graph (host 0..100), launched twice
//   (launches 50 and 52) inside replay#3, which also runs one eager kernel and
//   one graph kernel captured outside any scope.
Report graph_report() {
  Report r;
  r.nodes = {node("step", -1, 0, 1), node("step/layer", 0, 1, 1), node("replay", -1, 0, 1)};
  r.instances = {instance(1, 0, 0, 100), instance(2, 1, 10, 90), instance(3, 2, 200, 10000)};
  r.kernels = {joined("add", 1, 50, 900, 1000),   joined("gemm", 2, 50, 1000, 1100), joined("gemm", 2, 50, 1100, 1300),
               joined("add", 1, 52, 1900, 2000),  joined("gemm", 2, 52, 2000, 2100), joined("gemm", 2, 52, 2100, 2300),
               joined("add", 3, 0, 3000, 3050),   joined("add", 3, 0, 3100, 3200)};
  return r;
}
}  // namespace

TEST_CASE("each graph launch is one execution of the scopes captured into it") {
  const Report r = graph_report();
  const std::vector<InstanceGpuTime> times = instance_gpu_times(r);
  REQUIRE(times.size() == 5);  // step and layer once per launch, replay once
  CHECK(times[0].instance_id == 1);
  CHECK(times[0].graph_launch == 50);
  CHECK(times[0].activities == 3);
  CHECK(times[0].projection_ns == 400);
  CHECK(times[0].summed_ns == 400);
  CHECK(times[1].instance_id == 1);
  CHECK(times[1].graph_launch == 52);
  CHECK(times[1].projection_ns == 400);  // not 1400: the two replays stay apart
  CHECK(times[2].instance_id == 2);
  CHECK(times[2].node == 1);
  CHECK(times[2].graph_launch == 50);
  CHECK(times[2].activities == 2);
  CHECK(times[2].projection_ns == 300);
  CHECK(times[3].graph_launch == 52);
  CHECK(times[4].instance_id == 3);
  CHECK(times[4].graph_launch == 0);
  CHECK(times[4].activities == 2);  // its eager kernel and the graph kernel captured outside scopes
  CHECK(times[4].projection_ns == 200);
  CHECK(times[4].summed_ns == 150);

  const std::vector<ScopeGpuSummary> summaries = scope_gpu_summary(r);
  REQUIRE(summaries.size() == 3);
  CHECK(summaries[0].projection_ns == 800);
  CHECK(summaries[1].projection_ns == 600);
  CHECK(summaries[1].activities == 4);
  CHECK(summaries[1].categories[0].category == "gemm");
  CHECK(summaries[1].categories[0].percent == doctest::Approx(100));
  CHECK(summaries[2].projection_ns == 200);

  // The launch's scope does not swallow what was captured elsewhere.
  const std::vector<KernelSummaryRow> replay = kern_sum(r, "replay");
  REQUIRE(replay.size() == 1);
  CHECK(replay[0].instances == 2);
  const std::vector<KernelSummaryRow> layer = kern_sum(r, "step/layer");
  REQUIRE(layer.size() == 1);
  CHECK(layer[0].name == "gemm");
  CHECK(layer[0].instances == 4);
}
