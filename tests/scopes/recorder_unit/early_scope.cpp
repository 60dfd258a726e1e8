// early_scope recorded|missed: opens a scope before anything calls into the
// recorder, then reads the report. Exits 0 when the scope "early" was
// recorded (or, with `missed`, when it was not), 1 otherwise.
//
// Built three ways (tests/scopes.cmake): plainly, where this file installs
// the recorder itself; with GPUPROF_RECORDER_IN_ONE_UNIT and
// installing_unit.cpp beside it; and with the macro but no such unit, where
// the scope is missed and the recorder must say so.
#include <cstdio>
#include <cstring>

#include <gpuprof/gpuprof.hpp>

int main(int argc, char** argv) {
  if (argc != 2 || (std::strcmp(argv[1], "recorded") != 0 && std::strcmp(argv[1], "missed") != 0)) {
    std::fprintf(stderr, "usage: early_scope recorded|missed\n");
    return 2;
  }
  { GPUPROF_SCOPE("early"); }
  std::uint64_t count = 0;
  for (const gpuprof::ScopeNode& node : gpuprof::profiler().report().nodes)
    if (node.path == "early") count = node.count;
  std::printf("early scope: %s (%llu instance(s))\n", count == 1 ? "recorded" : "not recorded",
              static_cast<unsigned long long>(count));
  const bool expected_recorded = std::strcmp(argv[1], "recorded") == 0;
  return (count == 1) == expected_recorded ? 0 : 1;
}
