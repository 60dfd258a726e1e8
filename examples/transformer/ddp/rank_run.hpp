// ddp/rank_run.hpp: everything one rank of transformer_ddp does: its GPU, the
// communicator, the model on its share of the batch, the timed steps in
// gpuprof scopes, its own report, and (rank 0) the table and JSON of all ranks.
#pragma once
#include <gpuprof/rank.hpp>

#include "ddp/launcher.hpp"
#include "ddp/ddp_options.hpp"

namespace transformer::ddp {

// The process's exit status: 0 done, 1 failed (the error is printed; the
// communicator is aborted so the other ranks do not wait on this one).
int run_rank(const DdpOptions& options, const gpuprof::RankInfo& me, IdChannel& ids);

// Every visible CUDA device, counted in a child process (the parent must not
// initialise CUDA before it forks the ranks); 0 without a device or driver.
int visible_gpus();

}  // namespace transformer::ddp
