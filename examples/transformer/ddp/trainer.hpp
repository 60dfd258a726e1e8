// ddp/trainer.hpp: the data-parallel train step. forward() and backward() of
// the backend as transformer_bench runs them; during backward, each bucket of
// gradients (buckets.hpp) is averaged over the ranks (ncclAllReduce with
// ncclAvg, in place) on a second stream as soon as its last gradient is
// written: an event recorded on the compute stream after that layer's
// backward, which the communication stream waits for. AdamW updates each
// piece of the parameters once the bucket holding its gradients is reduced
// (an event per bucket, Backend::gradients_final_after), and the compute
// stream waits for the last bucket before anything follows: every rank
// applies the mean gradient to the same parameters, so the ranks stay
// identical.
#pragma once
#include <cstddef>
#include <vector>

#include <cuda_runtime_api.h>

#include "common/stream_event.hpp"
#include "ddp/buckets.hpp"
#include "ddp/communicator.hpp"
#include "model/backend.hpp"

namespace transformer::ddp {

class DataParallelTrainer {
 public:
  // Installs the gradient hook on `backend` (a CUDA backend built for
  // Mode::step) and removes it again in the destructor. `bucket_cap`: elements.
  DataParallelTrainer(Backend& backend, Communicator& comm, std::size_t bucket_cap);
  ~DataParallelTrainer();
  DataParallelTrainer(const DataParallelTrainer&) = delete;
  DataParallelTrainer& operator=(const DataParallelTrainer&) = delete;

  // forward and backward with the buckets' all-reduces; afterwards the
  // backend's stream holds the averaged gradients (it waits for the reduction).
  void forward_backward();
  // forward_backward and AdamW, in the phase scopes of transformer_bench
  // ("forward", "backward", "optimizer step"; the reductions in "all-reduce").
  void step();

  // The buckets of the last backward, in the order they were reduced.
  const std::vector<GradientRange>& last_buckets() const { return buckets_; }

 private:
  void run(bool optimizer);
  void on_gradients_ready(GradientRange ready);
  void reduce(GradientRange bucket);
  void wait_for_reductions();

  Backend& backend_;
  Communicator& comm_;
  DeviceGradients grads_;
  BucketPlanner planner_;
  // Priority over the compute stream, so a reduction's kernels start as soon
  // as the SMs the backward GEMMs leave free allow.
  examples::Stream comm_stream_{examples::StreamPriority::highest};
  examples::OrderingEvent gradients_written_;  // re-recorded per bucket (a wait takes the latest record)
  // One per bucket of a backward: AdamW waits on them after the last bucket
  // is launched, so each needs its own event. Grown on demand, reused per step.
  std::vector<examples::OrderingEvent> bucket_reduced_;
  examples::OrderingEvent reductions_done_;
  std::vector<GradientRange> buckets_;
};

}  // namespace transformer::ddp
