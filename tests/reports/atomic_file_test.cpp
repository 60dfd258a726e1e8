// Tests of gpuprof::write_file_atomically: whole-or-nothing replacement of
// regular files, and every path that must not be renamed over (symbolic links,
// FIFOs, devices, standard output), full disks and unwritable directories.
#include <doctest/doctest.h>

#include <fcntl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <csignal>
#include <cstdio>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include <gpuprof/atomic_file.hpp>

#include "support/json_parse.hpp"
#include "support/temporary_directory.hpp"

namespace fs = std::filesystem;
using gpuprof_test::read_text_file;
using gpuprof_test::TemporaryDirectory;

namespace {

std::vector<std::string> sorted(std::vector<std::string> names) {
  std::sort(names.begin(), names.end());
  return names;
}

// The message of the gpuprof::Error that `write` throws; FAILs without one.
template <class Write>
std::string error_of(const Write& write) {
  try {
    write();
  } catch (const gpuprof::Error& error) {
    return error.what();
  }
  FAIL("no gpuprof::Error thrown");
  return "";
}

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

// Points file descriptor `stream` at `path` until destroyed.
class RedirectedStream {
 public:
  RedirectedStream(int stream, const std::string& path) : stream_(stream) {
    std::fflush(nullptr);
    saved_ = ::dup(stream);
    const int file = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    REQUIRE(saved_ >= 0);
    REQUIRE(file >= 0);
    REQUIRE(::dup2(file, stream) == stream);
    ::close(file);
  }
  ~RedirectedStream() {
    std::fflush(nullptr);
    ::dup2(saved_, stream_);
    ::close(saved_);
  }
  RedirectedStream(const RedirectedStream&) = delete;
  RedirectedStream& operator=(const RedirectedStream&) = delete;

 private:
  int stream_;
  int saved_ = -1;
};

// Lowers the file size limit (writes past it fail with EFBIG, the signal
// ignored) until destroyed: a short write on an ordinary file system.
class FileSizeLimit {
 public:
  explicit FileSizeLimit(rlim_t bytes) {
    previous_signal_ = std::signal(SIGXFSZ, SIG_IGN);
    REQUIRE(::getrlimit(RLIMIT_FSIZE, &previous_) == 0);
    rlimit lowered = previous_;
    lowered.rlim_cur = bytes;
    REQUIRE(::setrlimit(RLIMIT_FSIZE, &lowered) == 0);
  }
  ~FileSizeLimit() {
    ::setrlimit(RLIMIT_FSIZE, &previous_);
    std::signal(SIGXFSZ, previous_signal_);
  }
  FileSizeLimit(const FileSizeLimit&) = delete;
  FileSizeLimit& operator=(const FileSizeLimit&) = delete;

 private:
  rlimit previous_{};
  void (*previous_signal_)(int) = SIG_DFL;
};

}  // namespace

TEST_CASE("files are replaced whole and keep their permissions") {
  TemporaryDirectory dir;
  const std::string path = dir.file("out.txt");
  gpuprof::write_file_atomically(path, "first version, longer than the second");
  fs::permissions(path, fs::perms::owner_read | fs::perms::owner_write | fs::perms::group_read);
  gpuprof::write_file_atomically(path, "second");
  CHECK(read_text_file(path) == "second");
  CHECK(fs::status(path).permissions() ==
        (fs::perms::owner_read | fs::perms::owner_write | fs::perms::group_read));
  CHECK(dir.entries() == std::vector<std::string>{"out.txt"});
}

TEST_CASE("a symbolic link is followed: the file it names is replaced, the link stays") {
  TemporaryDirectory dir;
  fs::create_directory(dir.file("runs"));
  const std::string run42 = dir.file("runs/run42.json");
  const std::string latest = dir.file("latest.json");
  gpuprof::write_file_atomically(run42, "old");
  fs::create_symlink("runs/run42.json", latest);  // relative to the link's directory

  gpuprof::write_file_atomically(latest, "new");
  CHECK(fs::is_symlink(latest));
  CHECK(fs::read_symlink(latest) == "runs/run42.json");
  CHECK(read_text_file(run42) == "new");
  CHECK(sorted(dir.entries()) == std::vector<std::string>{"latest.json", "runs"});
  std::vector<std::string> runs;
  for (const auto& entry : fs::directory_iterator(dir.file("runs")))
    runs.push_back(entry.path().filename().string());
  CHECK(runs == std::vector<std::string>{"run42.json"});  // the temporary went beside the target

  SUBCASE("a link to a link") {
    const std::string newest = dir.file("newest.json");
    fs::create_symlink(latest, newest);  // absolute target
    gpuprof::write_file_atomically(newest, "newer");
    CHECK(fs::is_symlink(newest));
    CHECK(fs::is_symlink(latest));
    CHECK(read_text_file(run42) == "newer");
  }
  SUBCASE("a dangling link creates the file it names") {
    fs::remove(run42);
    gpuprof::write_file_atomically(latest, "created");
    CHECK(fs::is_symlink(latest));
    CHECK(fs::is_regular_file(fs::symlink_status(run42)));
    CHECK(read_text_file(run42) == "created");
  }
  SUBCASE("a loop of links is an error, not a hang") {
    fs::create_symlink("loop-b", dir.file("loop-a"));
    fs::create_symlink("loop-a", dir.file("loop-b"));
    CHECK(contains(error_of([&] { gpuprof::write_file_atomically(dir.file("loop-a"), "x"); }),
                   dir.file("loop-a")));
    CHECK(fs::is_symlink(dir.file("loop-a")));
  }
}

