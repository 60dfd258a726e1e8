// ddp/trainer.cpp: the hook, the buckets' all-reduces and the stream ordering.
#include "ddp/trainer.hpp"

#include <exception>

#include <gpuprof/scope.hpp>

#include "common/cuda_check.hpp"
#include "ddp/nccl_check.hpp"

namespace transformer::ddp {

DataParallelTrainer::DataParallelTrainer(Backend& backend, Communicator& comm, std::size_t bucket_cap)
    : backend_(backend), comm_(comm), grads_(backend.gradient_buffer()), planner_(grads_.count, bucket_cap) {
  if (backend.config().mode != Mode::step)
    throw std::invalid_argument("DataParallelTrainer: the backend must be built for Mode::step");
  backend_.set_gradient_ready_hook([this](GradientRange ready) { on_gradients_ready(ready); });
}

DataParallelTrainer::~DataParallelTrainer() {
  // The streams' work finished or the communicator is being aborted; either
  // way nothing waits on the events any more. A backend that refuses to drop
  // the hook (inside a capture) has nothing left to call it after this.
  try {
    backend_.set_gradient_ready_hook({});
  } catch (const std::exception&) {
  }
}

void DataParallelTrainer::on_gradients_ready(GradientRange ready) {
  if (const auto bucket = planner_.add(ready)) reduce(*bucket);
}

void DataParallelTrainer::reduce(GradientRange bucket) {
  GPUPROF_CUDA_CHECK(cudaEventRecord(gradients_written_.get(), backend_.stream()));
  GPUPROF_CUDA_CHECK(cudaStreamWaitEvent(comm_stream_.get(), gradients_written_.get(), 0));
  GPUPROF_SCOPE("all-reduce", comm_stream_.get(),
                gpuprof::Work{0, 2.0 * static_cast<double>(bucket.size() * grads_.element_bytes())});
  void* data = static_cast<char*>(grads_.data) + bucket.begin * grads_.element_bytes();
  const ncclDataType_t type = grads_.type == GradientType::bf16 ? ncclBfloat16 : ncclFloat;
  DDP_NCCL_CHECK(ncclAllReduce(data, data, bucket.size(), type, ncclAvg, comm_.get(), comm_stream_.get()));
  if (buckets_.size() == bucket_reduced_.size()) bucket_reduced_.emplace_back();
  const cudaEvent_t reduced = bucket_reduced_[buckets_.size()].get();
  GPUPROF_CUDA_CHECK(cudaEventRecord(reduced, comm_stream_.get()));
  backend_.gradients_final_after(bucket, reduced);
  buckets_.push_back(bucket);
}

void DataParallelTrainer::wait_for_reductions() {
  if (const auto last = planner_.finish()) reduce(*last);
  GPUPROF_CUDA_CHECK(cudaEventRecord(reductions_done_.get(), comm_stream_.get()));
  GPUPROF_CUDA_CHECK(cudaStreamWaitEvent(backend_.stream(), reductions_done_.get(), 0));
}

void DataParallelTrainer::forward_backward() { run(/*optimizer=*/false); }
void DataParallelTrainer::step() { run(/*optimizer=*/true); }

void DataParallelTrainer::run(bool optimizer) {
  const gpuprof::Stream stream = backend_.stream();
  {
    GPUPROF_SCOPE("forward", stream);
    backend_.forward();
  }
  {
    GPUPROF_SCOPE("backward", stream);
    buckets_.clear();
    backend_.backward();
    wait_for_reductions();
  }
  if (!optimizer) return;
  GPUPROF_SCOPE("optimizer step", stream);
  backend_.optimizer_step();
}

}  // namespace transformer::ddp
