// Scopes captured into CUDA graphs (detail/graph_timing.hpp) on a real GPU:
// every replay of every captured scope instance is a sample with the right
// duration, the report matches the eager one row by row, replays overwritten
// before being read are counted lost, memory does not grow with replays,
// graph updates and overlapping instantiations. Skipped (exit 77) without a
// device.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <cuda_runtime_api.h>

#include <gpuprof/graph.hpp>
#include <gpuprof/profiler.hpp>
#include <gpuprof/scope.hpp>

#include "gpu_scope_helpers.cuh"

using namespace scope_tests;

namespace {

void spin(cudaStream_t stream, double microseconds) {
  spin_kernel<<<1, 1, 0, stream>>>(static_cast<std::uint64_t>(microseconds * 1000));
  check(cudaGetLastError());
}

// A captured graph and one executable instance of it.
struct Graph {
  template <class Fn>
  Graph(cudaStream_t stream, Fn&& fn) {
    check(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal));
    fn();
    check(cudaStreamEndCapture(stream, &graph));
    check(cudaGraphInstantiate(&exec, graph, 0));
  }
  ~Graph() {
    cudaGraphExecDestroy(exec);
    cudaGraphDestroy(graph);
  }
  cudaGraph_t graph = nullptr;
  cudaGraphExec_t exec = nullptr;
};

// One training-step-like structure: known durations, nesting, a scope that
// runs twice per step.
void step(cudaStream_t stream) {
  GPUPROF_SCOPE("step", stream);
  {
    GPUPROF_SCOPE("forward", stream);
    for (int layer = 0; layer < 2; ++layer) {
      GPUPROF_SCOPE("layer", stream);
      spin(stream, 150);
    }
  }
  {
    GPUPROF_SCOPE("backward", stream);
    spin(stream, 400);
    GPUPROF_SCOPE("norm", stream);
    spin(stream, 50);
  }
}

// Replays land on the host clock in launch order, each scope instance inside
// its parent's. All of a report's replays share one clock offset and the
// stamps of one replay run in stream order, so these hold exactly:
//   - each instance's interval is its GPU time (same stamps);
//   - the steps follow one another, none overlapping the next;
//   - each instance lies inside exactly one instance of its parent node;
//   - inside a step: forward (two layers, one after the other) ends before
//     backward begins, and backward's norm begins after backward's 400 us spin.
void check_replays_nest_in_launch_order(const gpuprof::Report& report, int replays) {
  using gpuprof::ScopeInstance;
  REQUIRE(report.instances.size() == 6 * static_cast<std::size_t>(replays));
  std::vector<std::vector<const ScopeInstance*>> of_node(report.nodes.size());
  for (const ScopeInstance& instance : report.instances) {
    REQUIRE(instance.node >= 0);
    of_node[static_cast<std::size_t>(instance.node)].push_back(&instance);
    CHECK(instance.host_end_ns >= instance.host_begin_ns);
    CHECK(instance.gpu_ms ==
          doctest::Approx(static_cast<double>(instance.host_end_ns - instance.host_begin_ns) / 1e6)
              .epsilon(1e-9));
  }
  const auto inside = [](const ScopeInstance& inner, const ScopeInstance& outer) {
    return outer.host_begin_ns <= inner.host_begin_ns && inner.host_end_ns <= outer.host_end_ns;
  };
  for (std::size_t node = 0; node < report.nodes.size(); ++node) {
    const int parent = report.nodes[node].parent;
    if (parent < 0) continue;
    for (const ScopeInstance* child : of_node[node]) {
      const auto& parents = of_node[static_cast<std::size_t>(parent)];
      const auto holders = std::count_if(parents.begin(), parents.end(),
                                         [&](const ScopeInstance* p) { return inside(*child, *p); });
      INFO(report.nodes[node].path << " instance " << child->id);
      CHECK(holders == 1);
    }
  }
  const auto instances_of = [&](const std::string& path) {
    std::vector<const ScopeInstance*> found =
        of_node[static_cast<std::size_t>(&node_at(report, path) - report.nodes.data())];
    std::sort(found.begin(), found.end(), [](const ScopeInstance* a, const ScopeInstance* b) {
      return a->host_begin_ns < b->host_begin_ns;
    });
    return found;
  };
  const auto steps = instances_of("step");
  REQUIRE(steps.size() == static_cast<std::size_t>(replays));
  for (std::size_t i = 1; i < steps.size(); ++i) CHECK(steps[i - 1]->host_end_ns <= steps[i]->host_begin_ns);
  const auto forward = instances_of("step/forward"), layer = instances_of("step/forward/layer"),
             backward = instances_of("step/backward"), norm = instances_of("step/backward/norm");
  REQUIRE(forward.size() == steps.size());
  REQUIRE(layer.size() == 2 * steps.size());
  REQUIRE(backward.size() == steps.size());
  REQUIRE(norm.size() == steps.size());
  for (std::size_t i = 0; i < steps.size(); ++i) {
    INFO("replay " << i);
    CHECK(inside(*forward[i], *steps[i]));
    CHECK(inside(*layer[2 * i], *forward[i]));
    CHECK(inside(*layer[2 * i + 1], *forward[i]));
    CHECK(layer[2 * i]->host_end_ns <= layer[2 * i + 1]->host_begin_ns);
    CHECK(inside(*backward[i], *steps[i]));
    CHECK(forward[i]->host_end_ns <= backward[i]->host_begin_ns);
    CHECK(inside(*norm[i], *backward[i]));
    CHECK(norm[i]->host_begin_ns - backward[i]->host_begin_ns >= 400000);
  }
}

}  // namespace

