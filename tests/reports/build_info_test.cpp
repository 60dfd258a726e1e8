// The build's facts in every report: gpuprof's CMake target fills in the
// compiler flags, the build type and the git revision of the build
// (cmake/gpuprofBuildInfo.cmake); here they are checked against what this
// translation unit can see of its own build.
#include <doctest/doctest.h>

#include <cctype>
#include <string>

#include <gpuprof/environment.hpp>
#include <gpuprof/profiler.hpp>

namespace {

bool is_hex(const std::string& text) {
  if (text.empty()) return false;
  for (const char c : text)
    if (!std::isxdigit(static_cast<unsigned char>(c))) return false;
  return true;
}

// `git describe --always --dirty --abbrev=12`: "<hash>", or "<tag>-<n>-g<hash>",
// either with "-dirty" after it.
bool looks_like_describe(std::string revision) {
  const std::string dirty = "-dirty";
  if (revision.size() > dirty.size() &&
      revision.compare(revision.size() - dirty.size(), dirty.size(), dirty) == 0)
    revision.resize(revision.size() - dirty.size());
  const std::size_t g = revision.rfind("-g");
  const std::string hash = g == std::string::npos ? revision : revision.substr(g + 2);
  return hash.size() >= 12 && is_hex(hash);
}

}  // namespace

TEST_CASE("the report's environment names this build's type, flags and git revision") {
  const gpuprof::Environment env = gpuprof::profiler().report().environment;
  CAPTURE(env.build_type);
  CAPTURE(env.compiler_flags);
  CAPTURE(env.git_revision);
  // What CMake configured this test with.
  const std::string configured = GPUPROF_TEST_BUILD_TYPE;
  CHECK(env.build_type == (configured.empty() ? "none (CMAKE_BUILD_TYPE empty)" : configured));
  CHECK(env.build_type.find("NDEBUG") == std::string::npos);
  CHECK(env.compiler_flags == GPUPROF_TEST_CXX_FLAGS);
#ifdef NDEBUG
  // Assertions are off in this translation unit: its flags say how.
  CHECK(env.compiler_flags.find("-DNDEBUG") != std::string::npos);
  CHECK(env.build_type != "Debug");
#endif
#if GPUPROF_TEST_IN_GIT_CHECKOUT
  CHECK(looks_like_describe(env.git_revision));
#else
  CHECK(env.git_revision.empty());
#endif
}

TEST_CASE("git describe's forms are recognised and other text is not") {
  CHECK(looks_like_describe("5791ffa0a1b2"));
  CHECK(looks_like_describe("5791ffa0a1b2-dirty"));
  CHECK(looks_like_describe("v0.1.0-14-g5791ffa0a1b2"));
  CHECK_FALSE(looks_like_describe(""));
  CHECK_FALSE(looks_like_describe("NDEBUG"));
  CHECK_FALSE(looks_like_describe("5791ffa"));
}
