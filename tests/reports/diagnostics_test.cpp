// diagnose(): one line per call on stderr, "gpuprof: " or "gpuprof: warning: "
// first, and a once-key says its line only the first time.
#include <doctest/doctest.h>

#include <gpuprof/diagnostics.hpp>

#include <unistd.h>

#include <cstdio>
#include <string>

namespace {
// What `say` writes on stderr, through a temporary file put in its place.
template <class Say>
std::string stderr_of(Say say) {
  std::FILE* file = std::tmpfile();
  REQUIRE(file != nullptr);
  std::fflush(stderr);
  const int saved = ::dup(2);
  REQUIRE(saved >= 0);
  REQUIRE(::dup2(::fileno(file), 2) >= 0);
  say();
  std::fflush(stderr);
  ::dup2(saved, 2);
  ::close(saved);
  std::rewind(file);
  std::string text;
  char block[256];
  for (std::size_t got; (got = std::fread(block, 1, sizeof block, file)) > 0;) text.append(block, got);
  std::fclose(file);
  return text;
}
}  // namespace

TEST_CASE("diagnose says each line whole, with its level, and a once-key once") {
  const std::string said = stderr_of([] {
    gpuprof::diagnose(gpuprof::Severity::note, "memory watch is off: no device");
    gpuprof::diagnose(gpuprof::Severity::warning, "RANK is 3 but WORLD_SIZE is 2", "diagnostics_test key");
    gpuprof::diagnose(gpuprof::Severity::warning, "the same key again", "diagnostics_test key");
    gpuprof::diagnose(gpuprof::Severity::note, "without a key, every time");
    gpuprof::diagnose(gpuprof::Severity::note, "without a key, every time");
  });
  CHECK(said ==
        "gpuprof: memory watch is off: no device\n"
        "gpuprof: warning: RANK is 3 but WORLD_SIZE is 2\n"
        "gpuprof: without a key, every time\n"
        "gpuprof: without a key, every time\n");
}