TEST_CASE("captured scopes time every replay, and the report matches the eager one row by row") {
  StreamOwner owner;
  auto& profiler = gpuprof::profiler();
  REQUIRE(profiler.timing_source() == gpuprof::TimingSource::cuda_events);
  step(owner.stream);  // loads the kernels outside the measured runs
  check(cudaStreamSynchronize(owner.stream));
  constexpr int replays = 40;

  profiler.reset();
  for (int i = 0; i < replays; ++i) step(owner.stream);
  check(cudaStreamSynchronize(owner.stream));
  const gpuprof::Report eager = profiler.report();

  profiler.reset();
  const Graph graph(owner.stream, [&] { step(owner.stream); });
  for (int i = 0; i < replays; ++i) gpuprof::launch_graph(graph.exec, owner.stream);
  check(cudaStreamSynchronize(owner.stream));
  const gpuprof::Report replayed = profiler.report();

  CHECK(replayed.timing_note.empty());
  REQUIRE(replayed.nodes.size() == eager.nodes.size());
  for (std::size_t i = 0; i < eager.nodes.size(); ++i) {
    const gpuprof::ScopeNode& e = eager.nodes[i];
    const gpuprof::ScopeNode& g = replayed.nodes[i];
    INFO(e.path << ": eager " << e.gpu_ms.median << " ms, graph " << g.gpu_ms.median << " ms");
    CHECK(g.path == e.path);
    CHECK(g.count == e.count);  // replays x instances per replay
    CHECK(g.gpu_ms.n == g.count);
    // Same work, same clock: medians within 3 % + 15 us (the stamps are
    // kernels, the events are not).
    CHECK(std::abs(g.gpu_ms.median - e.gpu_ms.median) <= 0.03 * e.gpu_ms.median + 0.015);
  }
  CHECK(node_at(replayed, "step/forward/layer").count == 2 * replays);
  const auto& layer = node_at(replayed, "step/forward/layer");
  CHECK(layer.gpu_ms.min >= 0.150);
  CHECK(layer.gpu_ms.max <= 0.150 * 1.03 + 0.010);
  const auto& backward = node_at(replayed, "step/backward");
  CHECK(backward.gpu_ms.min >= 0.450);  // 400 us, then its nested 50 us norm
  CHECK(node_at(replayed, "step").gpu_ms.min >= 0.750);
  check_replays_nest_in_launch_order(replayed, replays);
}

TEST_CASE("replays overwritten before being read are counted lost, and memory does not grow with replays") {
  StreamOwner owner;
  auto& profiler = gpuprof::profiler();
  profiler.reset();
  const Graph graph(owner.stream, [&] {
    GPUPROF_SCOPE("tiny", owner.stream);
    spin(owner.stream, 2);
  });
  auto& timings = gpuprof::detail::recorder().graph_timings();
  const std::size_t pinned = timings.pinned_bytes();
  const std::size_t sites = timings.sites();
  const std::uint64_t ring = gpuprof::detail::graph_replay_ring;
  const std::uint64_t launches = 3 * ring + 10;
  // cudaGraphLaunch, not launch_graph: nothing reads the ring until report().
  for (std::uint64_t i = 0; i < launches; ++i) check(cudaGraphLaunch(graph.exec, owner.stream));
  check(cudaStreamSynchronize(owner.stream));
  const auto report = profiler.report();
  const auto& tiny = node_at(report, "tiny");
  CHECK(tiny.count == ring);  // the last `ring` replays, each with its own time
  CHECK(tiny.gpu_ms.n == ring);
  CHECK(tiny.gpu_ms.min >= 0.002);
  CHECK(profiler.lost_graph_replays() == launches - ring);
  CHECK(report.timing_note.find(std::to_string(launches - ring) + " timing(s) of CUDA graph replays lost") ==
        0);
  CHECK(timings.pinned_bytes() == pinned);
  CHECK(timings.sites() == sites);

  // Read as they go (launch_graph), nothing is lost however many replays run.
  profiler.reset();
  CHECK(profiler.lost_graph_replays() == 0);
  for (std::uint64_t i = 0; i < launches; ++i) {
    gpuprof::launch_graph(graph.exec, owner.stream);
    if (i % 32 == 31) check(cudaStreamSynchronize(owner.stream));  // the GPU keeps up
  }
  check(cudaStreamSynchronize(owner.stream));
  const auto all = profiler.report();
  CHECK(node_at(all, "tiny").count == launches);
  CHECK(profiler.lost_graph_replays() == 0);
  CHECK(timings.pinned_bytes() == pinned);
}

