// ddp/launcher.cpp: fork, the id pipes and file, the waiting and the killing.
#include "ddp/launcher.hpp"

#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <exception>
#include <fstream>
#include <iterator>
#include <memory>
#include <stdexcept>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>
#include <vector>

namespace transformer::ddp {
namespace {

using Clock = std::chrono::steady_clock;
constexpr std::chrono::milliseconds kPoll{20};

std::runtime_error system_error(const std::string& what) {
  return std::runtime_error(what + ": " + std::strerror(errno));
}

void close_fd(int& fd) {
  if (fd >= 0) ::close(fd);
  fd = -1;
}

void write_all(int fd, const std::string& bytes) {
  std::size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) throw system_error("write to a pipe");
    done += static_cast<std::size_t>(n);
  }
}

// Everything until the writer closes its end.
std::string read_to_end(int fd) {
  std::string text;
  char chunk[4096];
  for (;;) {
    const ssize_t n = ::read(fd, chunk, sizeof chunk);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) throw system_error("read from a pipe");
    if (n == 0) return text;
    text.append(chunk, static_cast<std::size_t>(n));
  }
}

struct Pipe {
  int read = -1, write = -1;
  Pipe() {
    int fds[2];
    if (::pipe(fds) != 0) throw system_error("pipe");
    read = fds[0];
    write = fds[1];
  }
  ~Pipe() { close(); }
  Pipe(const Pipe&) = delete;
  Pipe& operator=(const Pipe&) = delete;
  void close() {
    close_fd(read);
    close_fd(write);
  }
};

// Rank 0 writes the id into every other rank's pipe; rank r reads its own.
// The parent closes its copies after forking, so when rank 0 dies first the
// readers see end of file instead of waiting forever.
class PipeIdChannel final : public IdChannel {
 public:
  PipeIdChannel(int rank, std::vector<std::unique_ptr<Pipe>>& pipes) : rank_(rank), pipes_(pipes) {}
  void publish(const std::string& id) override {
    for (std::size_t r = 1; r < pipes_.size(); ++r) {
      write_all(pipes_[r]->write, id);
      close_fd(pipes_[r]->write);
    }
  }
  std::string receive(std::size_t bytes) override {
    const std::string id = read_to_end(pipes_[static_cast<std::size_t>(rank_)]->read);
    if (id.size() != bytes)
      throw std::runtime_error("rank " + std::to_string(rank_) + " got " + std::to_string(id.size()) +
                               " of NCCL's " + std::to_string(bytes) +
                               "-byte unique id from rank 0 (did rank 0 fail?)");
    return id;
  }

 private:
  int rank_;
  std::vector<std::unique_ptr<Pipe>>& pipes_;
};

// In a child: keeps only the pipe ends its rank uses.
void keep_own_ends(int rank, std::vector<std::unique_ptr<Pipe>>& pipes) {
  for (std::size_t r = 1; r < pipes.size(); ++r) {
    if (rank == 0) close_fd(pipes[r]->read);
    else if (static_cast<std::size_t>(rank) == r) close_fd(pipes[r]->write);
    else pipes[r]->close();
  }
}

[[noreturn]] void exit_child(int status) {
  std::fflush(stdout);
  std::fflush(stderr);
  ::_exit(status);
}

std::string describe_status(int status) {
  if (WIFEXITED(status)) return "exited with status " + std::to_string(WEXITSTATUS(status));
  if (WIFSIGNALED(status)) return std::string("was killed by signal ") + strsignal(WTERMSIG(status));
  return "stopped";
}

struct Child {
  pid_t pid = -1;
  bool running = false;
};

// Reaps what has exited; the first failure found, or "".
std::string reap(std::vector<Child>& children) {
  std::string failure;
  for (std::size_t rank = 0; rank < children.size(); ++rank) {
    Child& child = children[rank];
    if (!child.running) continue;
    int status = 0;
    const pid_t done = ::waitpid(child.pid, &status, WNOHANG);
    if (done == 0) continue;
    if (done < 0 && errno == EINTR) continue;
    child.running = false;
    const bool ok = done == child.pid && WIFEXITED(status) && WEXITSTATUS(status) == 0;
    if (!ok && failure.empty())
      failure = "rank " + std::to_string(rank) + " " +
                (done < 0 ? std::string("could not be waited for") : describe_status(status));
  }
  return failure;
}

bool any_running(const std::vector<Child>& children) {
  for (const Child& child : children)
    if (child.running) return true;
  return false;
}

void signal_running(const std::vector<Child>& children, int signal) {
  for (const Child& child : children)
    if (child.running) ::kill(child.pid, signal);
}

// SIGTERM, then SIGKILL for those still there after the grace period.
void terminate_all(std::vector<Child>& children, std::chrono::milliseconds grace) {
  signal_running(children, SIGTERM);
  const Clock::time_point deadline = Clock::now() + grace;
  while (any_running(children) && Clock::now() < deadline) {
    reap(children);
    std::this_thread::sleep_for(kPoll);
  }
  signal_running(children, SIGKILL);
  while (any_running(children)) {
    reap(children);
    std::this_thread::sleep_for(kPoll);
  }
}

}  // namespace

