// ddp/rank_run.cpp: one rank's run.
#include "ddp/rank_run.hpp"

#include <cmath>
#include <cstdio>
#include <exception>
#include <iostream>
#include <memory>
#include <optional>
#include <vector>

#include <cuda_runtime_api.h>

#include <gpuprof/atomic_file.hpp>
#include <gpuprof/comm_overlap.hpp>
#include <gpuprof/cuda_events.hpp>
#include <gpuprof/cupti.hpp>
#include <gpuprof/profiler.hpp>
#include <gpuprof/report/json.hpp>
#include <gpuprof/scope.hpp>
#include <gpuprof/stats.hpp>

#include "common/cuda_check.hpp"
#include "ddp/batches.hpp"
#include "ddp/communicator.hpp"
#include "ddp/ddp_results.hpp"
#include "ddp/trainer.hpp"

namespace transformer::ddp {
namespace {

constexpr const char* kStepScope = "step";

// Warm-up steps, then timed ones, each in the step scope, timed by CUDA
// events on the compute stream (which waits for the reductions before AdamW,
// so the step's end covers them).
std::vector<double> timed_steps(DataParallelTrainer& trainer, Backend& backend, int warmup, int steps) {
  const cudaStream_t stream = backend.stream();
  for (int i = 0; i < warmup; ++i) {
    GPUPROF_SCOPE("warmup", stream);
    trainer.step();
  }
  backend.synchronize();
  const gpuprof::ScopedEventPair events;
  std::vector<double> samples;
  for (int i = 0; i < steps; ++i) {
    {
      GPUPROF_SCOPE(kStepScope, stream);
      GPUPROF_CUDA_CHECK(cudaEventRecord(events->begin, stream));
      trainer.step();
      GPUPROF_CUDA_CHECK(cudaEventRecord(events->end, stream));
    }
    GPUPROF_CUDA_CHECK(cudaEventSynchronize(events->end));
    float ms = 0;
    GPUPROF_CUDA_CHECK(cudaEventElapsedTime(&ms, events->begin, events->end));
    samples.push_back(ms);
  }
  return samples;
}

// Per-step medians of communication, computation and their overlap.
void add_communication(const gpuprof::Report& report, RankFigures& figures) {
  std::vector<double> comm, comp, overlap;
  for (const gpuprof::CommComputeTime& step : gpuprof::comm_compute_by_step(report, kStepScope)) {
    comm.push_back(step.communication_ms);
    comp.push_back(step.computation_ms);
    overlap.push_back(step.overlap_ms);
  }
  if (comm.empty()) return;
  figures.communication_ms = gpuprof::summarize(comm).median;
  figures.computation_ms = gpuprof::summarize(comp).median;
  figures.overlap_ms = gpuprof::summarize(overlap).median;
}

std::string device_name(int device) {
  cudaDeviceProp properties{};
  GPUPROF_CUDA_CHECK(cudaGetDeviceProperties(&properties, device));
  return properties.name;
}

int run(const DdpOptions& options, const gpuprof::RankInfo& me, IdChannel& ids) {
  GPUPROF_CUDA_CHECK(cudaSetDevice(me.local_rank));
  gpuprof::profiler().set_rank(me.rank, me.world_size, me.local_rank);
  // Before any work: CUPTI sees every kernel from here on, NCCL's included
  // (category "communication").
  std::optional<gpuprof::KernelCapture> capture;
  if (options.profile) capture.emplace();

  const RunConfig config = rank_run_config(options);
  const std::unique_ptr<Backend> backend = make_cuda_backend(config);
  Communicator comm(ids, me.rank, me.world_size);
  const harness::TokenBatch batch = rank_batch(config, me.rank);
  backend->set_batch(batch.tokens, batch.targets);

  DdpResults results;
  {
    DataParallelTrainer trainer(
        *backend, comm, bucket_cap_elements(options.bucket_mb, backend->gradient_buffer().element_bytes()));
    const std::vector<double> samples = timed_steps(trainer, *backend, options.run.warmup, options.run.steps);
    results.buckets = trainer.last_buckets().size();
    const gpuprof::Summary summary = gpuprof::summarize(samples);
    RankFigures mine;
    mine.step_median_ms = summary.median;
    mine.step_mean_ms = summary.mean;
    mine.step_min_ms = summary.min;
    mine.loss = backend->loss();
    mine.communication_ms = mine.computation_ms = mine.overlap_ms = NAN;
    if (capture && capture->active()) capture->flush();
    const gpuprof::Report report = gpuprof::profiler().report();
    if (capture && capture->active()) add_communication(report, mine);
    if (!options.report_dir.empty())
      gpuprof::write_json(report,
                          options.report_dir + "/transformer_ddp.rank" + std::to_string(me.rank) + ".json");
    const std::vector<double> all = comm.all_gather(mine.to_vector(), backend->stream());
    for (int rank = 0; rank < me.world_size; ++rank)
      results.ranks.push_back(RankFigures::from_vector(all.data() + rank * RankFigures::kFields));
  }
  comm.finalize();

  if (me.rank != 0) return 0;
  results.config = config;
  results.world = me.world_size;
  results.warmup = options.run.warmup;
  results.steps = options.run.steps;
  results.bucket_mb = options.bucket_mb;
  results.profiled = capture && capture->active();
  results.device = device_name(me.local_rank);
  results.cudnn = cudnn_runtime_version();
  // With --json -, standard output carries the JSON alone and the table goes to stderr.
  (options.json_path == "-" ? std::cerr : std::cout) << ddp_table(results) << std::flush;
  if (!options.json_path.empty()) gpuprof::write_file_atomically(options.json_path, ddp_json(results));
  return 0;
}

}  // namespace

int run_rank(const DdpOptions& options, const gpuprof::RankInfo& me, IdChannel& ids) {
  try {
    return run(options, me, ids);
  } catch (const std::exception& error) {
    std::fprintf(stderr, "transformer_ddp: rank %d: error: %s\n", me.rank, error.what());
    return 1;
  }
}

int visible_gpus() {
  const std::string answer = run_in_child([] {
    int count = 0;
    const cudaError_t status = cudaGetDeviceCount(&count);
    // No device, or no driver: none visible (exit 3), not a failed run.
    if (status == cudaErrorNoDevice || status == cudaErrorInsufficientDriver) return std::string("0");
    GPUPROF_CUDA_CHECK(status);
    return std::to_string(count);
  });
  return std::stoi(answer);
}

}  // namespace transformer::ddp
