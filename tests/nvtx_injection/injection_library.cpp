// The NVTX recorder as a tool library, for programs that cannot link it in:
// run a program with NVTX_INJECTION64_PATH naming this module, as Nsight
// Systems does with its own, and NVTX loads it on the program's first NVTX
// call. At exit it writes every range event to the file GPUPROF_NVTX_LOG
// names (temp + rename), one line each, grouped by thread (threads numbered
// in the order of their first event, so the text does not depend on how
// threads interleave):
//   <thread> push <domain> <registered|ascii> <colour: "name-colour" or 0xAARRGGBB> <message>
//   <thread> pop <domain>
// "name-colour": the colour is gpuprof::nvtx_colour(message). gpuprof's
// headers are included without its CMake target (no GPUPROF_WITH_NVTX):
// nvtx.hpp then calls no NVTX function, only its colour is used.
#define NVTX_NO_IMPL  // types only: this file implements the tool side
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include <gpuprof/nvtx.hpp>

#include "nvtx_recorder.hpp"

namespace {

std::string event_line(const nvtx_recorder::RangeEvent& event) {
  const std::string domain = event.domain.empty() ? "(global)" : event.domain;
  if (event.kind == nvtx_recorder::RangeEvent::Kind::pop) return "pop " + domain;
  char colour[16];
  std::snprintf(colour, sizeof colour, "0x%08X", static_cast<unsigned>(event.colour));
  const bool name_colour = event.argb && event.colour == gpuprof::nvtx_colour(event.message);
  return "push " + domain + (event.registered ? " registered " : " ascii ") +
         (name_colour ? std::string("name-colour") : std::string(colour)) + " " + event.message;
}

void write_log() {
  const char* path = std::getenv("GPUPROF_NVTX_LOG");
  if (!path || !*path) {
    std::fputs("nvtx injection: GPUPROF_NVTX_LOG is not set: no log written\n", stderr);
    return;
  }
  const std::vector<nvtx_recorder::RangeEvent> events = nvtx_recorder::events();
  std::vector<std::thread::id> threads;
  for (const auto& event : events) {
    bool seen = false;
    for (const auto& thread : threads) seen = seen || thread == event.thread;
    if (!seen) threads.push_back(event.thread);
  }
  const std::string temporary = std::string(path) + ".tmp";
  std::FILE* file = std::fopen(temporary.c_str(), "w");
  if (!file) {
    std::fprintf(stderr, "nvtx injection: cannot write %s\n", temporary.c_str());
    return;
  }
  for (std::size_t t = 0; t < threads.size(); ++t)
    for (const auto& event : events)
      if (event.thread == threads[t]) std::fprintf(file, "%zu %s\n", t, event_line(event).c_str());
  if (std::fclose(file) != 0 || std::rename(temporary.c_str(), path) != 0)
    std::fprintf(stderr, "nvtx injection: cannot write %s\n", path);
}

}  // namespace

// The entry point NVTX's loader looks up in the library it opens.
extern "C" __attribute__((visibility("default"))) int InitializeInjectionNvtx2(
    NvtxGetExportTableFunc_t get_export_table) {
  const int installed = nvtx_recorder::initialize(get_export_table);
  // Registered now, during the program's run: runs before the destructors
  // of every static object constructed earlier. The recorder's own state is
  // never destroyed.
  if (installed) std::atexit(write_log);
  return installed;
}
