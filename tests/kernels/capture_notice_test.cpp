// A KernelCapture that cannot capture says why, once, and how scopes time
// then, in words that agree with the recorder's own notice: without a device
// that is the host clock, never CUDA events. ctest runs this program with
// CUDA_VISIBLE_DEVICES=-1, so every machine, the GPU machine included, is one
// without a usable device here.
//
// Its own program: the recorder's notice is printed when the process first
// touches gpuprof, so nothing may run before stderr is captured.
#include <doctest/doctest.h>

#include <string>

#include <gpuprof/cupti.hpp>
#include <gpuprof/profiler.hpp>
#include <gpuprof/scope.hpp>

#include "support/occurrences.hpp"
#include "support/stderr_capture.hpp"

using gpuprof_test::occurrences;

TEST_CASE("without a device: the capture's notice says the host clock, as the recorder's does") {
  gpuprof_test::StderrCapture capture;
  std::string why;
  {
    gpuprof::KernelCapture kernels;
    CHECK_FALSE(kernels.active());
    why = kernels.why_inactive();
    GPUPROF_SCOPE("step");
  }
  const gpuprof::Report report = gpuprof::profiler().report();
  const std::string err = capture.read();
  INFO("stderr: " << err);

  REQUIRE(report.timing_source == gpuprof::TimingSource::host_clock);
  CHECK(report.nodes.size() == 1);
  CHECK(why.find("no usable CUDA device (") == 0);
  CHECK(occurrences(err, "gpuprof:") == 2);
  CHECK(err.find("gpuprof: no usable CUDA device (") == 0);  // the recorder's notice first
  CHECK(occurrences(err, "no usable CUDA device (") == 2);
  CHECK(occurrences(err, "; timing with the host clock\n") == 1);
  CHECK(occurrences(err, "gpuprof: kernel capture is off: " + why + "; scopes time with the host clock\n") ==
        1);
  CHECK(occurrences(err, "CUDA events") == 0);
}