FileIdChannel::FileIdChannel(std::string path, std::chrono::milliseconds timeout)
    : path_(std::move(path)), timeout_(timeout) {}

void FileIdChannel::publish(const std::string& id) {
  struct stat info {};
  if (::stat(path_.c_str(), &info) == 0)
    throw std::runtime_error("NCCL id file " + path_ +
                             " exists already (left by an earlier run?): remove it or pick a new "
                             "path; the other ranks may have read a stale id");
  const std::string temporary = path_ + ".tmp." + std::to_string(::getpid());
  {
    std::ofstream out(temporary, std::ios::binary);
    out.write(id.data(), static_cast<std::streamsize>(id.size()));
    if (!out.flush()) throw std::runtime_error("cannot write NCCL id file " + temporary);
  }
  if (std::rename(temporary.c_str(), path_.c_str()) != 0)
    throw system_error("rename " + temporary + " to " + path_);
}

std::string FileIdChannel::receive(std::size_t bytes) {
  const Clock::time_point deadline = Clock::now() + timeout_;
  for (;;) {
    // The file appears whole (rename), so any readable file is the id.
    std::ifstream in(path_, std::ios::binary);
    if (in) {
      const std::string id((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
      if (id.size() != bytes)
        throw std::runtime_error("NCCL id file " + path_ + " holds " + std::to_string(id.size()) +
                                 " bytes, expected " + std::to_string(bytes));
      return id;
    }
    if (Clock::now() >= deadline)
      throw std::runtime_error("no NCCL id file " + path_ + " after " + std::to_string(timeout_.count()) +
                               " ms (is rank 0 running?)");
    std::this_thread::sleep_for(kPoll);
  }
}

void FileIdChannel::everyone_joined() {
  if (std::remove(path_.c_str()) != 0) throw system_error("remove NCCL id file " + path_);
}

int launch_forked(const LaunchOptions& options, const RankMain& rank_main) {
  if (options.world < 1) throw std::invalid_argument("launch_forked: world must be at least 1");
  std::vector<std::unique_ptr<Pipe>> pipes;
  pipes.push_back(nullptr);  // rank 0 receives nothing
  for (int r = 1; r < options.world; ++r) pipes.push_back(std::make_unique<Pipe>());

  std::fflush(stdout);  // buffered output would be written again by every child
  std::fflush(stderr);
  std::vector<Child> children(static_cast<std::size_t>(options.world));
  const pid_t parent = ::getpid();
  for (int rank = 0; rank < options.world; ++rank) {
    const pid_t pid = ::fork();
    if (pid < 0) {
      const std::runtime_error error = system_error("fork rank " + std::to_string(rank));
      terminate_all(children, options.grace);
      throw error;
    }
    if (pid == 0) {
      // A launcher killed outright (SIGKILL, a job scheduler) cannot stop its
      // ranks: the kernel does, so none is left holding a GPU. (Linux)
      if (::prctl(PR_SET_PDEATHSIG, SIGKILL) != 0 || ::getppid() != parent) exit_child(1);
      int status = 1;
      try {
        keep_own_ends(rank, pipes);
        PipeIdChannel ids(rank, pipes);
        status = rank_main(rank, ids);
      } catch (const std::exception& error) {
        std::fprintf(stderr, "rank %d: error: %s\n", rank, error.what());
      }
      exit_child(status);
    }
    children[static_cast<std::size_t>(rank)] = Child{pid, true};
  }
  for (auto& pipe : pipes)
    if (pipe) pipe->close();

  const Clock::time_point deadline = Clock::now() + options.timeout;
  std::string failure;
  while (any_running(children) && failure.empty()) {
    failure = reap(children);
    if (failure.empty() && Clock::now() >= deadline)
      failure = "the run exceeded its timeout of " + std::to_string(options.timeout.count()) + " ms";
    if (failure.empty()) std::this_thread::sleep_for(kPoll);
  }
  if (failure.empty()) return 0;
  std::fprintf(stderr, "transformer_ddp: %s; terminating the other ranks\n", failure.c_str());
  terminate_all(children, options.grace);
  return 1;
}

std::string run_in_child(const std::function<std::string()>& question) {
  Pipe answer;
  std::fflush(stdout);
  std::fflush(stderr);
  const pid_t pid = ::fork();
  if (pid < 0) throw system_error("fork");
  if (pid == 0) {
    close_fd(answer.read);
    int status = 0;
    std::string reply;
    try {
      reply = question();
    } catch (const std::exception& error) {
      reply = error.what();
      status = 1;
    }
    try {
      write_all(answer.write, reply);
    } catch (const std::exception&) {
      status = 2;
    }
    exit_child(status);
  }
  close_fd(answer.write);
  const std::string reply = read_to_end(answer.read);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0)
    if (errno != EINTR) throw system_error("waitpid");
  if (WIFEXITED(status) && WEXITSTATUS(status) == 0) return reply;
  if (WIFEXITED(status) && WEXITSTATUS(status) == 1) throw std::runtime_error(reply);
  throw std::runtime_error("the child process " + describe_status(status));
}

}  // namespace transformer::ddp
