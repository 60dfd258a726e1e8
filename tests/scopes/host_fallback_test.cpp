// Timing without a usable GPU: the first use of gpuprof in this process says
// so exactly once on stderr, and scopes, report() and bench() all run on the
// host clock with the reason recorded. On a machine with a GPU the same
// program checks the opposite: CUDA-event timing and no notice.
//
// Its own program: the notice is printed when the process first touches
// gpuprof, so nothing may run before stderr is captured here.
#include <doctest/doctest.h>

#include <string>

#include <gpuprof/bench.hpp>
#include <gpuprof/profiler.hpp>
#include <gpuprof/scope.hpp>

#if GPUPROF_WITH_CUDA
#include <cuda_runtime_api.h>
#endif

#include "support/occurrences.hpp"
#include "support/stderr_capture.hpp"

using gpuprof_test::occurrences;
using gpuprof_test::StderrCapture;

namespace {

bool device_present() {
#if GPUPROF_WITH_CUDA
  int devices = 0;
  const bool present = cudaGetDeviceCount(&devices) == cudaSuccess && devices > 0;
  cudaGetLastError();
  return present;
#else
  return false;
#endif
}

}  // namespace

TEST_CASE("without a usable device: host clock everywhere, the reason stated once") {
  StderrCapture capture;
  for (int i = 0; i < 3; ++i) {
    GPUPROF_SCOPE("step");
    GPUPROF_SCOPE("forward", nullptr);
  }
  const gpuprof::Report report = gpuprof::profiler().report();
  const gpuprof::BenchResult bench = gpuprof::bench([] {});
  gpuprof::profiler().report();
  const std::string err = capture.read();

  REQUIRE(report.nodes.size() == 2);
  CHECK(report.nodes[0].count == 3);
  CHECK(report.nodes[0].host_ms.n == 3);

  if (device_present()) {
    INFO("stderr: " << err);
    CHECK(occurrences(err, "gpuprof:") == 0);
    CHECK(report.timing_source == gpuprof::TimingSource::cuda_events);
    CHECK(report.timing_note.empty());
    CHECK(!report.device_name.empty());
    CHECK(report.nodes[0].gpu_ms.n == 3);
    CHECK(bench.timing_source == gpuprof::TimingSource::cuda_events);
    return;
  }
  INFO("stderr: " << err);
  CHECK(occurrences(err, "gpuprof: ") == 1);
  CHECK(occurrences(err, "timing with the host clock") == 1);
#if GPUPROF_WITH_CUDA
  // CI's case: toolkit, no driver.
  CHECK(err.find("gpuprof: no usable CUDA device (") == 0);
  CHECK(report.timing_note.find("no usable CUDA device (") == 0);
#else
  // The switch and the fix, not a missing toolkit (which may well be installed).
  CHECK(err.find("gpuprof: GPUPROF_WITH_CUDA is 0 in this build") == 0);
  CHECK(report.timing_note.find("GPUPROF_WITH_CUDA is 0 in this build") == 0);
  CHECK(report.timing_note.find("define GPUPROF_WITH_CUDA=1 and link cudart (pkg-config") !=
        std::string::npos);
  CHECK(report.timing_note.find("without the CUDA toolkit") == std::string::npos);
#endif
  CHECK(report.timing_source == gpuprof::TimingSource::host_clock);
  CHECK(gpuprof::profiler().timing_source() == gpuprof::TimingSource::host_clock);
  CHECK(report.device_name.empty());
  for (const auto& node : report.nodes) CHECK(!node.gpu_timed());
  for (const auto& instance : report.instances) CHECK(instance.gpu_ms < 0);
  CHECK(bench.timing_source == gpuprof::TimingSource::host_clock);
  CHECK(bench.timing_note == report.timing_note);
  CHECK(bench.summary().find("host clock: " + report.timing_note) != std::string::npos);
}
