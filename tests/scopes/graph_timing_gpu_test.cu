// Scopes captured into CUDA graphs (detail/graph_timing.hpp) on a real GPU:
// every replay of every captured scope instance is a sample with the right
// duration, the report matches the eager one row by row, replays overwritten
// before being read are counted lost, memory does not grow with replays,
// graph updates and overlapping instantiations. Skipped (exit 77) without a
// device.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <optional>
#include <string>

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
  // Replays land on the host clock in launch order, nested inside their step.
  REQUIRE(replayed.instances.size() == 6 * replays);
  for (const auto& instance : replayed.instances) {
    CHECK(instance.gpu_ms >= 0);
    CHECK(instance.host_end_ns >= instance.host_begin_ns);
  }
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
  CHECK(report.timing_note.find(std::to_string(launches - ring) + " timing(s) of CUDA graph replays lost") == 0);
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
  static gpuprof::detail::CallSite site;
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
