// A program that includes nothing of gpuprof but scope.hpp: no recorder, so
// its scopes must still push and pop their NVTX ranges (what Nsight Systems
// shows) and say once on stderr which header would record them.
// run_consumer.cmake runs it under the NVTX injection library and compares
// what NVTX received with scope_only_nvtx.txt: every push and pop, nesting,
// a run-time name, a second thread, and an exception unwinding three scopes.
#include <gpuprof/scope.hpp>
#include <stdexcept>
#include <string>
#include <thread>

namespace {

void layer(int index) { GPUPROF_SCOPE("layer" + std::to_string(index)); }

void failing_step() {
  GPUPROF_SCOPE("outer");
  GPUPROF_SCOPE("middle");
  GPUPROF_SCOPE(std::string("innermost"));
  throw std::runtime_error("fails inside three scopes");
}

}  // namespace

int main() {
  GPUPROF_SCOPE("main");
  std::thread loader([] {
    GPUPROF_SCOPE("loader");
    GPUPROF_SCOPE("read");
  });
  for (int step = 0; step < 2; ++step) {
    GPUPROF_SCOPE("step");
    {
      GPUPROF_SCOPE("forward");
      layer(step);
    }
  }
  bool caught = false;
  try {
    failing_step();
  } catch (const std::runtime_error&) {
    caught = true;
  }
  { GPUPROF_SCOPE("after"); }
  loader.join();
  return caught ? 0 : 1;
}