TEST_CASE("a FIFO is written in place, never renamed over") {
  TemporaryDirectory dir;
  const std::string fifo = dir.file("pipe");
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  std::string received;
  std::thread reader([&] { received = read_text_file(fifo); });  // blocks until the writer opens
  const std::string contents(100000, 'x');  // more than a pipe buffer: the reader must drain it
  gpuprof::write_file_atomically(fifo, contents);
  reader.join();
  CHECK(received == contents);
  CHECK(fs::is_fifo(fifo));
  CHECK(dir.entries() == std::vector<std::string>{"pipe"});
}

TEST_CASE("a character device is written in place; a full one is an error") {
  if (!fs::is_character_file("/dev/full") || !fs::is_character_file("/dev/null")) {
    MESSAGE("skipped: this system has no /dev/full or /dev/null");
    return;
  }
  gpuprof::write_file_atomically("/dev/null", "discarded");
  CHECK(fs::is_character_file("/dev/null"));

  const std::string message = error_of([] { gpuprof::write_file_atomically("/dev/full", "data"); });
  CHECK(contains(message, "/dev/full"));
  CHECK(contains(message, "No space left on device"));
  CHECK(fs::is_character_file("/dev/full"));  // a regular file there would be the old bug
  CHECK(std::none_of(fs::directory_iterator("/dev"), fs::directory_iterator(), [](const auto& entry) {
    return entry.path().filename().string().rfind("full.tmp-", 0) == 0;
  }));
}

TEST_CASE("a short write fails, leaves the old file and no temporary") {
  TemporaryDirectory dir;
  const std::string path = dir.file("report.json");
  gpuprof::write_file_atomically(path, "old contents");
  std::string message;
  {
    const FileSizeLimit limit(64);  // the write stops at 64 bytes with EFBIG
    message = error_of([&] { gpuprof::write_file_atomically(path, std::string(4096, 'y')); });
  }
  CHECK(contains(message, path));
  CHECK(contains(message, "File too large"));
  CHECK(read_text_file(path) == "old contents");
  CHECK(dir.entries() == std::vector<std::string>{"report.json"});
}

TEST_CASE("- and /dev/stdout write to standard output, at its offset") {
  TemporaryDirectory dir;
  const std::string captured = dir.file("captured.txt");
  {
    const RedirectedStream redirect(STDOUT_FILENO, captured);
    std::printf("printed first\n");  // buffered by stdio: must come out before our bytes
    gpuprof::write_file_atomically("-", "through -\n");
    if (fs::exists("/dev/stdout")) gpuprof::write_file_atomically("/dev/stdout", "through /dev/stdout\n");
    else std::printf("through /dev/stdout\n");  // no /dev/stdout here: keep the expectation
  }
  CHECK(read_text_file(captured) == "printed first\nthrough -\nthrough /dev/stdout\n");
  CHECK(dir.entries() == std::vector<std::string>{"captured.txt"});  // same file, not replaced
}

TEST_CASE("a read-only directory is an error that leaves nothing behind") {
  TemporaryDirectory dir;
  const std::string locked = dir.file("locked");
  fs::create_directory(locked);
  fs::permissions(dir.path(), fs::perms::owner_all | fs::perms::others_exec | fs::perms::group_exec);
  fs::permissions(locked, fs::perms::owner_read | fs::perms::owner_exec | fs::perms::group_read |
                              fs::perms::group_exec | fs::perms::others_read | fs::perms::others_exec);
  const std::string path = locked + "/report.json";
  const auto check_refused = [&] {
    const std::string message = error_of([&] { gpuprof::write_file_atomically(path, "x"); });
    return contains(message, path) && contains(message, "Permission denied") && fs::is_empty(locked);
  };
  if (::geteuid() != 0) {
    CHECK(check_refused());
    return;
  }
  // Root writes into read-only directories, so the check runs in a child
  // process that gives up root for the unprivileged user "nobody" (65534).
  const pid_t child = ::fork();
  REQUIRE(child >= 0);
  if (child == 0) {
    if (::setgid(65534) != 0 || ::setuid(65534) != 0) ::_exit(3);
    bool refused = false;
    try {
      refused = check_refused();
    } catch (...) {
    }
    ::_exit(refused ? 0 : 1);
  }
  int status = 0;
  REQUIRE(::waitpid(child, &status, 0) == child);
  REQUIRE(WIFEXITED(status));
  if (WEXITSTATUS(status) == 3) {
    MESSAGE("skipped: running as root and cannot switch to an unprivileged user");
    return;
  }
  CHECK(WEXITSTATUS(status) == 0);
  CHECK(fs::is_empty(locked));
}
