// child_case.hpp: how the long-run benchmarks measure a case: in a child
// process of its own, so that its peak RSS (ru_maxrss) and its CUDA context
// are its own, with the resident set read before and after its loop.
#pragma once
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <fstream>
#include <string>

namespace long_run {

using Clock = std::chrono::steady_clock;
inline double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

inline double resident_mib() {
  std::ifstream statm("/proc/self/statm");
  long pages = 0, resident = 0;
  statm >> pages >> resident;
  return static_cast<double>(resident) * static_cast<double>(sysconf(_SC_PAGESIZE)) / (1024.0 * 1024.0);
}
inline double peak_mib() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return static_cast<double>(usage.ru_maxrss) / 1024;  // KiB on Linux
}

struct ChildOutput {
  int exit_status = 0;  // -1: ended by a signal
  std::string text;     // what the case returned
};

// Runs `fn` (returning text) in a child process and returns its exit status
// and that text. The child exits 0 once the text is written, 1 if `fn`
// threw (the error on stderr) or the text could not be written; `fn` may
// end it with another status itself (_exit). Fork before the parent makes a
// CUDA context: a child cannot use its parent's.
template <class Fn>
ChildOutput run_in_child(Fn fn) {
  int pipe_ends[2];
  if (pipe(pipe_ends) != 0) {
    std::perror("pipe");
    std::exit(2);
  }
  const pid_t child = fork();
  if (child < 0) {
    std::perror("fork");
    std::exit(2);
  }
  if (child == 0) {
    close(pipe_ends[0]);
    try {
      const std::string text = fn();
      const ssize_t written = write(pipe_ends[1], text.data(), text.size());
      _exit(written == static_cast<ssize_t>(text.size()) ? 0 : 1);
    } catch (const std::exception& error) {
      std::fprintf(stderr, "%s\n", error.what());
      _exit(1);
    }
  }
  close(pipe_ends[1]);
  ChildOutput out;
  char buffer[4096];
  for (ssize_t got; (got = read(pipe_ends[0], buffer, sizeof buffer)) > 0;)
    out.text.append(buffer, static_cast<std::size_t>(got));
  close(pipe_ends[0]);
  int status = 0;
  waitpid(child, &status, 0);
  out.exit_status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return out;
}

}  // namespace long_run
