// gpuprof/input_limits.hpp: how much a reader takes in. Every file the
// library reads (reports, bench files; the tools read nothing else) is
// checked against the limit while it is read, so /dev/zero or a huge array
// ends in gpuprof::InputError, never in exhausted memory.
//
// ```cpp
// #include <gpuprof/input_limits.hpp>
// int main() { gpuprof::set_max_input_bytes(256 << 20); }  // or GPUPROF_MAX_INPUT_MB=256 in the environment
// ```
//
// read_text_file(path) reads any file a program takes from its command line
// within the same limit (a tool's reference data, say).
//
// Bytes: the file's size, default 64 MiB. Values: a document may hold at most one JSON
// value per 8 bytes of the byte limit (8 Mi values at 64 MiB; reports as
// written hold one per 15 to 22 bytes), which bounds the parsed tree (about 100 bytes a value).
#pragma once
#include <sys/stat.h>

#include <atomic>
#include <cerrno>
#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>

#include "config.hpp"
#include "error.hpp"
#include "terminal_text.hpp"

GPUPROF_NAMESPACE_BEGIN

inline constexpr std::size_t default_max_input_bytes = std::size_t{64} << 20;

namespace detail {
// 0 until set: then GPUPROF_MAX_INPUT_MB (or the default) applies on first use.
inline std::atomic<std::size_t>& max_input_bytes_setting() {
  static std::atomic<std::size_t> bytes{0};
  return bytes;
}

// GPUPROF_MAX_INPUT_MB as bytes; the default when unset. A value that is not
// a positive whole number of MiB is an error rather than silently ignored.
inline std::size_t max_input_bytes_from_environment() {
  const char* text = std::getenv("GPUPROF_MAX_INPUT_MB");
  if (text == nullptr || *text == '\0') return default_max_input_bytes;
  // Plain digits only: strtoull alone would take " 5", "+5" and "-5".
  const std::string digits = text;
  errno = 0;
  const unsigned long long mib = std::strtoull(text, nullptr, 10);
  if (digits.find_first_not_of("0123456789") != std::string::npos || errno != 0 || mib == 0 ||
      mib > (std::size_t{1} << 24))
    throw InputError(std::string("GPUPROF_MAX_INPUT_MB: not a size in MiB from 1 to 16777216: \"") + text +
                     "\"");
  return static_cast<std::size_t>(mib) << 20;
}
}  // namespace detail

// The byte limit every reader applies; throws InputError when
// GPUPROF_MAX_INPUT_MB is set to something that is not a size.
inline std::size_t max_input_bytes() {
  const std::size_t set = detail::max_input_bytes_setting().load();
  return set != 0 ? set : detail::max_input_bytes_from_environment();
}

// Overrides GPUPROF_MAX_INPUT_MB for this process (a tool's --max-input-mb);
// 0 goes back to the environment or the default.
inline void set_max_input_bytes(std::size_t bytes) { detail::max_input_bytes_setting().store(bytes); }

// The most JSON values a document within `bytes` may hold.
inline std::size_t max_input_values(std::size_t bytes) { return bytes / 8; }

// The whole file, read in blocks and refused as soon as it passes
// `max_bytes`, so a device (/dev/zero) or a huge file never fills memory; a
// directory is refused by name. Errors say why (the system's reason: no
// permission, no file). Every file named on a command line (reports, bench
// files, a tool's reference data) is read through here.
inline std::string read_text_file(const std::string& path, std::size_t max_bytes = max_input_bytes()) {
  const std::string shown = terminal_safe(path);
  const std::unique_ptr<std::FILE, int (*)(std::FILE*)> file(std::fopen(path.c_str(), "rb"), &std::fclose);
  if (!file) throw InputError("cannot open " + shown + ": " + std::strerror(errno));
  struct stat status {};
  if (::fstat(::fileno(file.get()), &status) == 0 && S_ISDIR(status.st_mode))
    throw InputError("cannot read " + shown + ": " + std::strerror(EISDIR));
  std::string text;
  char block[1 << 16];
  while (true) {
    const std::size_t got = std::fread(block, 1, sizeof block, file.get());
    if (got > max_bytes - text.size())
      throw InputError(shown + ": larger than the input limit of " + std::to_string(max_bytes) +
                       " bytes (GPUPROF_MAX_INPUT_MB raises it)");
    text.append(block, got);
    if (got == sizeof block) continue;
    if (std::ferror(file.get())) throw InputError("cannot read " + shown + ": " + std::strerror(errno));
    return text;
  }
}

GPUPROF_NAMESPACE_END
