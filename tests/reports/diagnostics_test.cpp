// diagnose(): one line per call on stderr, "gpuprof: " or "gpuprof: warning: "
// first, and a once-key says its line only the first time.
#include <doctest/doctest.h>

#include <gpuprof/diagnostics.hpp>

#include <string>

#include "support/stderr_capture.hpp"

TEST_CASE("diagnose says each line whole, with its level, and a once-key once") {
  gpuprof_test::StderrCapture capture;
  gpuprof::diagnose(gpuprof::Severity::note, "memory watch is off: no device");
  gpuprof::diagnose(gpuprof::Severity::warning, "RANK is 3 but WORLD_SIZE is 2", "diagnostics_test key");
  gpuprof::diagnose(gpuprof::Severity::warning, "the same key again", "diagnostics_test key");
  gpuprof::diagnose(gpuprof::Severity::note, "without a key, every time");
  gpuprof::diagnose(gpuprof::Severity::note, "without a key, every time");
  CHECK(capture.read() ==
        "gpuprof: memory watch is off: no device\n"
        "gpuprof: warning: RANK is 3 but WORLD_SIZE is 2\n"
        "gpuprof: without a key, every time\n"
        "gpuprof: without a key, every time\n");
}
