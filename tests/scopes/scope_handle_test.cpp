// ScopeHandle: begin_scope() ... end() gives the scope GPUPROF_SCOPE gives
// (tree, counts, nesting in time); moves, double ends, destruction, ends out
// of order and on another thread.
#include <doctest/doctest.h>

#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include <gpuprof/profiler.hpp>
#include <gpuprof/scope_handle.hpp>

namespace {

std::map<std::string, std::uint64_t> counts_by_path(const gpuprof::Report& report) {
  std::map<std::string, std::uint64_t> counts;
  for (const auto& node : report.nodes) counts[node.path] = node.count;
  return counts;
}

const gpuprof::ScopeInstance& only_instance_of(const gpuprof::Report& report, const std::string& path) {
  const gpuprof::ScopeInstance* found = nullptr;
  for (const auto& instance : report.instances) {
    if (report.nodes.at(static_cast<std::size_t>(instance.node)).path != path) continue;
    REQUIRE(found == nullptr);
    found = &instance;
  }
  REQUIRE(found != nullptr);
  return *found;
}

std::uint32_t innermost_node() { return gpuprof::detail::recorder().this_thread().current; }

gpuprof::ScopeHandle begin_forward() { return gpuprof::begin_scope("forward"); }

}  // namespace

TEST_CASE("a handle scope nests like GPUPROF_SCOPE, with blocks inside and around it") {
  auto& profiler = gpuprof::profiler();
  profiler.reset();
  for (int i = 0; i < 3; ++i) {
    GPUPROF_SCOPE("train");
    gpuprof::ScopeHandle step = gpuprof::begin_scope("step");
    const int inside = i * 2;  // declared inside the step, used after it
    { GPUPROF_SCOPE("forward"); }
    step.end();
    CHECK(!step.active());
    GPUPROF_SCOPE(inside >= 0 ? "after" : "never");
  }
  const gpuprof::Report report = profiler.report();
  const auto counts = counts_by_path(report);
  CHECK(counts == std::map<std::string, std::uint64_t>{
                      {"train", 3}, {"train/step", 3}, {"train/step/forward", 3}, {"train/after", 3}});
  CHECK(innermost_node() == gpuprof::detail::root_node);
}

TEST_CASE("a handle moves: into an optional, a container, out of a function; each scope ends once") {
  auto& profiler = gpuprof::profiler();
  profiler.reset();
  {
    std::optional<gpuprof::ScopeHandle> step;
    step.emplace(gpuprof::begin_scope("step", gpuprof::Work{0, 0, 8}));
    std::vector<gpuprof::ScopeHandle> phases;
    phases.push_back(begin_forward());
    phases.back().end();
    gpuprof::ScopeHandle moved = std::move(*step);
    CHECK(!step->active());  // the moved-from handle ends nothing
    CHECK(moved.active());
    CHECK(moved.instance_id() > 0);
    step.reset();
    moved.end();
    moved.end();  // twice: nothing
    CHECK(moved.instance_id() == 0);
    gpuprof::ScopeHandle assigned = gpuprof::begin_scope(std::string("first"));
    // "second" begins inside "first"; the assignment then ends "first" (early:
    // it leaves the tree after "second") and takes "second", ended at destruction.
    assigned = gpuprof::begin_scope(std::string("second"));
  }
  const gpuprof::Report report = profiler.report();
  const auto counts = counts_by_path(report);
  CHECK(counts == std::map<std::string, std::uint64_t>{
                      {"step", 1}, {"step/forward", 1}, {"first", 1}, {"first/second", 1}});
  CHECK(report.nodes.at(0).work.tokens == 8);
  CHECK(innermost_node() == gpuprof::detail::root_node);
}

