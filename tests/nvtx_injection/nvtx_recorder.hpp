// A static NVTX injection: records every range push and pop NVTX delivers,
// with its domain, message and colour, so tests can check what a profiler
// (Nsight Systems, ...) would receive. Link the object library
// gpuprof_nvtx_recorder into a test program; NVTX finds it through the
// InitializeInjectionNvtx2_fnptr symbol on its first call.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace nvtx_recorder {

struct RangeEvent {
  enum class Kind { push, pop } kind;
  std::string domain;       // "" for NVTX's global domain
  std::string message;      // registered string or ASCII text; "" for pops
  bool registered = false;  // message given as a registered string handle
  bool argb = false;        // colour given as ARGB
  std::uint32_t colour = 0;
};

// True once NVTX has called the injection's initialization.
bool attached();
// Every event since the last clear(), in order (all threads).
std::vector<RangeEvent> events();
void clear();

}  // namespace nvtx_recorder
