// ddp/communicator.cpp: joining, gathering, finalizing and aborting.
#include "ddp/communicator.hpp"

#include <cstdio>
#include <cstring>
#include <string>

#include "common/cuda_check.hpp"
#include "ddp/nccl_check.hpp"

namespace transformer::ddp {

Communicator::Communicator(IdChannel& ids, int rank, int world) : rank_(rank), world_(world) {
  // A world of one has no one to tell (and a launched single rank no id file).
  const bool share = world > 1;
  ncclUniqueId id{};
  if (rank == 0) {
    DDP_NCCL_CHECK(ncclGetUniqueId(&id));
    if (share) ids.publish(std::string(id.internal, sizeof id.internal));
  } else {
    const std::string bytes = ids.receive(sizeof id.internal);
    std::memcpy(id.internal, bytes.data(), sizeof id.internal);
  }
  DDP_NCCL_CHECK(ncclCommInitRank(&comm_, world, id, rank));
  // Init returns once every rank joined: they all hold the id now.
  if (rank == 0 && share) ids.everyone_joined();
}

Communicator::~Communicator() {
  if (comm_ == nullptr) return;
  const ncclResult_t status = ncclCommAbort(comm_);
  if (status != ncclSuccess)
    std::fprintf(stderr, "rank %d: ncclCommAbort failed: %s\n", rank_, ncclGetErrorString(status));
}

std::vector<double> Communicator::all_gather(const std::vector<double>& mine, cudaStream_t stream) {
  const std::size_t count = mine.size();
  double* device = nullptr;
  GPUPROF_CUDA_CHECK(cudaMalloc(&device, count * world_ * sizeof(double)));
  std::vector<double> all(count * world_);
  try {
    GPUPROF_CUDA_CHECK(cudaMemcpyAsync(device + count * rank_, mine.data(), count * sizeof(double),
                                       cudaMemcpyHostToDevice, stream));
    DDP_NCCL_CHECK(ncclAllGather(device + count * rank_, device, count, ncclDouble, comm_, stream));
    GPUPROF_CUDA_CHECK(
        cudaMemcpyAsync(all.data(), device, all.size() * sizeof(double), cudaMemcpyDeviceToHost, stream));
    GPUPROF_CUDA_CHECK(cudaStreamSynchronize(stream));
  } catch (...) {
    cudaFree(device);
    throw;
  }
  GPUPROF_CUDA_CHECK(cudaFree(device));
  return all;
}

void Communicator::finalize() {
  DDP_NCCL_CHECK(ncclCommFinalize(comm_));
  DDP_NCCL_CHECK(ncclCommDestroy(comm_));
  comm_ = nullptr;
}

}  // namespace transformer::ddp
