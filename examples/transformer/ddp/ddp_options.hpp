// ddp/ddp_options.hpp: transformer_ddp's flags and how it was launched. Parsing
// never touches a device.
//
// Two ways to run:
//   transformer_ddp --gpus N ...      forks N ranks itself (default: every visible GPU)
//   RANK=r WORLD_SIZE=n LOCAL_RANK=l transformer_ddp --id-file PATH ...
//                                     runs as that one rank, started by another
//                                     launcher (torchrun, mpirun wrappers, SLURM);
//                                     NCCL's id goes through PATH (or the
//                                     GPUPROF_DDP_ID_FILE variable), see launcher.hpp.
#pragma once
#include <optional>
#include <string>
#include <vector>

#include <gpuprof/rank.hpp>

#include "harness/run_flags.hpp"
#include "model/backend.hpp"

namespace transformer::ddp {

struct DdpOptions {
  // One model size, ctx, precision and attention (the harness's flags);
  // --batch is per GPU, so the step's global batch is batch × world size.
  harness::RunFlags run;
  int gpus = 0;            // --gpus; 0: every visible GPU
  double bucket_mb = 25;   // --bucket-mb: the all-reduce bucket cap, MiB (PyTorch DDP's default)
  bool profile = false;    // --profile: KernelCapture in every rank
  std::string json_path;   // --json: the run's figures (rank 0 writes it)
  std::string report_dir;  // --reports DIR: every rank's gpuprof report, rank-suffixed
  std::string id_file;     // --id-file, or GPUPROF_DDP_ID_FILE (launched ranks only)
  int timeout_s = 1800;    // --timeout: the forked run's limit (and the id file wait)
  bool help = false;
  // Set when RANK is in the environment: this process is that one rank.
  std::optional<gpuprof::RankInfo> launched_rank;
};

// Reads RANK, WORLD_SIZE, LOCAL_RANK and GPUPROF_DDP_ID_FILE from the
// environment. Throws harness::UsageError naming the flag or variable at fault.
DdpOptions parse_ddp_options(const std::vector<std::string>& args);

// The run configuration of one rank (Mode::step, per-GPU batch).
RunConfig rank_run_config(const DdpOptions& options);

// The bucket cap in gradient elements of `element_bytes` each (4 for fp32
// gradients, 2 for bf16): the cap counts bytes, as PyTorch DDP's does.
std::size_t bucket_cap_elements(double bucket_mb, std::size_t element_bytes);

std::string ddp_usage_text();

}  // namespace transformer::ddp
