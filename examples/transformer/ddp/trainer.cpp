// ddp/trainer.cpp: the hook, the buckets' all-reduces and the stream ordering.
#include "ddp/trainer.hpp"

#include <gpuprof/scope.hpp>

#include "common/cuda_check.hpp"
#include "ddp/nccl_check.hpp"

namespace transformer::ddp {

DataParallelTrainer::DataParallelTrainer(Backend& backend, Communicator& comm,
                                         std::size_t bucket_cap)
    : backend_(backend), comm_(comm), grads_(backend.gradient_buffer()),
      planner_(grads_.count, bucket_cap) {
  if (backend.config().mode != Mode::step)
    throw std::invalid_argument("DataParallelTrainer: the backend must be built for Mode::step");
  // Priority over the compute stream, so a reduction's kernels start as soon
  // as the SMs the backward GEMMs leave free allow.
  int least = 0, greatest = 0;
  GPUPROF_CUDA_CHECK(cudaDeviceGetStreamPriorityRange(&least, &greatest));
  GPUPROF_CUDA_CHECK(cudaStreamCreateWithPriority(&comm_stream_, cudaStreamNonBlocking, greatest));
  GPUPROF_CUDA_CHECK(cudaEventCreateWithFlags(&gradients_written_, cudaEventDisableTiming));
  GPUPROF_CUDA_CHECK(cudaEventCreateWithFlags(&reductions_done_, cudaEventDisableTiming));
  backend_.set_gradient_ready_hook([this](GradientRange ready) { on_gradients_ready(ready); });
}

DataParallelTrainer::~DataParallelTrainer() {
  backend_.set_gradient_ready_hook({});
  // The stream's work finished or the communicator is being aborted; either
  // way nothing waits on these any more.
  cudaEventDestroy(reductions_done_);
  for (const cudaEvent_t event : bucket_reduced_) cudaEventDestroy(event);
  cudaEventDestroy(gradients_written_);
  cudaStreamDestroy(comm_stream_);
}

void DataParallelTrainer::on_gradients_ready(GradientRange ready) {
  if (const auto bucket = planner_.add(ready)) reduce(*bucket);
}

void DataParallelTrainer::reduce(GradientRange bucket) {
  GPUPROF_CUDA_CHECK(cudaEventRecord(gradients_written_, backend_.stream()));
  GPUPROF_CUDA_CHECK(cudaStreamWaitEvent(comm_stream_, gradients_written_, 0));
  GPUPROF_SCOPE("all-reduce", comm_stream_,
                gpuprof::Work{0, 2.0 * static_cast<double>(bucket.size() * sizeof(float))});
  float* data = grads_.data + bucket.begin;
  DDP_NCCL_CHECK(
      ncclAllReduce(data, data, bucket.size(), ncclFloat, ncclAvg, comm_.get(), comm_stream_));
  if (buckets_.size() == bucket_reduced_.size()) {
    cudaEvent_t event = nullptr;
    GPUPROF_CUDA_CHECK(cudaEventCreateWithFlags(&event, cudaEventDisableTiming));
    bucket_reduced_.push_back(event);
  }
  const cudaEvent_t reduced = bucket_reduced_[buckets_.size()];
  GPUPROF_CUDA_CHECK(cudaEventRecord(reduced, comm_stream_));
  backend_.gradients_final_after(bucket, reduced);
  buckets_.push_back(bucket);
}

void DataParallelTrainer::wait_for_reductions() {
  if (const auto last = planner_.finish()) reduce(*last);
  GPUPROF_CUDA_CHECK(cudaEventRecord(reductions_done_, comm_stream_));
  GPUPROF_CUDA_CHECK(cudaStreamWaitEvent(backend_.stream(), reductions_done_, 0));
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
