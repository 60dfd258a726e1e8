// ddp/launcher.hpp: one process per GPU with nothing outside the project.
//
// launch_forked() forks `world` children, each running one rank, and waits:
// when a rank fails (non-zero exit, signal) or the run outlives its timeout,
// the others are terminated (SIGTERM, then SIGKILL after a grace period), so
// a dead rank never leaves the rest blocked in a collective forever.
//
// NCCL's unique id travels as opaque bytes from rank 0 to the others through
// an IdChannel: pipes the launcher opens before forking, or, for ranks started
// by another launcher (torchrun, mpirun: RANK / WORLD_SIZE set), a file.
//
// Nothing here touches CUDA: a parent that initialised the CUDA driver before
// fork() would leave its children unable to use it, so the parent asks
// questions that need CUDA (how many GPUs?) through run_in_child().
#pragma once
#include <chrono>
#include <cstddef>
#include <functional>
#include <string>

namespace transformer::ddp {

class IdChannel {
 public:
  virtual ~IdChannel() = default;
  virtual void publish(const std::string& id) = 0;     // rank 0
  virtual std::string receive(std::size_t bytes) = 0;  // ranks > 0; throws when none comes
  // Rank 0, once every rank holds the id (its communicator init returned).
  virtual void everyone_joined() {}
};

// Rank 0 writes the id to `path` atomically (a temporary file renamed), the
// other ranks wait for it up to `timeout`; rank 0 removes it once everyone
// joined. The path must not exist beforehand (rank 0 refuses: a stale id from
// an earlier run would send the others to a dead rendezvous).
class FileIdChannel final : public IdChannel {
 public:
  FileIdChannel(std::string path, std::chrono::milliseconds timeout);
  void publish(const std::string& id) override;
  std::string receive(std::size_t bytes) override;
  void everyone_joined() override;

 private:
  std::string path_;
  std::chrono::milliseconds timeout_;
};

struct LaunchOptions {
  int world = 1;
  std::chrono::milliseconds timeout{std::chrono::minutes(30)};  // the whole run
  std::chrono::milliseconds grace{std::chrono::seconds(5)};     // SIGTERM to SIGKILL
};

// What a rank runs: its exit status (0 = success). Exceptions escaping it
// are printed and count as status 1.
using RankMain = std::function<int(int rank, IdChannel& ids)>;

// Forks the ranks and waits for all of them. 0 when every rank exited 0;
// otherwise 1, after the failure (which rank, how) went to stderr and the
// other ranks were terminated. Throws std::runtime_error when it cannot fork.
int launch_forked(const LaunchOptions& options, const RankMain& rank_main);

// `question` run in a forked child; its answer, or std::runtime_error with
// the child's error message (what() of what it threw, or how it died).
std::string run_in_child(const std::function<std::string()>& question);

}  // namespace transformer::ddp
