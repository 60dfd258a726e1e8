// cuda/adamw.cu: gradient-norm partial sums and the fused AdamW update (see
// adamw.hpp).
#include "cuda/adamw.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>

#include "common/cuda_check.hpp"
#include "cuda/device_utils.cuh"

namespace transformer::cuda {
namespace {

constexpr unsigned kThreads = 256;
// Enough blocks to fill the GPU several times over; the rest is grid-stride.
constexpr std::size_t kMaxUpdateBlocks = 8192;
// The pieces that overlap backward run at most this many blocks per SM.
// Their low stream priority only decides whose block starts when one ends:
// with eight resident (a full SM of 256-thread blocks) each lives tens of µs
// as they share HBM, and backward's next kernel waits that long for room
// (its GEMMs for a whole SM). Two short blocks per SM still keep HBM busy
// and leave backward the rest. Measured on the H100, bf16 train step: small
// ctx 128 3.30 → 3.20 ms, ctx 512 5.77 → 5.66, xl ctx 1024 119.5 → 118.6;
// four per SM changed nothing, one was slower
// (docs/experiments/2026-11-26-adamw-beside-backward.md).
constexpr int kOverlapBlocksPerSm = 2;

struct UpdateConstants {
  float lr, beta1, beta2, eps;
  float decay_factor;  // 1 − lr·λ
  float clip_norm;     // 0 = off
};

// α_t = lr·√(1−β2^t)/(1−β1^t), in double as the bias corrections of small t
// need it, rounded once to float.
__device__ float adam_step_size(const UpdateConstants& k, unsigned long long step) {
  const double t = static_cast<double>(step);
  return static_cast<float>(static_cast<double>(k.lr) * sqrt(1.0 - pow(double{k.beta2}, t)) /
                            (1.0 - pow(double{k.beta1}, t)));
}

// Called by thread 0 of every block once its block is done with this step:
// the last block to finish advances the step count. Each block read the
// count before its fence and increment, so no block can see the new count.
__device__ void finish_block(AdamWStep* step) {
  __threadfence();
  if (atomicAdd(&step->blocks_done, 1u) == gridDim.x - 1) {
    __threadfence();
    step->blocks_done = 0;
    step->step += 1;
  }
}

template <class Grad>
__global__ void grad_sum_squares_kernel(const Grad* grads, std::size_t vectors, float* partials) {
  float sum = 0;
  for (std::size_t i = blockIdx.x * std::size_t{blockDim.x} + threadIdx.x; i < vectors;
       i += std::size_t{gridDim.x} * blockDim.x) {
    float g[kVec];
    load_vec(grads + i * kVec, g);
#pragma unroll
    for (int e = 0; e < kVec; ++e) sum += g[e] * g[e];
  }
  sum = block_sum(sum);
  if (threadIdx.x == 0) partials[blockIdx.x] = sum;
}

// θ[at, at + kVec), fp32 or split (the buffers say which, the same for every thread).
template <class Grad>
__device__ void load_theta(const AdamWBuffers<Grad>& b, std::size_t at, float (&theta)[kVec]) {
  if (b.params) load_vec(b.params + at, theta);
  else load_split(b.params_hi + at, b.params_lo + at, theta);
}

template <class Grad>
__device__ void store_theta(const AdamWBuffers<Grad>& b, std::size_t at, const float (&theta)[kVec]) {
  if (b.params) store_vec(b.params + at, theta);
  else store_split(b.params_hi + at, b.params_lo + at, theta);
}

// Updates `vectors` vectors of kVec elements from the pointers on. Only the
// last launch of a step (`advances_step`) moves the step count: the launches
// of one step run one after another on one stream, so each reads the count
// before that last one's final block advances it.
template <class Grad>
__global__ void adamw_kernel(AdamWBuffers<Grad> b, std::size_t vectors, UpdateConstants k,
                             bool advances_step) {
  __shared__ float step_size;  // α_t
  if (threadIdx.x == 0) step_size = adam_step_size(k, b.step->step + 1);
  __syncthreads();
  float grad_scale = 1.0f;
  if (k.clip_norm > 0) {
    float sum = 0;
    for (int i = threadIdx.x; i < kNormPartials; i += blockDim.x) sum += b.norm_partials[i];
    const float norm = sqrtf(block_sum(sum));
    if (norm > k.clip_norm) grad_scale = k.clip_norm / (norm + 1e-6f);
  }
  for (std::size_t i = blockIdx.x * std::size_t{blockDim.x} + threadIdx.x; i < vectors;
       i += std::size_t{gridDim.x} * blockDim.x) {
    const std::size_t at = i * kVec;
    float theta[kVec], g[kVec], mv[kVec], vv[kVec];
    load_theta(b, at, theta);
    load_vec(b.grads + at, g);
    load_vec(b.m + at, mv);
    load_vec(b.v + at, vv);
#pragma unroll
    for (int e = 0; e < kVec; ++e) {
      const float grad = g[e] * grad_scale;
      mv[e] = k.beta1 * mv[e] + (1.0f - k.beta1) * grad;
      vv[e] = k.beta2 * vv[e] + (1.0f - k.beta2) * grad * grad;
      theta[e] = (theta[e] - step_size * mv[e] / (sqrtf(vv[e]) + k.eps)) * k.decay_factor;
    }
    store_theta(b, at, theta);
    store_vec(b.m + at, mv);
    store_vec(b.v + at, vv);
  }
  if (advances_step && threadIdx.x == 0) finish_block(b.step);
}

UpdateConstants update_constants(const AdamWConfig& config) {
  UpdateConstants k;
  k.lr = config.lr;
  k.beta1 = config.beta1;
  k.beta2 = config.beta2;
  k.eps = config.eps;
  k.decay_factor = 1.0f - config.lr * config.weight_decay;
  k.clip_norm = config.clip_norm;
  return k;
}

// Dynamic shared memory the kernel never touches, sized so that no more
// than kOverlapBlocksPerSm of its blocks fit on an SM (0 where the device's
// shared memory cannot express the cap: then the pieces run uncapped).
template <class Grad>
std::size_t residency_capping_bytes() {
  static const std::size_t bytes = [] {
    int device = 0, per_sm = 0, per_block = 0;
    GPUPROF_CUDA_CHECK(cudaGetDevice(&device));
    GPUPROF_CUDA_CHECK(cudaDeviceGetAttribute(&per_sm, cudaDevAttrMaxSharedMemoryPerMultiprocessor, device));
    GPUPROF_CUDA_CHECK(cudaDeviceGetAttribute(&per_block, cudaDevAttrMaxSharedMemoryPerBlockOptin, device));
    const int wanted = per_sm / (kOverlapBlocksPerSm + 1);
    if (wanted > per_block) return std::size_t{0};
    GPUPROF_CUDA_CHECK(
        cudaFuncSetAttribute(adamw_kernel<Grad>, cudaFuncAttributeMaxDynamicSharedMemorySize, wanted));
    int resident = 0;
    GPUPROF_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&resident, adamw_kernel<Grad>, kThreads,
                                                                     static_cast<std::size_t>(wanted)));
    return resident == kOverlapBlocksPerSm ? static_cast<std::size_t>(wanted) : std::size_t{0};
  }();
  return bytes;
}

