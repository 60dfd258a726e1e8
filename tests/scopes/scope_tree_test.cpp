// Scope trees: nesting, repeated entries, counts, run-time names, several
// threads at once, exceptions unwinding through scopes, reset, observers.
// Runs with whatever timing the machine offers; only the tree is asserted.
#include <doctest/doctest.h>

#include <atomic>
#include <cstdint>
#include <map>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include <gpuprof/profiler.hpp>
#include <gpuprof/scope.hpp>

namespace {

std::map<std::string, std::uint64_t> counts_by_path(const gpuprof::Report& report) {
  std::map<std::string, std::uint64_t> counts;
  for (const auto& node : report.nodes) counts[node.path] = node.count;
  return counts;
}

std::vector<std::string> paths_in_order(const gpuprof::Report& report) {
  std::vector<std::string> paths;
  for (const auto& node : report.nodes) paths.push_back(node.path);
  return paths;
}

// The innermost open scope of this thread; the root when the stack is empty.
std::uint32_t open_scope_node() { return gpuprof::detail::recorder().this_thread().current; }

void attention() { GPUPROF_SCOPE("attention"); }
void forward() {
  GPUPROF_SCOPE("forward");
  attention();
  attention();
}
void step() {
  GPUPROF_SCOPE("step");
  forward();
  GPUPROF_SCOPE("backward");
}

}  // namespace

TEST_CASE("nested and repeated scopes form one call tree with counts") {
  auto& profiler = gpuprof::profiler();
  profiler.reset();
  for (int i = 0; i < 3; ++i) step();
  const gpuprof::Report report = profiler.report();

  CHECK(paths_in_order(report) ==
        std::vector<std::string>{"step", "step/forward", "step/forward/attention", "step/backward"});
  const auto counts = counts_by_path(report);
  CHECK(counts.at("step") == 3);
  CHECK(counts.at("step/forward") == 3);
  CHECK(counts.at("step/forward/attention") == 6);
  CHECK(counts.at("step/backward") == 3);

  for (std::size_t i = 0; i < report.nodes.size(); ++i) {
    const auto& node = report.nodes[i];
    CHECK(node.host_ms.n == node.count);
    CHECK(node.host_ms.min >= 0);
    if (node.parent >= 0) {
      const auto& parent = report.nodes[static_cast<std::size_t>(node.parent)];
      CHECK(static_cast<std::size_t>(node.parent) < i);  // depth-first: parents first
      CHECK(node.depth == parent.depth + 1);
      CHECK(node.path == parent.path + "/" + node.name);
    } else {
      CHECK(node.depth == 0);
    }
  }

  REQUIRE(report.instances.size() == 15);
  for (std::size_t i = 1; i < report.instances.size(); ++i)
    CHECK(report.instances[i - 1].host_begin_ns <= report.instances[i].host_begin_ns);
  for (const auto& instance : report.instances) {
    CHECK(instance.id > 0);
    CHECK(instance.host_end_ns >= instance.host_begin_ns);
    CHECK(instance.thread == report.instances.front().thread);
  }
  // A child lies inside its parent's instance in time.
  const auto& first_step = report.instances[0];
  const auto& first_forward = report.instances[1];
  CHECK(report.nodes[static_cast<std::size_t>(first_step.node)].path == "step");
  CHECK(report.nodes[static_cast<std::size_t>(first_forward.node)].path == "step/forward");
  CHECK(first_forward.host_begin_ns >= first_step.host_begin_ns);
  CHECK(first_forward.host_end_ns <= first_step.host_end_ns);
  CHECK(open_scope_node() == gpuprof::detail::root_node);
}

TEST_CASE("run-time names and literals with the same text are one node") {
  auto& profiler = gpuprof::profiler();
  profiler.reset();
  for (int layer = 0; layer < 3; ++layer) {
    const std::string name = "layer" + std::to_string(layer % 2);  // one call site, changing names
    GPUPROF_SCOPE(name);
    GPUPROF_SCOPE(std::string("mlp"));
  }
  { GPUPROF_SCOPE("layer0"); }  // a literal elsewhere with a run-time name's text
  const auto counts = counts_by_path(profiler.report());
  CHECK(counts.size() == 4);
  CHECK(counts.at("layer0") == 3);
  CHECK(counts.at("layer0/mlp") == 2);
  CHECK(counts.at("layer1") == 1);
  CHECK(counts.at("layer1/mlp") == 1);
}

