// fuzz/fuzz_target.hpp: what the libFuzzer targets share. Each target feeds
// its bytes to one reader and, when the reader accepts them, to the writers
// that print what it read. The one acceptable failure is gpuprof::InputError
// (the input is bad, the tools exit 2); any other exception escapes, so
// libFuzzer reports it as a crash, as it does sanitizer findings.
#pragma once
#include <gpuprof/error.hpp>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>
#include <unistd.h>

namespace gpuprof_fuzz {

inline std::string_view text_of(const std::uint8_t* data, std::size_t size) {
  return {reinterpret_cast<const char*>(data), size};
}

// A file for writers that only write to paths (Chrome traces): one per
// process, in TMPDIR, rewritten by every run.
inline std::string scratch_file(const char* name) {
  const char* directory = std::getenv("TMPDIR");
  return std::string(directory && *directory ? directory : "/tmp") + "/gpuprof_fuzz_" +
         std::to_string(getpid()) + "_" + name;
}

// Runs `body` on the input; InputError is the reader refusing bad input.
template <class Body>
int run(Body body) {
  try {
    body();
  } catch (const gpuprof::InputError&) {
  }
  return 0;
}

}  // namespace gpuprof_fuzz
