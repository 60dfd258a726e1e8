// gpuprof/atomic_file.hpp: write a file whole or not at all, and never destroy
// what the path names.
//
// A regular file (or a path that does not exist yet) is replaced atomically:
// the contents go to a fresh temporary file beside it (so the final rename
// stays on one file system), are flushed to disk, and the temporary is renamed
// over it. A reader sees the old file or the complete new one, never half of
// one, even if the process dies midway. Other paths keep what they are:
// A symbolic link is followed (the kernel's protected-symlinks rule applied
// here), a file the writer may not write is refused, "-" is standard output,
// and a device or FIFO is written in place. Any failure throws gpuprof::Error
// naming the path, the previous file untouched; SIGINT, SIGTERM and SIGHUP
// remove a temporary being written. Every case, and why:
// docs/output-files.md#how-a-file-is-written-atomic_filehpp. POSIX only.
#pragma once
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <climits>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

#include "config.hpp"
#include "error.hpp"

GPUPROF_NAMESPACE_BEGIN

namespace detail {
[[noreturn]] inline void throw_write_error(const std::string& path, const std::string& step,
                                           int error_number) {
  throw Error("cannot write " + path + ": " + step + ": " +
              std::error_code(error_number, std::generic_category()).message());
}

// The temporary's name: the file's own name, cut short where needed so that
// the name with its suffix stays within NAME_MAX, then ".tmp-PID-N". The
// process id and a counter make it a name no other writer (thread or
// process) uses at the same moment; O_EXCL at creation guards against the
// rest (a stale file left by a killed process).
inline constexpr std::size_t temporary_suffix_max = 36;  // ".tmp-" + 10 digits + "-" + 20 digits
inline std::string temporary_name_beside(const std::string& path,
                                         unsigned long long number = static_cast<unsigned long long>(-1)) {
  static std::atomic<unsigned long long> counter{0};
  if (number == static_cast<unsigned long long>(-1)) number = counter.fetch_add(1);
  const std::string suffix =
      ".tmp-" + std::to_string(static_cast<long>(::getpid())) + "-" + std::to_string(number);
  const std::size_t slash = path.rfind('/');
  const std::size_t name_begins = slash == std::string::npos ? 0 : slash + 1;
  const std::size_t name_fits = NAME_MAX - suffix.size();
  return path.substr(0, name_begins + std::min(path.size() - name_begins, name_fits)) + suffix;
}

// The temporaries being written, for the signal handler: fixed slots that
// need no allocation or lock to read. A slot is free (0), being filled (1)
// or holds a path (2).
struct TemporarySlot {
  std::atomic<int> state{0};
  char path[PATH_MAX];
};
inline constexpr int temporary_slot_count = 16;
inline TemporarySlot temporary_slots[temporary_slot_count];

inline void remove_temporaries_and_raise(int signal_number) {
  for (TemporarySlot& slot : temporary_slots)
    if (slot.state.load() == 2) ::unlink(slot.path);
  // SA_RESETHAND restored the default action; the signal is blocked until
  // this handler returns, then ends the process as it would have.
  ::raise(signal_number);
}

// Checked at every write (three sigaction calls), not once: a program that
// puts a signal back to its default action later is covered again.
inline void install_temporary_removal() {
  for (const int signal_number : {SIGINT, SIGTERM, SIGHUP}) {
    struct sigaction current {};
    if (::sigaction(signal_number, nullptr, &current) != 0 || (current.sa_flags & SA_SIGINFO) ||
        current.sa_handler != SIG_DFL)
      continue;  // ignored, ours already, or the program's own handler: left as it is
    struct sigaction removal {};
    removal.sa_handler = &remove_temporaries_and_raise;
    sigemptyset(&removal.sa_mask);
    removal.sa_flags = SA_RESETHAND;
    ::sigaction(signal_number, &removal, nullptr);
  }
}

// Registers a temporary for removal on a signal while it lives. Without a
// free slot (more than 16 writes at once) the temporary goes unregistered:
// it is still removed on every error, only not on a signal.
class RegisteredTemporary {
 public:
  explicit RegisteredTemporary(const std::string& path) {
    install_temporary_removal();
    if (path.size() >= PATH_MAX) return;
    for (TemporarySlot& candidate : temporary_slots) {
      int free = 0;
      if (!candidate.state.compare_exchange_strong(free, 1)) continue;
      std::memcpy(candidate.path, path.c_str(), path.size() + 1);
      candidate.state.store(2);
      slot_ = &candidate;
      return;
    }
  }
  ~RegisteredTemporary() {
    if (slot_) slot_->state.store(0);
  }
  RegisteredTemporary(const RegisteredTemporary&) = delete;
  RegisteredTemporary& operator=(const RegisteredTemporary&) = delete;

 private:
  TemporarySlot* slot_ = nullptr;
};

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

// The file `given` names once every symbolic link in it is followed, in any
// component (a link's target replaces it, relative targets read from the
// link's directory); `given` itself when it holds no link. Works for
// dangling links (the file the rename will create). Throws for a loop and
// for a link may_follow_link() refuses, wherever it sits in the path.
inline std::string follow_symlinks(const std::string& given) {
  std::vector<std::string> pending;  // components still to walk, the next one last
  const auto push_front = [&pending](const std::string& path) {
    std::vector<std::string> components;
    for (std::size_t begin = 0; begin <= path.size();) {
      const std::size_t slash = std::min(path.find('/', begin), path.size());
      if (slash > begin && path.compare(begin, slash - begin, ".") != 0)
        components.push_back(path.substr(begin, slash - begin));
      begin = slash + 1;
    }
    pending.insert(pending.end(), components.rbegin(), components.rend());
  };
  push_front(given);
  std::string resolved = !given.empty() && given.front() == '/' ? "/" : "";
  bool followed = false;
  for (int hops = 0; !pending.empty();) {
    const std::string candidate =
        resolved.empty() ? pending.back() : resolved + (resolved.back() == '/' ? "" : "/") + pending.back();
    pending.pop_back();
    struct stat status {};
    if (::lstat(candidate.c_str(), &status) != 0 || !S_ISLNK(status.st_mode)) {
      resolved = candidate;
      continue;
    }
    if (++hops > 40) throw_write_error(given, "following symbolic links", ELOOP);  // Linux's own limit
    struct stat directory {};
    if (::stat(resolved.empty() ? "." : resolved.c_str(), &directory) != 0)
      throw_write_error(given, "reading the directory of " + candidate, errno);
    if (!may_follow_link(status, directory, ::geteuid()))
      throw Error("cannot write " + given + ": " + candidate +
                  " is a symbolic link owned by another user in a sticky world-writable directory "
                  "(not followed, as the kernel's protected_symlinks rule)");
    std::string target(static_cast<std::size_t>(status.st_size > 0 ? status.st_size : PATH_MAX), '\0');
    const ssize_t length = ::readlink(candidate.c_str(), target.data(), target.size());
    if (length <= 0) throw_write_error(candidate, "reading the symbolic link", length < 0 ? errno : ENOENT);
    target.resize(static_cast<std::size_t>(length));
    if (target.front() == '/') resolved = "/";
    push_front(target);
    followed = true;
  }
  return followed ? resolved : given;
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
  const RegisteredTemporary registered(temporary);  // before it exists: no moment unregistered
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
    if (::access(path.c_str(), W_OK) != 0) detail::throw_write_error(path, "replacing it", errno);
    return detail::replace_file(path, detail::follow_symlinks(path), contents, &status.st_mode);
  }
  detail::replace_file(path, detail::follow_symlinks(path), contents, nullptr);
}

GPUPROF_NAMESPACE_END