TEST_CASE("the declared work of a scope reaches its node") {
  auto& profiler = gpuprof::profiler();
  profiler.reset();
  for (int i = 1; i <= 2; ++i) {
    GPUPROF_SCOPE("gemm", nullptr, gpuprof::Work{2e9 * i, 3e6 * i, 100.0 * i});
  }
  { GPUPROF_SCOPE("tokens only", gpuprof::Work{0, 0, 7}); }
  const gpuprof::Report report = profiler.report();
  REQUIRE(report.nodes.size() == 2);
  CHECK(report.nodes[0].work.flops == doctest::Approx(3e9));  // mean of the instances
  CHECK(report.nodes[0].work.bytes == doctest::Approx(4.5e6));
  CHECK(report.nodes[0].work.tokens == doctest::Approx(150));
  CHECK(report.nodes[1].work.tokens == 7);
}

TEST_CASE("scopes from several threads at once aggregate by path") {
  auto& profiler = gpuprof::profiler();
  profiler.reset();
  constexpr int thread_count = 4, steps_per_thread = 200;
  std::atomic<int> ready{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < thread_count; ++t) {
    threads.emplace_back([&ready, t] {
      ready.fetch_add(1);
      while (ready.load() < thread_count) std::this_thread::yield();  // overlap for real
      for (int i = 0; i < steps_per_thread; ++i) {
        step();
        if (t % 2 == 0) {
          GPUPROF_SCOPE("even threads");
        }
      }
    });
  }
  // A report taken while the threads run sees a consistent prefix.
  const auto partial = counts_by_path(profiler.report());
  for (auto& thread : threads) thread.join();
  const gpuprof::Report report = profiler.report();
  const auto counts = counts_by_path(report);

  CHECK(counts.at("step") == thread_count * steps_per_thread);
  CHECK(counts.at("step/forward/attention") == 2 * thread_count * steps_per_thread);
  CHECK(counts.at("step/backward") == thread_count * steps_per_thread);
  CHECK(counts.at("even threads") == thread_count / 2 * steps_per_thread);
  for (const auto& [path, count] : partial) CHECK(count <= counts.at(path));

  // Dense thread ids, each thread's instances with one id, ids unique.
  std::map<std::uint32_t, std::size_t> per_thread;
  std::map<std::uint64_t, int> ids;
  for (const auto& instance : report.instances) {
    ++per_thread[instance.thread];
    ++ids[instance.id];
  }
  CHECK(per_thread.size() == thread_count);
  for (const auto& [thread, instances] : per_thread) {
    CHECK(thread < 64);  // small dense ids, not OS thread ids
    CHECK(instances >= 5u * steps_per_thread);
  }
  CHECK(ids.size() == report.instances.size());
}

TEST_CASE("an exception unwinding through scopes leaves a correct tree and an empty stack") {
  auto& profiler = gpuprof::profiler();
  profiler.reset();
  const auto failing_step = [] {
    GPUPROF_SCOPE("step");
    GPUPROF_SCOPE("forward");
    {
      GPUPROF_SCOPE("attention");
      throw std::runtime_error("out of memory");
    }
  };
  CHECK_THROWS_AS(failing_step(), std::runtime_error);
  CHECK(open_scope_node() == gpuprof::detail::root_node);
  { GPUPROF_SCOPE("after"); }  // a root, not a child of the abandoned scopes

  const auto report = profiler.report();
  CHECK(paths_in_order(report) ==
        std::vector<std::string>{"step", "step/forward", "step/forward/attention", "after"});
  for (const auto& node : report.nodes) CHECK(node.count == 1);
}

// What a graph node created now is charged to (cupti.hpp reads both when
// CUPTI names a captured node): the innermost open scope's node and instance.
TEST_CASE("the innermost open scope's node and instance are the thread's, restored on exit and unwind") {
  using gpuprof::detail::innermost_scope_instance;
  using gpuprof::detail::innermost_scope_node;
  gpuprof::profiler().reset();
  CHECK(innermost_scope_node() == gpuprof::detail::root_node);
  CHECK(innermost_scope_instance() == 0);
  static gpuprof::CallSite outer_site, inner_site, throwing_site;
  {
    const gpuprof::Scope outer(outer_site, "outer");
    const std::uint32_t outer_node = innermost_scope_node();
    CHECK(outer_node != gpuprof::detail::root_node);
    CHECK(innermost_scope_instance() == outer.instance_id());
    {
      const gpuprof::Scope inner(inner_site, "inner");
      CHECK(innermost_scope_node() != outer_node);
      CHECK(inner.instance_id() != outer.instance_id());
      CHECK(innermost_scope_instance() == inner.instance_id());
    }
    CHECK(innermost_scope_node() == outer_node);
    CHECK(innermost_scope_instance() == outer.instance_id());
    CHECK_THROWS_AS(([] {
                      const gpuprof::Scope throwing(throwing_site, "throwing");
                      throw std::runtime_error("unwind");
                    }()),
                    std::runtime_error);
    CHECK(innermost_scope_node() == outer_node);
    CHECK(innermost_scope_instance() == outer.instance_id());
  }
  CHECK(innermost_scope_node() == gpuprof::detail::root_node);
  CHECK(innermost_scope_instance() == 0);
}

