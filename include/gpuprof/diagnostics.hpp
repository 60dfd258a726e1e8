// gpuprof/diagnostics.hpp: diagnose(), the one way gpuprof says something on
// stderr (a capture that is off, a bad environment variable, a misuse).
//
// ```cpp
// #include <gpuprof/diagnostics.hpp>
// int main() {
//   gpuprof::diagnose(gpuprof::Severity::warning, "RANK is 3 but WORLD_SIZE is 2", "rank");
//   gpuprof::diagnose(gpuprof::Severity::warning, "said once per key", "rank");  // not said again
// }
// ```
//
// Every line starts "gpuprof: " ("gpuprof: warning: " for a warning), so a
// user can tell it from the program's own output and a test can count them.
// With a once_key, only the first call with that key in the process says
// anything. One write per line, so lines from threads do not interleave; it
// never throws (a line that cannot be made is dropped), so destructors and
// scope exits may call it.
#pragma once
#include <cstdio>
#include <mutex>
#include <set>
#include <string>
#include <string_view>

#include "config.hpp"

GPUPROF_NAMESPACE_BEGIN

enum class Severity { note, warning };

namespace detail {
// The keys said so far. Leaked on purpose: captures say things from their
// destructors, which may run after static destruction began.
inline std::set<std::string, std::less<>>& said_keys() {
  static auto* keys = new std::set<std::string, std::less<>>;
  return *keys;
}
inline std::mutex& said_keys_mutex() {
  static auto* mutex = new std::mutex;
  return *mutex;
}
}  // namespace detail

inline void diagnose(Severity level, std::string_view message, std::string_view once_key = {}) noexcept {
  try {
    if (!once_key.empty()) {
      const std::lock_guard<std::mutex> lock(detail::said_keys_mutex());
      if (!detail::said_keys().emplace(once_key).second) return;
    }
    std::string line = level == Severity::warning ? "gpuprof: warning: " : "gpuprof: ";
    line.append(message);
    line += '\n';
    std::fputs(line.c_str(), stderr);
  } catch (...) {  // out of memory: the line is dropped
  }
}

GPUPROF_NAMESPACE_END
