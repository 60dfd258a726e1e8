// An NVTX injection: records every range push and pop NVTX delivers, with
// its domain, message, colour and thread, so tests can check what a profiler
// (Nsight Systems, ...) would receive. Two ways in: link the object library
// gpuprof_nvtx_recorder and static_injection.cpp into a test program (NVTX
// finds it through the InitializeInjectionNvtx2_fnptr symbol on its first
// call), or load the module gpuprof_nvtx_injection into any program through
// NVTX_INJECTION64_PATH (injection_library.cpp), as Nsight Systems does.
#pragma once
#include <cstdint>
#include <string>
#include <thread>
#include <vector>

#include <nvtx3/nvToolsExt.h>

namespace nvtx_recorder {

struct RangeEvent {
  enum class Kind { push, pop } kind;
  std::string domain;       // "" for NVTX's global domain
  std::string message;      // registered string or ASCII text; "" for pops
  bool registered = false;  // message given as a registered string handle
  bool argb = false;        // colour given as ARGB
  std::uint32_t colour = 0;
  std::thread::id thread;  // the thread that called NVTX
};

// NVTX's call into the injection: installs the recorder's callbacks.
int NVTX_API initialize(NvtxGetExportTableFunc_t get_export_table);

// True once NVTX has called the injection's initialization.
bool attached();
// Every event since the last clear(), in order (all threads).
std::vector<RangeEvent> events();
void clear();

}  // namespace nvtx_recorder
