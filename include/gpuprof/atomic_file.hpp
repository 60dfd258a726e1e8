// gpuprof/atomic_file.hpp: write a file whole or not at all, and never destroy
// what the path names.
//
// A regular file (or a path that does not exist yet) is replaced atomically:
// the contents go to a fresh temporary file beside it (so the final rename
// stays on one file system), are flushed to disk, and the temporary is renamed
// over it. A reader sees the old file or the complete new one, never half of
// one, even if the process dies midway. Other paths keep what they are:
//   - a symbolic link is followed: the temporary goes beside the file the link
//     names and the rename lands there, so the link stays a link. Because the
//     program, not the kernel, follows it, the kernel's protected-symlinks
//     rule is applied here: a link in a sticky world-writable directory (/tmp)
//     is followed only when its owner is the writer or the directory's owner,
//     so a link planted by another user cannot redirect the output. A loop of
//     links is an error; a dangling link creates the file it names;
//   - "-" is standard output, and a path that is the file our standard output
//     or error already writes (`/dev/stdout` redirected to a file) goes
//     through that stream, at its current offset;
//   - a path that exists and is not a regular file (a character device, a
//     FIFO, a terminal) is written in place: renaming over it would replace
//     the device node or pipe with a plain file.
// Any failure (no space, a short write, a failed fsync or close) throws
// gpuprof::Error naming the path and the system's reason, after removing the
// temporary; the previous file, if any, is untouched. A failed in-place write
// cannot be undone: what reached the device or pipe stays there. POSIX only
// (like the CUDA targets we serve).
#pragma once
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstdlib>
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

// write(2) until everything is out, retrying partial writes and EINTR. A
// write that makes no progress counts as a failure (ENOSPC), never a loop.
inline int write_all(int descriptor, std::string_view contents) {
  while (!contents.empty()) {
    const ssize_t written = ::write(descriptor, contents.data(), contents.size());
    if (written < 0) {
      if (errno == EINTR) continue;
      return errno;
    }
    if (written == 0) return ENOSPC;
    contents.remove_prefix(static_cast<std::size_t>(written));
  }
  return 0;
}

// The kernel's protected_symlinks rule (fs.protected_symlinks = 1): a link
// in a sticky, world-writable directory may be followed only by its owner or
// when the directory's owner also owns the link.
inline bool may_follow_link(const struct stat& link, const struct stat& directory, uid_t follower) {
  const bool shared_directory = (directory.st_mode & S_ISVTX) && (directory.st_mode & S_IWOTH);
  return !shared_directory || link.st_uid == follower || link.st_uid == directory.st_uid;
}

inline std::string directory_of(const std::string& path) {
  const std::size_t slash = path.rfind('/');
  if (slash == std::string::npos) return ".";
  return slash == 0 ? "/" : path.substr(0, slash);
}

// The file a chain of symbolic links ends at, the link's own directory
// prepended to relative targets. Works for dangling links (the file the
// rename will create); a path that is no link comes back unchanged. Throws
// for a loop and for a link may_follow_link() refuses.
inline std::string follow_symlinks(std::string path) {
  const std::string given = path;
  for (int hops = 0; hops < 40; ++hops) {  // 40: Linux's own limit (ELOOP)
    struct stat status {};
    if (::lstat(path.c_str(), &status) != 0 || !S_ISLNK(status.st_mode)) return path;
    struct stat directory {};
    if (::stat(directory_of(path).c_str(), &directory) != 0)
      throw_write_error(given, "reading the directory of " + path, errno);
    if (!may_follow_link(status, directory, ::geteuid()))
      throw Error("cannot write " + given + ": " + path +
                  " is a symbolic link owned by another user in a sticky world-writable directory "
                  "(not followed, as the kernel's protected_symlinks rule)");
    std::string target(static_cast<std::size_t>(status.st_size > 0 ? status.st_size : PATH_MAX), '\0');
    const ssize_t length = ::readlink(path.c_str(), target.data(), target.size());
    if (length < 0) throw_write_error(path, "reading the symbolic link", errno);
    target.resize(static_cast<std::size_t>(length));
    if (target.empty() || target.front() == '/') {
      path = target;
    } else {
      const std::size_t slash = path.rfind('/');
      path = slash == std::string::npos ? target : path.substr(0, slash + 1) + target;
    }
  }
  throw_write_error(given, "following symbolic links", ELOOP);
}