template <class Grad>
void launch_update(const AdamWConfig& config, const AdamWBuffers<Grad>& buffers, std::size_t begin,
                   std::size_t end, bool advances_step, std::size_t shared_bytes, cudaStream_t stream) {
  const std::size_t vectors = (end - begin) / kVec;
  const unsigned blocks =
      static_cast<unsigned>(std::min<std::size_t>(blocks_for(vectors, kThreads), kMaxUpdateBlocks));
  AdamWBuffers<Grad> piece = buffers;  // the same buffers from `begin` on
  if (piece.params) piece.params += begin;
  if (piece.params_hi) piece.params_hi += begin;
  if (piece.params_lo) piece.params_lo += begin;
  piece.grads += begin;
  piece.m += begin;
  piece.v += begin;
  adamw_kernel<<<std::max(blocks, 1u), kThreads, shared_bytes, stream>>>(
      piece, vectors, update_constants(config), advances_step);
  EXAMPLE_LAUNCH_CHECK();
}

template <class Grad>
void check_buffers(const char* caller, const AdamWBuffers<Grad>& buffers) {
  if (buffers.step == nullptr) throw std::invalid_argument(std::string(caller) + ": no step counter");
  const bool has_hi = buffers.params_hi != nullptr, has_lo = buffers.params_lo != nullptr;
  const bool fp32 = buffers.params != nullptr && !has_hi && !has_lo;
  const bool split = buffers.params == nullptr && has_hi && has_lo;
  if (!fp32 && !split)
    throw std::invalid_argument(std::string(caller) +
                                ": give either fp32 parameters or both halves of split ones");
}

}  // namespace

template <class Grad>
void adamw_step(const AdamWConfig& config, const AdamWBuffers<Grad>& buffers, cudaStream_t stream) {
  const std::size_t vectors = whole_vectors("adamw_step", buffers.count);
  check_buffers("adamw_step", buffers);
  if (config.clip_norm > 0) {
    grad_sum_squares_kernel<<<kNormPartials, kThreads, 0, stream>>>(buffers.grads, vectors,
                                                                    buffers.norm_partials);
    EXAMPLE_LAUNCH_CHECK();
  }
  launch_update(config, buffers, 0, vectors * kVec, /*advances_step=*/true, 0, stream);
}

template <class Grad>
void adamw_update_range(const AdamWConfig& config, const AdamWBuffers<Grad>& buffers, std::size_t begin,
                        std::size_t end, bool last_of_step, cudaStream_t stream) {
  whole_vectors("adamw_update_range", buffers.count);
  check_buffers("adamw_update_range", buffers);
  if (config.clip_norm > 0)
    throw std::invalid_argument(
        "adamw_update_range: clipping needs the norm of every gradient first; use adamw_step");
  if (begin % kVec != 0 || end % kVec != 0 || begin >= end || end > buffers.count)
    throw std::invalid_argument("adamw_update_range: [" + std::to_string(begin) + ", " + std::to_string(end) +
                                ") is not a non-empty range of whole " + std::to_string(kVec) +
                                "-element vectors within " + std::to_string(buffers.count));
  launch_update(config, buffers, begin, end, last_of_step, residency_capping_bytes<Grad>(), stream);
}

#define TRANSFORMER_INSTANTIATE(Grad)                                                                \
  template void adamw_step<Grad>(const AdamWConfig&, const AdamWBuffers<Grad>&, cudaStream_t);       \
  template void adamw_update_range<Grad>(const AdamWConfig&, const AdamWBuffers<Grad>&, std::size_t, \
                                         std::size_t, bool, cudaStream_t);
TRANSFORMER_INSTANTIATE(float)
TRANSFORMER_INSTANTIATE(__nv_bfloat16)
#undef TRANSFORMER_INSTANTIATE

}  // namespace transformer::cuda
