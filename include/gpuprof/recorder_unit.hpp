// gpuprof/recorder_unit.hpp: the one file of a program built with
// GPUPROF_RECORDER_IN_ONE_UNIT that installs the recorder before main().
//
// By default every translation unit that includes profiler.hpp (or
// gpuprof.hpp, bench.hpp, graph.hpp, cupti.hpp) installs it, so that the
// first scope of main() is recorded; each of them then compiles the
// Recorder. A program that includes gpuprof.hpp in many files can instead
// define GPUPROF_RECORDER_IN_ONE_UNIT for all of them and include this header
// in one (main.cpp, say): those files then compile only what they call.
// Without this header such a program records nothing until its first call
// into the recorder (profiler(), bench(), ...), and the recorder then says how
// many scopes it missed. Including it in several files, or without the macro,
// is harmless. docs/compile-cost.md.
#pragma once
#include "config.hpp"
#include "detail/recorder.hpp"

GPUPROF_NAMESPACE_BEGIN
namespace detail {

inline const bool recorder_unit_installed = install_scope_backend();

}  // namespace detail
GPUPROF_NAMESPACE_END
