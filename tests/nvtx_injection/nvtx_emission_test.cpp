// What NVTX receives from gpuprof scopes, seen through NVTX's own injection
// interface (nvtx_recorder.cpp, linked statically): the exact push/pop
// sequence with names, the domain "gpuprof", registered strings, colours
// from the name, and balance when an exception unwinds. No GPU needed.
#include <doctest/doctest.h>

#include <algorithm>
#include <stdexcept>
#include <string>
#include <vector>

#include <gpuprof/profiler.hpp>
#include <gpuprof/scope.hpp>
#include <gpuprof/scope_handle.hpp>

#include "nvtx_recorder.hpp"

namespace {

using Kind = nvtx_recorder::RangeEvent::Kind;

// "+name" for a push, "-" for a pop, after checking what every event shares.
std::vector<std::string> sequence(const std::vector<nvtx_recorder::RangeEvent>& events) {
  std::vector<std::string> out;
  int depth = 0;
  for (const auto& event : events) {
    CHECK(event.domain == "gpuprof");
    if (event.kind == Kind::push) {
      CHECK(event.registered);
      CHECK(event.argb);
      CHECK(event.colour == gpuprof::nvtx_colour(event.message));
      out.push_back("+" + event.message);
      ++depth;
    } else {
      out.push_back("-");
      --depth;
      CHECK(depth >= 0);
    }
  }
  CHECK(depth == 0);
  return out;
}

void inner() { GPUPROF_SCOPE("attention"); }

}  // namespace

TEST_CASE("scopes push and pop NVTX ranges in the gpuprof domain, in order") {
  nvtx_recorder::clear();
  {
    GPUPROF_SCOPE("step");
    {
      GPUPROF_SCOPE("forward");
      inner();
      inner();
    }
    const std::string dynamic = "layer" + std::to_string(3);
    GPUPROF_SCOPE(dynamic);
  }
  REQUIRE(nvtx_recorder::attached());
  CHECK(sequence(nvtx_recorder::events()) == std::vector<std::string>{"+step", "+forward", "+attention", "-",
                                                                      "+attention", "-", "-", "+layer3", "-",
                                                                      "-"});
}

TEST_CASE("an exception unwinding through scopes pops every range it pushed") {
  nvtx_recorder::clear();
  const auto failing = [] {
    GPUPROF_SCOPE("outer");
    GPUPROF_SCOPE("middle");
    GPUPROF_SCOPE("innermost");
    throw std::runtime_error("fails");
  };
  CHECK_THROWS_AS(failing(), std::runtime_error);
  { GPUPROF_SCOPE("after"); }
  CHECK(sequence(nvtx_recorder::events()) ==
        std::vector<std::string>{"+outer", "+middle", "+innermost", "-", "-", "-", "+after", "-"});
}

TEST_CASE("the colour is a stable function of the name") {
  // Pinned: a changed hash would recolour every existing timeline.
  CHECK(gpuprof::nvtx_colour("forward") == 0xFF50E65Fu);
  CHECK(gpuprof::nvtx_colour("forward") == gpuprof::nvtx_colour(std::string("forward")));
  CHECK(gpuprof::nvtx_colour("forward") != gpuprof::nvtx_colour("backward"));
  for (const char* name : {"", "step", "forward", "attention", "a much longer scope name"}) {
    const std::uint32_t colour = gpuprof::nvtx_colour(name);
    CHECK((colour >> 24) == 0xFFu);  // opaque
    const std::uint32_t r = (colour >> 16) & 0xFF, g = (colour >> 8) & 0xFF, b = colour & 0xFF;
    const std::uint32_t brightest = std::max({r, g, b}), darkest = std::min({r, g, b});
    CHECK(brightest == 230);  // value 0.90: readable, never black
    CHECK(darkest == 80);     // saturation 0.65
  }
  static_assert(gpuprof::nvtx_colour("step") == gpuprof::nvtx_colour("step"), "constexpr");
}

TEST_CASE("GPU timing off leaves the NVTX ranges on") {
  gpuprof::profiler().set_gpu_timing(false);
  nvtx_recorder::clear();
  { GPUPROF_SCOPE("host only"); }
  gpuprof::profiler().set_gpu_timing(true);
  CHECK(sequence(nvtx_recorder::events()) == std::vector<std::string>{"+host only", "-"});
}

TEST_CASE("a handle scope pushes the range GPUPROF_SCOPE pushes, and ends out of order nested") {
  nvtx_recorder::clear();
  {
    gpuprof::ScopeHandle step = gpuprof::begin_scope("step");
    { GPUPROF_SCOPE("forward"); }
    step.end();
    step.end();  // nothing more
  }
  {
    gpuprof::ScopeHandle outer = gpuprof::begin_scope("outer");
    gpuprof::ScopeHandle inner = gpuprof::begin_scope("inner");
    outer.end();  // early: its range is popped after inner's
    inner.end();
  }
  REQUIRE(nvtx_recorder::attached());
  CHECK(sequence(nvtx_recorder::events()) ==
        std::vector<std::string>{"+step", "+forward", "-", "-", "+outer", "+inner", "-", "-"});
}