TEST_CASE("reset forgets finished instances; scopes open across it are kept") {
  auto& profiler = gpuprof::profiler();
  profiler.reset();
  for (int i = 0; i < 5; ++i) step();
  {
    GPUPROF_SCOPE("outer");
    profiler.reset();
    { GPUPROF_SCOPE("inner"); }
    // `outer` is still open: it appears as an ancestor without instances.
    const auto during = profiler.report();
    REQUIRE(during.nodes.size() == 2);
    CHECK(during.nodes[0].path == "outer");
    CHECK(during.nodes[0].count == 0);
    CHECK(during.nodes[0].open_instances == 1);
    CHECK(during.nodes[0].host_ms.n == 0);
    CHECK(during.nodes[1].count == 1);
    CHECK(during.nodes[1].open_instances == 0);
  }
  for (int i = 0; i < 2; ++i) step();
  const auto counts = counts_by_path(profiler.report());
  CHECK(counts.at("outer") == 1);
  CHECK(counts.at("outer/inner") == 1);
  CHECK(counts.at("step") == 2);
}

TEST_CASE("scopes still open at report time are marked, on this thread and on others, and not counted") {
  auto& profiler = gpuprof::profiler();
  profiler.reset();
  std::atomic<int> stage{0};
  std::thread worker([&] {
    GPUPROF_SCOPE("worker loop");
    { GPUPROF_SCOPE("worker item"); }
    stage = 1;
    while (stage.load() != 2) std::this_thread::yield();
  });
  while (stage.load() != 1) std::this_thread::yield();
  {
    GPUPROF_SCOPE("main");
    { GPUPROF_SCOPE("setup"); }
    GPUPROF_SCOPE("solve");
    const gpuprof::Report during = profiler.report();
    std::map<std::string, const gpuprof::ScopeNode*> by_path;
    for (const auto& node : during.nodes) by_path[node.path] = &node;
    REQUIRE(by_path.count("main/solve") == 1);
    CHECK(by_path.at("main")->open_instances == 1);
    CHECK(by_path.at("main")->count == 0);
    CHECK(by_path.at("main/solve")->open_instances == 1);
    CHECK(by_path.at("main/setup")->open_instances == 0);
    CHECK(by_path.at("main/setup")->count == 1);
    CHECK(by_path.at("worker loop")->open_instances == 1);
    CHECK(by_path.at("worker loop/worker item")->open_instances == 0);
    CHECK(by_path.at("worker loop/worker item")->count == 1);
  }
  stage = 2;
  worker.join();
  for (const auto& node : profiler.report().nodes) {
    CAPTURE(node.path);
    CHECK(node.open_instances == 0);
    CHECK(node.count == 1);
  }
}

namespace {
struct CountingObserver : gpuprof::ScopeObserver {
  std::vector<std::uint64_t> begun, ended;
  int contributions = 0;
  int resets = 0;
  void on_reset() override { ++resets; }
  void on_scope_begin(std::uint64_t id) override { begun.push_back(id); }
  void on_scope_end(std::uint64_t id) override { ended.push_back(id); }
  void contribute(gpuprof::Report& report) override {
    ++contributions;
    report.dropped_kernel_records = 42;  // proves the report passed through here
  }
};
}  // namespace

TEST_CASE("observers see every scope begin and end, in order, and contribute to the report") {
  auto& profiler = gpuprof::profiler();
  profiler.reset();
  CountingObserver observer;
  profiler.add_observer(&observer);
  step();
  const auto report = profiler.report();
  profiler.remove_observer(&observer);
  { GPUPROF_SCOPE("unobserved"); }

  REQUIRE(observer.begun.size() == 5);
  CHECK(observer.ended.size() == 5);
  CHECK(observer.begun.front() == report.instances.front().id);  // step
  CHECK(observer.ended.back() == observer.begun.front());        // step ends last
  for (std::size_t i = 1; i < observer.begun.size(); ++i) CHECK(observer.begun[i] > observer.begun[i - 1]);
  CHECK(observer.contributions == 1);
  CHECK(report.dropped_kernel_records == 42);
}

TEST_CASE("reset tells the observers, so what they collected goes with the scopes' records") {
  auto& profiler = gpuprof::profiler();
  CountingObserver observer;
  profiler.add_observer(&observer);
  step();
  profiler.reset();
  profiler.reset();
  profiler.remove_observer(&observer);
  profiler.reset();  // no longer registered: not called
  CHECK(observer.resets == 2);
}
