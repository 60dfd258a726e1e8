// ddp/communicator.hpp: one rank's NCCL communicator. Rank 0 makes NCCL's
// unique id and hands it over an IdChannel; every rank joins. The destructor
// aborts a communicator that was not finalized (ncclCommAbort: an error left
// it, maybe inside a collective a dead peer will never finish), so a failing
// rank exits instead of waiting on the others.
#pragma once
#include <vector>

#include <cuda_runtime_api.h>
#include <nccl.h>

#include "ddp/launcher.hpp"

namespace transformer::ddp {

class Communicator {
 public:
  // Needs the rank's device current (cudaSetDevice).
  Communicator(IdChannel& ids, int rank, int world);
  ~Communicator();
  Communicator(const Communicator&) = delete;
  Communicator& operator=(const Communicator&) = delete;

  ncclComm_t get() const { return comm_; }
  int rank() const { return rank_; }
  int world() const { return world_; }

  // Every rank's `mine` (the same length on every rank), in rank order.
  // Collective: every rank calls it; waits for the result.
  std::vector<double> all_gather(const std::vector<double>& mine, cudaStream_t stream);

  // Completes outstanding work and frees the communicator (collective).
  void finalize();

 private:
  ncclComm_t comm_ = nullptr;
  int rank_, world_;
};

}  // namespace transformer::ddp