TEST_CASE("an updated graph keeps timing its scopes; overlapping instances are refused by name") {
  StreamOwner owner;
  auto& profiler = gpuprof::profiler();
  profiler.reset();
  const auto body = [&](double microseconds) {
    GPUPROF_SCOPE("updated", owner.stream);
    spin(owner.stream, microseconds);
  };
  const Graph first(owner.stream, [&] { body(100); });
  for (int i = 0; i < 3; ++i) gpuprof::launch_graph(first.exec, owner.stream);
  {
    const Graph second(owner.stream, [&] { body(300); });
    cudaGraphExecUpdateResultInfo info{};
    check(cudaGraphExecUpdate(first.exec, second.graph, &info));
    for (int i = 0; i < 3; ++i) gpuprof::launch_graph(first.exec, owner.stream);
    check(cudaStreamSynchronize(owner.stream));
  }
  const auto updated = profiler.report();
  const auto& node = node_at(updated, "updated");
  CHECK(node.count == 6);
  CHECK(node.gpu_ms.min >= 0.100);
  CHECK(node.gpu_ms.min <= 0.100 * 1.03 + 0.010);
  CHECK(node.gpu_ms.max >= 0.300);
  CHECK(node.gpu_ms.max <= 0.300 * 1.03 + 0.010);

  // Two instantiations of one graph, one after the other: both are timed.
  profiler.reset();
  const Graph shared(owner.stream, [&] {
    GPUPROF_SCOPE("shared", owner.stream);
    spin(owner.stream, 1000);
  });
  cudaGraphExec_t twin = nullptr;
  check(cudaGraphInstantiate(&twin, shared.graph, 0));
  gpuprof::launch_graph(shared.exec, owner.stream);
  gpuprof::launch_graph(twin, owner.stream);
  check(cudaStreamSynchronize(owner.stream));
  CHECK(node_at(profiler.report(), "shared").count == 2);
  CHECK(profiler.lost_graph_replays() == 0);
  // At the same time on two streams: the second begin stamp finds the scope
  // open; those replays are dropped and the report says why.
  StreamOwner other;
  gpuprof::launch_graph(shared.exec, owner.stream);
  gpuprof::launch_graph(twin, other.stream);
  check(cudaDeviceSynchronize());
  const auto overlapped = profiler.report();
  CHECK(profiler.lost_graph_replays() >= 1);
  CHECK(overlapped.timing_note.find("ran concurrently with itself") != std::string::npos);
  cudaGraphExecDestroy(twin);
}

TEST_CASE("a captured scope that outlives its capture loses its GPU time and says why") {
  StreamOwner owner;
  auto& profiler = gpuprof::profiler();
  profiler.reset();
  static gpuprof::CallSite site;
  std::optional<gpuprof::Scope> outlived;
  cudaGraph_t graph = nullptr;
  check(cudaStreamBeginCapture(owner.stream, cudaStreamCaptureModeThreadLocal));
  outlived.emplace(site, "outlived", owner.stream);
  spin(owner.stream, 10);
  check(cudaStreamEndCapture(owner.stream, &graph));
  outlived.reset();  // no end stamp launched outside the capture
  cudaGraphExec_t exec = nullptr;
  check(cudaGraphInstantiate(&exec, graph, 0));
  gpuprof::launch_graph(exec, owner.stream);
  check(cudaStreamSynchronize(owner.stream));
  const auto report = profiler.report();
  CHECK(find_node(report, "outlived") == nullptr);
  CHECK(report.timing_note.find("closed after the capture ended") != std::string::npos);
  cudaGraphExecDestroy(exec);
  cudaGraphDestroy(graph);
}

TEST_CASE("NVTX-only mode records nothing, inside or outside a capture") {
  StreamOwner owner;
  auto& profiler = gpuprof::profiler();
  profiler.reset();
  profiler.set_nvtx_only(true);
  {
    GPUPROF_SCOPE("unrecorded", owner.stream);
    spin(owner.stream, 1);
  }
  const Graph graph(owner.stream, [&] {
    GPUPROF_SCOPE("unrecorded", owner.stream);
    spin(owner.stream, 1);
  });
  gpuprof::launch_graph(graph.exec, owner.stream);
  check(cudaStreamSynchronize(owner.stream));
  profiler.set_nvtx_only(false);
  CHECK(find_node(profiler.report(), "unrecorded") == nullptr);
}
