// tests/support/exit_status.hpp: run a command line (a built tool) and get
// its exit status, its output thrown away.
#pragma once
#include <cstdlib>
#include <string>
#include <sys/wait.h>

namespace gpuprof_test {

inline int exit_status_of(const std::string& command) {
  const int status = std::system((command + " > /dev/null 2>&1").c_str());
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

}  // namespace gpuprof_test
