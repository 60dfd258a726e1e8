// cuda/adamw.hpp: one AdamW step over the whole flat parameter buffer in one
// pass, decay after the update (docs/model.md, the course's order):
//   m = β1·m + (1−β1)·g;  v = β2·v + (1−β2)·g²;  α_t = lr·√(1−β2^t)/(1−β1^t)
//   θ −= α_t·m/(√v + ε);  θ −= lr·λ·θ
// Under mixed precision θ is stored split (split_master.hpp): its upper half
// is the bf16 weight the GEMMs read, so the pass that updates θ refreshes
// that weight too, and moves 26 bytes per parameter in all (θ 4 + 4, m and v
// 8 + 8, the bf16 gradient 2).
//
// Optional global-norm clipping (g scaled by M/(‖g‖ + 1e-6) when ‖g‖ > M) is
// computed on the device: a first kernel writes kNormPartials partial sums of
// squares, and every block of the update kernel reduces them itself, so the
// host never waits for the norm.
//
// The step count t lives on the device too (AdamWStep): the update kernel
// computes the bias corrections from it and advances it, so a CUDA graph that
// captured one step replays every later step with that step's own α_t.
#pragma once
#include <cstddef>
#include <cstdint>

#include <cuda_bf16.h>
#include <cuda_runtime_api.h>

#include "model/backend.hpp"

namespace transformer::cuda {

constexpr int kNormPartials = 1024;

// Device memory, zeroed before the first step. `step` = steps taken so far;
// `blocks_done` is the update kernel's count of finished blocks (its last
// block advances `step` and resets it to 0 for the next launch).
struct AdamWStep {
  unsigned long long step;
  unsigned int blocks_done;
};

// Grad: float, or __nv_bfloat16 under mixed precision (the gradients
// backward writes there are bf16, as PyTorch's autocast GEMMs produce them;
// the update itself is fp32).
template <class Grad>
struct AdamWBuffers {
  float* params;             // fp32 master, or null: then it is split into
  std::uint16_t* params_hi;  // (mixed precision) these two halves
  std::int16_t* params_lo;
  const Grad* grads;
  float* m;
  float* v;
  float* norm_partials;  // kNormPartials floats of scratch (clipping only)
  AdamWStep* step;       // t of this update = step->step + 1
  std::size_t count;     // a multiple of 8
};

// One step: t = 1 on the first call after the counter was zeroed, then 2, ...
template <class Grad>
void adamw_step(const AdamWConfig& config, const AdamWBuffers<Grad>& buffers, cudaStream_t stream);

// The same step in pieces, so that each piece can start as soon as backward
// has written its gradients: updates elements [begin, end) (both multiples of
// 8) with this step's t. The piece with `last_of_step` advances t; it must
// come last, on the stream of the step's other pieces. Meant to run beside
// other work: its kernel keeps at most two blocks per SM. No clipping (that
// needs the norm of every gradient first): throws std::invalid_argument if
// configured.
template <class Grad>
void adamw_update_range(const AdamWConfig& config, const AdamWBuffers<Grad>& buffers, std::size_t begin,
                        std::size_t end, bool last_of_step, cudaStream_t stream);

}  // namespace transformer::cuda
