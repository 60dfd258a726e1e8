// gpuprof_cli/standard_output.hpp: a program's standard output that cannot fail
// silently.
//
// ```cpp
// #include <gpuprof_cli/standard_output.hpp>
// #include <iostream>
// int main() {
//   gpuprof::guard_standard_streams();  // first thing
//   std::cout << "results\n";
//   return gpuprof::finish_standard_output("myprog", 0);  // 1 when the output was lost
// }
// ```
//
// Writes to a full device (`>/dev/full`) or a closed stream (`>&-`) fail in
// stdio's buffer, long after the program printed, and a plain `return 0`
// loses them. finish_standard_output flushes std::cout and stdout and turns
// any failure into a message on stderr and exit status 1.
//
// A closed descriptor 0, 1 or 2 is a second hazard: the next file the program
// opens gets that number, and text meant for the terminal lands in it (a
// report's temporary, say). guard_standard_streams puts /dev/null there,
// opened read-only for 1 and 2, so every later write to the closed stream
// still fails (EBADF) and is reported, and no file can take its place.
#pragma once
#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <iostream>
#include <string>
#include <system_error>

#include <gpuprof/config.hpp>

GPUPROF_NAMESPACE_BEGIN

inline void guard_standard_streams() {
  for (const int stream : {STDIN_FILENO, STDOUT_FILENO, STDERR_FILENO}) {
    if (::fcntl(stream, F_GETFD) != -1 || errno != EBADF) continue;
    // open() takes the lowest free number, normally `stream` itself; dup2
    // covers the case where a lower one was closed too and got it instead.
    const int descriptor = ::open("/dev/null", O_RDONLY);
    if (descriptor >= 0 && descriptor != stream) {
      ::dup2(descriptor, stream);
      ::close(descriptor);
    }
  }
}

// `status`, or 1 with a message when what went to standard output did not
// all arrive. Call it on every normal return path of main().
inline int finish_standard_output(const char* program, int status) {
  std::cout.flush();
  errno = 0;
  const bool flushed = std::fflush(stdout) == 0;
  const int error_number = errno;
  if (flushed && std::cout.good() && !std::ferror(stdout)) return status;
  std::cerr << program << ": cannot write standard output"
            << (error_number != 0 ? ": " + std::error_code(error_number, std::generic_category()).message()
                                  : std::string())
            << "\n";
  return 1;
}

GPUPROF_NAMESPACE_END
