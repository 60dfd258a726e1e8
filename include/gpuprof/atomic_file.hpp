// gpuprof/atomic_file.hpp: write a file whole or not at all.
//
// The contents go to a fresh temporary file in the same directory (so the
// final rename stays on one file system and is atomic), are flushed to disk,
// and the temporary is renamed over the destination. A reader therefore sees
// the old file or the complete new one, never half of one, even if the process
// dies midway; on failure the temporary is removed and gpuprof::Error names the
// path and the system's reason. POSIX only (like the CUDA targets we serve).
#pragma once
#include <fcntl.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <string>
#include <string_view>
#include <system_error>

#include "config.hpp"
#include "error.hpp"

GPUPROF_NAMESPACE_BEGIN

namespace detail {
[[noreturn]] inline void throw_write_error(const std::string& path, const std::string& step,
                                           int error_number) {
  throw Error("cannot write " + path + ": " + step + ": " +
              std::error_code(error_number, std::generic_category()).message());
}

// A name no other writer (thread or process) uses at the same moment. O_EXCL
// at creation guards against the rest (a stale file left by a killed process).
inline std::string temporary_name_beside(const std::string& path) {
  static std::atomic<unsigned long> counter{0};
  return path + ".tmp-" + std::to_string(static_cast<long>(::getpid())) + "-" +
         std::to_string(counter.fetch_add(1));
}

// write(2) until everything is out, retrying partial writes and EINTR.
inline int write_all(int descriptor, std::string_view contents) {
  while (!contents.empty()) {
    const ssize_t written = ::write(descriptor, contents.data(), contents.size());
    if (written < 0) {
      if (errno == EINTR) continue;
      return errno;
    }
    contents.remove_prefix(static_cast<std::size_t>(written));
  }
  return 0;
}
}  // namespace detail

// Replaces (or creates) `path` with exactly `contents`. The new file gets the
// usual permissions (0666 less the umask). Throws gpuprof::Error on failure,
// leaving the previous file, if any, untouched and no temporary behind.
inline void write_file_atomically(const std::string& path, std::string_view contents) {
  if (path.empty()) throw Error("cannot write a file with an empty path");
  const std::string temporary = detail::temporary_name_beside(path);
  const int descriptor =
      ::open(temporary.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
  if (descriptor < 0) detail::throw_write_error(path, "cannot create " + temporary, errno);

  const auto fail = [&](const std::string& step, int error_number, bool still_open) {
    if (still_open) ::close(descriptor);
    ::unlink(temporary.c_str());
    detail::throw_write_error(path, step, error_number);
  };
  if (const int error_number = detail::write_all(descriptor, contents))
    fail("writing " + temporary, error_number, true);
  if (::fsync(descriptor) != 0) fail("flushing " + temporary, errno, true);
  if (::close(descriptor) != 0) fail("closing " + temporary, errno, false);
  if (::rename(temporary.c_str(), path.c_str()) != 0)
    fail("renaming " + temporary + " into place", errno, false);
}

GPUPROF_NAMESPACE_END