// The standard stream (1 or 2) whose open file `status` describes, or -1.
inline int standard_stream_of(const struct stat& status) {
  for (const int stream : {STDOUT_FILENO, STDERR_FILENO}) {
    struct stat open_file {};
    if (::fstat(stream, &open_file) == 0 && open_file.st_dev == status.st_dev &&
        open_file.st_ino == status.st_ino)
      return stream;
  }
  return -1;
}

inline void write_to_stream(const std::string& path, int stream, std::string_view contents) {
  // What stdio (and std::cout, synced with stdio by default) holds comes first.
  std::fflush(stream == STDOUT_FILENO ? stdout : stderr);
  if (const int error_number = write_all(stream, contents)) throw_write_error(path, "writing", error_number);
}

// Devices, FIFOs, terminals: opened without O_CREAT, written, closed.
inline void write_in_place(const std::string& path, std::string_view contents) {
  const int descriptor = ::open(path.c_str(), O_WRONLY | O_NOCTTY | O_CLOEXEC);
  if (descriptor < 0) throw_write_error(path, "opening", errno);
  if (const int error_number = write_all(descriptor, contents)) {
    ::close(descriptor);
    throw_write_error(path, "writing", error_number);
  }
  if (::close(descriptor) != 0) throw_write_error(path, "closing", errno);
}

// Temporary beside `target`, then rename; `mode` is kept when replacing.
inline void replace_file(const std::string& path, const std::string& target, std::string_view contents,
                         const mode_t* existing_mode) {
  const std::string temporary = temporary_name_beside(target);
  const int descriptor = ::open(temporary.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
  if (descriptor < 0) throw_write_error(path, "cannot create " + temporary, errno);

  const auto fail = [&](const std::string& step, int error_number, bool still_open) {
    if (still_open) ::close(descriptor);
    ::unlink(temporary.c_str());
    throw_write_error(path, step, error_number);
  };
  if (existing_mode && ::fchmod(descriptor, *existing_mode & 07777) != 0)
    fail("keeping the permissions of " + target, errno, true);
  if (const int error_number = write_all(descriptor, contents))
    fail("writing " + temporary, error_number, true);
  if (::fsync(descriptor) != 0) fail("flushing " + temporary, errno, true);
  if (::close(descriptor) != 0) fail("closing " + temporary, errno, false);
  if (::rename(temporary.c_str(), target.c_str()) != 0)
    fail("renaming " + temporary + " onto " + target, errno, false);
}
}  // namespace detail

// Writes exactly `contents` to `path` as described at the top of this file.
// A new file gets the usual permissions (0666 less the umask); a replaced one
// keeps its own. Throws gpuprof::Error on failure.
inline void write_file_atomically(const std::string& path, std::string_view contents) {
  if (path.empty()) throw Error("cannot write a file with an empty path");
  if (path == "-") return detail::write_to_stream("standard output", STDOUT_FILENO, contents);

  struct stat status {};
  if (::stat(path.c_str(), &status) == 0) {
    if (S_ISDIR(status.st_mode)) detail::throw_write_error(path, "replacing", EISDIR);
    if (const int stream = detail::standard_stream_of(status); stream >= 0)
      return detail::write_to_stream(path, stream, contents);
    if (!S_ISREG(status.st_mode)) return detail::write_in_place(path, contents);
    return detail::replace_file(path, detail::follow_symlinks(path), contents, &status.st_mode);
  }
  detail::replace_file(path, detail::follow_symlinks(path), contents, nullptr);
}

GPUPROF_NAMESPACE_END