TEST_CASE("a handle ended before the scopes inside it stops its time then and leaves the tree after them") {
  auto& profiler = gpuprof::profiler();
  profiler.reset();
  {
    gpuprof::ScopeHandle outer = gpuprof::begin_scope("outer");
    gpuprof::ScopeHandle inner = gpuprof::begin_scope("inner");
    gpuprof::ScopeHandle innermost = gpuprof::begin_scope("innermost");
    outer.end();  // out of order: inner and innermost are open inside it
    CHECK(!outer.active());
    inner.end();  // out of order too
    // Still nested: a scope opened now is a child of innermost.
    { GPUPROF_SCOPE("leaf"); }
    innermost.end();  // the last inner one: all three leave the tree
    CHECK(innermost_node() == gpuprof::detail::root_node);
  }
  { GPUPROF_SCOPE("next"); }  // a root again, not a child of an ended scope
  const gpuprof::Report report = profiler.report();
  CHECK(counts_by_path(report) == std::map<std::string, std::uint64_t>{{"outer", 1},
                                                                       {"outer/inner", 1},
                                                                       {"outer/inner/innermost", 1},
                                                                       {"outer/inner/innermost/leaf", 1},
                                                                       {"next", 1}});
  // Each ended when end() was called: outer before inner before innermost.
  const auto& outer = only_instance_of(report, "outer");
  const auto& inner = only_instance_of(report, "outer/inner");
  const auto& innermost = only_instance_of(report, "outer/inner/innermost");
  CHECK(outer.host_end_ns <= inner.host_end_ns);
  CHECK(inner.host_end_ns <= innermost.host_end_ns);
  CHECK(only_instance_of(report, "outer/inner/innermost/leaf").host_begin_ns >= inner.host_end_ns);
}

TEST_CASE("ends out of order in any order, and a block around a handle that outlives it") {
  auto& profiler = gpuprof::profiler();
  profiler.reset();
  std::optional<gpuprof::ScopeHandle> escaped;
  {
    gpuprof::ScopeHandle a = gpuprof::begin_scope("a");
    gpuprof::ScopeHandle b = gpuprof::begin_scope("b");
    gpuprof::ScopeHandle c = gpuprof::begin_scope("c");
    b.end();  // waits for c
    a.end();  // waits for b (and c)
    c.end();
    {
      GPUPROF_SCOPE("block");
      escaped.emplace(gpuprof::begin_scope("escapes"));
    }  // the block ends first and waits for the handle it holds
    CHECK(innermost_node() != gpuprof::detail::root_node);
    escaped.reset();
    CHECK(innermost_node() == gpuprof::detail::root_node);
  }
  const gpuprof::Report report = profiler.report();
  CHECK(counts_by_path(report) ==
        std::map<std::string, std::uint64_t>{
            {"a", 1}, {"a/b", 1}, {"a/b/c", 1}, {"block", 1}, {"block/escapes", 1}});
  for (const auto& node : report.nodes) CHECK(node.open_instances == 0);
}

TEST_CASE("a handle ends on its own thread: end() elsewhere throws and leaves it open") {
  auto& profiler = gpuprof::profiler();
  profiler.reset();
  gpuprof::ScopeHandle step = gpuprof::begin_scope("step");
  std::string error;
  std::thread([&step, &error] {
    try {
      step.end();
    } catch (const gpuprof::Error& e) {
      error = e.what();
    }
  }).join();
  CHECK(error.find("other than the one that began") != std::string::npos);
  CHECK(step.active());
  step.end();
  CHECK(counts_by_path(profiler.report()) == std::map<std::string, std::uint64_t>{{"step", 1}});
}

TEST_CASE("a handle in NVTX-only mode pushes and pops its range and records nothing") {
  auto& profiler = gpuprof::profiler();
  profiler.reset();
  profiler.set_nvtx_only(true);
  gpuprof::ScopeHandle step = gpuprof::begin_scope("nvtx only");
  CHECK(step.active());
  CHECK(step.instance_id() == 0);
  step.end();
  step.end();
  profiler.set_nvtx_only(false);
  CHECK(profiler.report().nodes.empty());
}
