// cuda/flash_attention.cu: FlashAttention-2 style causal attention, bf16
// operands on the tensor cores (mma.sync m16n8k16, fragments from shared
// memory through ldmatrix), fp32 accumulation, tiles streamed with cp.async
// into double buffers.
//
// Forward: one block of 4 warps per (query tile, batch·head); each warp owns
// 32 query rows (16 at d_head ≥ 96), keeps its Q fragments, its output
// accumulators and the rows' running max and sum in registers, and walks the
// 64-key tiles up to the diagonal. The softmax runs in base 2 with
// 1/√d_head·log2(e) folded into one multiply-add per score.
//
// Backward: a preprocess pass writes D = rowsum(dO ∘ O) and zeroes an fp32 dq
// accumulator; then one block per (128-key tile, batch·head) loops over the
// query tiles at or below the diagonal, recomputes P from the saved
// log-sum-exp, keeps dK and dV in registers (each warp owns 16 or 32 keys),
// and adds its share of dQ = dS·K into the accumulator with fp32 atomics; a
// last pass scales and rounds dq to bf16. The atomics make dq's summation
// order, and so its last bits, vary between runs.
//
// Tile shapes, and what each change bought on the H100: docs/attention-notes.md.
#include "cuda/flash_attention.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <stdexcept>
#include <string>
#include <type_traits>

#include "common/cuda_check.hpp"
#include "cuda/device_utils.cuh"

// mma.sync bf16, cp.async and ldmatrix need sm_80 (CMake builds the examples
// for sm_80 and up only; this names the cause to other builds).
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 800
#error "flash_attention.cu needs sm_80 or newer (bf16 mma.sync, cp.async, ldmatrix)"
#endif

namespace transformer::cuda {
namespace {

using bf16 = __nv_bfloat16;

constexpr float kLog2e = 1.4426950408889634f;

// Shared-memory rows are padded by 16 bytes: a row stride of D + 8 elements
// puts the 8 rows one ldmatrix phase reads in 8 different 16-byte bank groups
// for every D here, so the loads are conflict-free without a swizzle.
template <int D>
constexpr int kStride = D + 8;

__device__ inline std::uint32_t shared_address(const void* p) {
  return static_cast<std::uint32_t>(__cvta_generic_to_shared(p));
}

// 16 bytes global -> shared, asynchronously; a row outside the matrix is
// zero-filled instead (source size 0 reads nothing, `from` only has to be a
// valid address).
__device__ inline void copy_async_16(void* to, const void* from, bool inside) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(shared_address(to)), "l"(from),
               "r"(inside ? 16 : 0));
}
__device__ inline void copy_async_4(void* to, const void* from, bool inside) {
  asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;\n" ::"r"(shared_address(to)), "l"(from),
               "r"(inside ? 4 : 0));
}
__device__ inline void commit_copies() { asm volatile("cp.async.commit_group;\n" ::); }
template <int kPending>
__device__ inline void wait_copies() {
  asm volatile("cp.async.wait_group %0;\n" ::"n"(kPending));
}

__device__ inline void ldmatrix_x4(std::uint32_t (&r)[4], const bf16* p) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(shared_address(p)));
}
__device__ inline void ldmatrix_x4_trans(std::uint32_t (&r)[4], const bf16* p) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0,%1,%2,%3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(shared_address(p)));
}

// c += a·b for one 16×8 tile, k = 16 (fragment layouts of the PTX ISA).
__device__ inline void mma_bf16(float (&c)[4], const std::uint32_t (&a)[4], std::uint32_t b0,
                                std::uint32_t b1) {
  asm("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, "
      "{%8,%9}, {%0,%1,%2,%3};\n"
      : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}

// The two n8 tiles one ldmatrix_x4 of B holds (regs 0,1 and 2,3), one
// product each with the same A.
__device__ inline void mma_bf16_x2(float (&left)[4], float (&right)[4], const std::uint32_t (&a)[4],
                                   const std::uint32_t (&b)[4]) {
  mma_bf16(left, a, b[0], b[1]);
  mma_bf16(right, a, b[2], b[3]);
}

__device__ inline std::uint32_t pack_bf16(float lo, float hi) {
  const __nv_bfloat162 pair = __floats2bfloat162_rn(lo, hi);
  return *reinterpret_cast<const std::uint32_t*>(&pair);
}

// 2^x in one MUFU instruction; 2^−∞ = 0, which masked scores rely on.
__device__ inline float exp2_approx(float x) {
  float y;
  asm("ex2.approx.ftz.f32 %0, %1;\n" : "=f"(y) : "f"(x));
  return y;
}

// dq's fp32 accumulator takes a pair of adjacent columns at a time: one
// atomic from sm_90 on, two before it.
__device__ inline void atomic_add_pair(float* address, float x, float y) {
#if __CUDA_ARCH__ >= 900
  atomicAdd(reinterpret_cast<float2*>(address), make_float2(x, y));
#else
  atomicAdd(address, x);
  atomicAdd(address + 1, y);
#endif
}

// Reduces n values pairwise (a tree of depth log2 n, not a chain of n − 1
// dependent instructions); n a power of two.
template <int N, class Op>
__device__ inline float tree_reduce(float (&values)[N], Op op) {
#pragma unroll
  for (int width = N / 2; width >= 1; width /= 2)
#pragma unroll
    for (int i = 0; i < width; ++i) values[i] = op(values[i], values[i + width]);
  return values[0];
}

// c[m] += a[m]·B for M 16-row blocks, across the 16-column strips n2 of B
// that load_b(n2, b) fetches (each strip feeds all M blocks).
template <int M, int kTiles, class LoadB>
__device__ inline void mma_products(float (&c)[M][kTiles][4], const std::uint32_t (&a)[M][4], LoadB load_b) {
#pragma unroll
  for (int n2 = 0; n2 < kTiles / 2; ++n2) {
    std::uint32_t b[4];
    load_b(n2, b);
#pragma unroll
    for (int m = 0; m < M; ++m) mma_bf16_x2(c[m][2 * n2], c[m][2 * n2 + 1], a[m], b);
  }
}

template <int M, int N>
__device__ inline void set_zero(float (&tiles)[M][N][4]) {
#pragma unroll
  for (int m = 0; m < M; ++m)
#pragma unroll
    for (int n = 0; n < N; ++n)
#pragma unroll
      for (int e = 0; e < 4; ++e) tiles[m][n][e] = 0.0f;
}

// The A operand of the next product from two 16×8 accumulator tiles (the
// columns 16·kk … 16·kk+15 of a 16-row block), rounded to bf16: the
// accumulator layout of m16n8 is the A layout of m16k16, split in halves.
__device__ inline void accumulators_to_a(const float (&left)[4], const float (&right)[4],
                                         std::uint32_t (&a)[4]) {
  a[0] = pack_bf16(left[0], left[1]);
  a[1] = pack_bf16(left[2], left[3]);
  a[2] = pack_bf16(right[0], right[1]);
  a[3] = pack_bf16(right[2], right[3]);
}

// Rows [row0, row0 + kRows) of a [rows, D] matrix whose rows lie `row_stride`
// elements apart, into shared memory with stride D + 8; rows ≥ rows are zeros.
template <int kRows, int D, int kThreads>
__device__ inline void load_tile_async(bf16* tile, const bf16* matrix, std::size_t row_stride, int row0,
                                       int rows) {
  constexpr int kChunksPerRow = D / 8;
  constexpr int kChunks = kRows * kChunksPerRow;
#pragma unroll
  for (int i = 0; i < (kChunks + kThreads - 1) / kThreads; ++i) {
    const int chunk = static_cast<int>(threadIdx.x) + i * kThreads;
    if (kChunks % kThreads == 0 || chunk < kChunks) {
      const int r = chunk / kChunksPerRow, col = (chunk % kChunksPerRow) * 8;
      const int row = row0 + r;
      const bool inside = row < rows;
      copy_async_16(tile + r * kStride<D> + col,
                    matrix + static_cast<std::size_t>(inside ? row : 0) * row_stride + col, inside);
    }
  }
}

// ldmatrix addressing. Lane l names row l % 8 of the 8×8 matrix l / 8.
// A operand, 16 rows × 16 k of a row-major tile.
template <int kStrideElems>
__device__ inline const bf16* a_address(const bf16* tile, int row0, int k0, int lane) {
  return tile + (row0 + lane % 16) * kStrideElems + k0 + (lane / 16) * 8;
}
// B operands of two n8 tiles (n0 … n0+15) from a tile stored [n][k]
// (regs 0,1: first n8 tile; 2,3: second).
template <int kStrideElems>
__device__ inline const bf16* b_nk_address(const bf16* tile, int n0, int k0, int lane) {
  const int matrix = lane / 8;
  return tile + (n0 + (matrix / 2) * 8 + lane % 8) * kStrideElems + k0 + (matrix % 2) * 8;
}
// The same from a tile stored [k][n], read with ldmatrix .trans.
template <int kStrideElems>
__device__ inline const bf16* b_kn_address(const bf16* tile, int k0, int n0, int lane) {
  const int matrix = lane / 8;
  return tile + (k0 + (matrix % 2) * 8 + lane % 8) * kStrideElems + n0 + (matrix / 2) * 8;
}
// A operand (16 rows × 16 k) from a tile stored [k][row], read with .trans.
template <int kStrideElems>
__device__ inline const bf16* a_km_address(const bf16* tile, int k0, int row0, int lane) {
  const int matrix = lane / 8;
  return tile + (k0 + (matrix / 2) * 8 + lane % 8) * kStrideElems + row0 + (matrix % 2) * 8;
}

// Forward: 4 warps; each owns kRowTiles 16-row blocks of queries, so every K
// and V fragment read from shared memory feeds kRowTiles products, and a
// block's key tiles are fetched once for 64·kRowTiles queries. Two row
// blocks need twice the accumulators: only d_head ≤ 80 can afford them (80
// with a few bytes of spill, still the faster choice).
constexpr int kForwardWarps = 4;
constexpr int kKeyTile = 64;  // keys per forward iteration
template <int D>
constexpr int kRowTiles = D <= 80 ? 2 : 1;
template <int D>
constexpr int kForwardQueryTile = 16 * kRowTiles<D>* kForwardWarps;

template <int D>
constexpr std::size_t forward_shared_bytes() {
  return static_cast<std::size_t>(kForwardQueryTile<D> + 4 * kKeyTile) * kStride<D> * sizeof(bf16);
}

// One block row per sequence·head: batch·heads may exceed a grid's y extent
// (65535), and the heads past it go to z (the last z slice's extra blocks
// return at once).
constexpr int kMaxGridY = 65535;
dim3 head_grid(int tiles, int batch_heads) {
  return dim3(static_cast<unsigned>(tiles), static_cast<unsigned>(std::min(batch_heads, kMaxGridY)),
              static_cast<unsigned>((batch_heads - 1) / kMaxGridY + 1));
}
__device__ long long grid_head() { return static_cast<long long>(blockIdx.z) * gridDim.y + blockIdx.y; }

template <int D>
__global__ void __launch_bounds__(32 * kForwardWarps)
    flash_forward_kernel(const bf16* __restrict__ q, const bf16* __restrict__ k, const bf16* __restrict__ v,
                         bf16* __restrict__ context, float* __restrict__ lse, int ctx, int heads,
                         int batch_heads, float scale_log2) {
  constexpr int S = kStride<D>, M = kRowTiles<D>, Br = kForwardQueryTile<D>;
  constexpr int kThreads = 32 * kForwardWarps;
  extern __shared__ __align__(16) unsigned char shared_raw[];
  bf16* const q_tile = reinterpret_cast<bf16*>(shared_raw);
  bf16* const k_tiles = q_tile + Br * S;             // two buffers
  bf16* const v_tiles = k_tiles + 2 * kKeyTile * S;  // two buffers

  // The last query tiles have the most key tiles: start them first.
  const int query0 = (static_cast<int>(gridDim.x) - 1 - static_cast<int>(blockIdx.x)) * Br;
  if (grid_head() >= batch_heads) return;
  const int head = static_cast<int>(grid_head());  // batch·heads index
  const std::size_t head_offset = static_cast<std::size_t>(head) * ctx * D;
  const bf16* const qh = q + head_offset;
  const bf16* const kh = k + head_offset;
  const bf16* const vh = v + head_offset;
  const int warp = static_cast<int>(threadIdx.x) / 32, lane = static_cast<int>(threadIdx.x) % 32;
  const int group = lane / 4, quad = lane % 4;  // accumulator row / column pair
  const int warp_row0 = query0 + warp * 16 * M;

  const int key_tiles = (min(query0 + Br, ctx) - 1) / kKeyTile + 1;

  load_tile_async<Br, D, kThreads>(q_tile, qh, D, query0, ctx);
  load_tile_async<kKeyTile, D, kThreads>(k_tiles, kh, D, 0, ctx);
  load_tile_async<kKeyTile, D, kThreads>(v_tiles, vh, D, 0, ctx);
  commit_copies();

  std::uint32_t q_frag[M][D / 16][4];
  float out[M][D / 8][4];
  set_zero(out);
  float row_max[M][2], row_sum[M][2];  // max in units of scores·scale·log2(e); sum over this thread's columns
#pragma unroll
  for (int m = 0; m < M; ++m)
#pragma unroll
    for (int half = 0; half < 2; ++half) {
      row_max[m][half] = -INFINITY;
      row_sum[m][half] = 0.0f;
    }

  for (int tile = 0; tile < key_tiles; ++tile) {
    const int buffer = tile & 1;
    // One barrier per tile: past it, this tile's copies are visible to all
    // and every warp is done with the previous tile, whose buffer is refilled.
    wait_copies<0>();
    __syncthreads();
    if (tile + 1 < key_tiles) {
      load_tile_async<kKeyTile, D, kThreads>(k_tiles + (buffer ^ 1) * kKeyTile * S, kh, D,
                                             (tile + 1) * kKeyTile, ctx);
      load_tile_async<kKeyTile, D, kThreads>(v_tiles + (buffer ^ 1) * kKeyTile * S, vh, D,
                                             (tile + 1) * kKeyTile, ctx);
      commit_copies();
    }
    if (tile == 0) {
#pragma unroll
      for (int m = 0; m < M; ++m)
#pragma unroll
        for (int kk = 0; kk < D / 16; ++kk)
          ldmatrix_x4(q_frag[m][kk], a_address<S>(q_tile, (warp * M + m) * 16, kk * 16, lane));
    }

    const bf16* const k_tile = k_tiles + buffer * kKeyTile * S;
    const bf16* const v_tile = v_tiles + buffer * kKeyTile * S;
    const int key0 = tile * kKeyTile;

    float score[M][kKeyTile / 8][4];
    set_zero(score);
#pragma unroll
    for (int kk = 0; kk < D / 16; ++kk) {
      std::uint32_t q_step[M][4];
#pragma unroll
      for (int m = 0; m < M; ++m)
#pragma unroll
        for (int r = 0; r < 4; ++r) q_step[m][r] = q_frag[m][kk][r];
      mma_products(score, q_step, [&](int n2, std::uint32_t(&kf)[4]) {
        ldmatrix_x4(kf, b_nk_address<S>(k_tile, n2 * 16, kk * 16, lane));
      });
    }

#pragma unroll
    for (int m = 0; m < M; ++m) {
      const int row0 = warp_row0 + 16 * m;
      // Only tiles that reach past this row block's first row or past ctx need a mask.
      if (key0 + kKeyTile - 1 > row0 || key0 + kKeyTile > ctx) {
#pragma unroll
        for (int n = 0; n < kKeyTile / 8; ++n)
#pragma unroll
          for (int e = 0; e < 4; ++e) {
            const int key = key0 + n * 8 + 2 * quad + (e & 1);
            const int row = row0 + group + (e >> 1) * 8;
            if (key > row || key >= ctx) score[m][n][e] = -INFINITY;
          }
      }

#pragma unroll
      for (int half = 0; half < 2; ++half) {
        float partial[kKeyTile / 8];
#pragma unroll
        for (int n = 0; n < kKeyTile / 8; ++n)
          partial[n] = fmaxf(score[m][n][2 * half], score[m][n][2 * half + 1]);
        float tile_max = tree_reduce(partial, [](float a, float b) { return fmaxf(a, b); });
        tile_max = fmaxf(tile_max, __shfl_xor_sync(0xffffffffu, tile_max, 1));
        tile_max = fmaxf(tile_max, __shfl_xor_sync(0xffffffffu, tile_max, 2));
        const float new_max = fmaxf(row_max[m][half], tile_max * scale_log2);
        // Every row sees key 0 in tile 0, so new_max is finite; guard anyway so
        // a fully masked row gives zeros, never NaN.
        const float shift = new_max == -INFINITY ? 0.0f : new_max;
        const float rescale = exp2_approx(row_max[m][half] - shift);
        row_max[m][half] = new_max;
        row_sum[m][half] *= rescale;
#pragma unroll
        for (int n = 0; n < D / 8; ++n) {
          out[m][n][2 * half] *= rescale;
          out[m][n][2 * half + 1] *= rescale;
        }
#pragma unroll
        for (int n = 0; n < kKeyTile / 8; ++n) {
#pragma unroll
          for (int e = 2 * half; e < 2 * half + 2; ++e)
            score[m][n][e] = exp2_approx(fmaf(score[m][n][e], scale_log2, -shift));
          partial[n] = score[m][n][2 * half] + score[m][n][2 * half + 1];
        }
        row_sum[m][half] += tree_reduce(partial, [](float a, float b) { return a + b; });
      }
    }

#pragma unroll
    for (int kk = 0; kk < kKeyTile / 16; ++kk) {
      std::uint32_t p_frag[M][4];
#pragma unroll
      for (int m = 0; m < M; ++m) accumulators_to_a(score[m][2 * kk], score[m][2 * kk + 1], p_frag[m]);
      mma_products(out, p_frag, [&](int n2, std::uint32_t(&vf)[4]) {
        ldmatrix_x4_trans(vf, b_kn_address<S>(v_tile, kk * 16, n2 * 16, lane));
      });
    }
  }

  // Normalise, stage the warp's rows in its own part of the Q tile (only
  // this warp read it), then write 16-byte pieces of merged-heads rows.
  // A lane overwrites Q rows that other lanes' ldmatrix loads read in tile
  // 0; with one key tile no barrier came between, so order the reads first.
  const int batch = head / heads, h = head % heads;
  bf16* const staged = q_tile + warp * 16 * M * S;
  __syncwarp();
#pragma unroll
  for (int m = 0; m < M; ++m)
#pragma unroll
    for (int half = 0; half < 2; ++half) {
      float sum = row_sum[m][half];
      sum += __shfl_xor_sync(0xffffffffu, sum, 1);
      sum += __shfl_xor_sync(0xffffffffu, sum, 2);
      const float inverse = 1.0f / sum;
      const int r = 16 * m + group + half * 8;
#pragma unroll
      for (int n = 0; n < D / 8; ++n)
        *reinterpret_cast<std::uint32_t*>(staged + r * S + n * 8 + 2 * quad) =
            pack_bf16(out[m][n][2 * half] * inverse, out[m][n][2 * half + 1] * inverse);
      const int row = warp_row0 + r;
      if (quad == 0 && row < ctx)
        lse[static_cast<std::size_t>(head) * ctx + row] = (row_max[m][half] + log2f(sum)) / kLog2e;
    }
  __syncwarp();
  constexpr int kChunksPerRow = D / 8;
  const std::size_t row_stride = static_cast<std::size_t>(heads) * D;
#pragma unroll
  for (int chunk = lane; chunk < 16 * M * kChunksPerRow; chunk += 32) {
    const int r = chunk / kChunksPerRow, col = (chunk % kChunksPerRow) * 8;
    const int row = warp_row0 + r;
    if (row < ctx)
      *reinterpret_cast<uint4*>(context + (static_cast<std::size_t>(batch) * ctx + row) * row_stride +
                                static_cast<std::size_t>(h) * D + col) =
          *reinterpret_cast<const uint4*>(staged + r * S + col);
  }
}

// One warp per query row: delta = Σ_d dO·O (fp32, from the bf16 tensors the
// forward pass wrote), and that row of the dq accumulator set to zero.
template <int D>
__global__ void flash_backward_preprocess_kernel(const bf16* __restrict__ context,
                                                 const bf16* __restrict__ dcontext, float* __restrict__ delta,
                                                 float* __restrict__ dq_accum, int ctx, int heads,
                                                 long long rows) {
  const long long row = static_cast<long long>(blockIdx.x) * (blockDim.x / 32) + threadIdx.x / 32;
  const int lane = static_cast<int>(threadIdx.x) % 32;
  if (row >= rows) return;
  const long long head = row / ctx;
  const int position = static_cast<int>(row % ctx);
  const long long batch = head / heads, h = head % heads;
  const std::size_t offset =
      (static_cast<std::size_t>(batch) * ctx + position) * heads * D + static_cast<std::size_t>(h) * D;
  float sum = 0.0f;
  for (int d = 2 * lane; d < D; d += 64) {
    const float2 o = __bfloat1622float2(*reinterpret_cast<const __nv_bfloat162*>(context + offset + d));
    const float2 g = __bfloat1622float2(*reinterpret_cast<const __nv_bfloat162*>(dcontext + offset + d));
    sum += o.x * g.x + o.y * g.y;
  }
  sum = warp_sum(sum);
  if (lane == 0) delta[row] = sum;
  for (int d = lane; d < D; d += 32) dq_accum[static_cast<std::size_t>(row) * D + d] = 0.0f;
}

__global__ void flash_backward_dq_kernel(const float* __restrict__ dq_accum, bf16* __restrict__ dq,
                                         float scale, std::size_t vectors) {
  const std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= vectors) return;
  float values[kVec];
  load_vec(dq_accum + i * kVec, values);
#pragma unroll
  for (int e = 0; e < kVec; ++e) values[e] *= scale;
  store_vec(dq + i * kVec, values);
}

// Backward: each warp owns key_rows 16-key blocks of the block's key tile,
// so every Q and dO fragment read from shared memory feeds key_rows products
// (a few % faster at d_head 64; the only size whose doubled dK/dV
// accumulators fit, with a 32-query tile). The 128-key tile halves, per FLOP,
// the dq atomics (one Br×D tile per query tile) and the Q/dO tile loads,
// which all warps share, against a 64-key tile.
//
// Compact: half as many queries per iteration, for devices whose blocks get
// less shared memory than these tiles take (d_head 80: 107 KB, 128: 113 KB;
// sm_86, sm_89 and sm_120 offer 99 KB, sm_80 163 KB, sm_90 and sm_100 227 KB).
template <int D, bool kCompact>
struct BackwardConfig {
  static constexpr int d_head = D;
  static constexpr int key_rows = D == 64 ? 2 : 1;  // 16-key blocks per warp
  static constexpr int warps = D == 64 ? 4 : 8;
  static constexpr int threads = 32 * warps;
  static constexpr int key_tile = 16 * key_rows * warps;
  // Queries per iteration: the 16·key_rows × query_tile score and dP tiles
  // share the register file with the dK/dV accumulators.
  static constexpr int query_tile = (D == 80 ? 64 : 32) / (kCompact ? 2 : 1);
  static constexpr int min_blocks = D == 64 ? 2 : 1;
  static constexpr std::size_t shared_bytes =
      static_cast<std::size_t>(2 * key_tile + 4 * query_tile) * kStride<D> * sizeof(bf16) +
      static_cast<std::size_t>(key_tile) * (query_tile + 8) * sizeof(bf16) +
      static_cast<std::size_t>(4 * query_tile) * sizeof(float);
};

// The smallest per-block shared memory among the supported architectures
// (sm_86, sm_89, sm_120): head sizes whose fastest tiles fit it have no
// compact variant to build.
constexpr std::size_t kSmallestSharedBytes = 99 * 1024;
template <int D>
using FastBackwardConfig = BackwardConfig<D, false>;
template <int D>
using CompactBackwardConfig = std::conditional_t<FastBackwardConfig<D>::shared_bytes <= kSmallestSharedBytes,
                                                 FastBackwardConfig<D>, BackwardConfig<D, true>>;
static_assert(CompactBackwardConfig<128>::shared_bytes <= kSmallestSharedBytes &&
              CompactBackwardConfig<80>::shared_bytes <= kSmallestSharedBytes);

// The backward pass's paired products: c1[m] += a1[m]·B1 and c2[m] += a2[m]·B2
// for M 16-row blocks, across the 16-column strips n2 of B1 and B2 that
// load_b(n2, b1, b2) fetches (each strip feeds all M blocks).
template <int M, int kTiles, class LoadB>
__device__ inline void mma_two_products(float (&c1)[M][kTiles][4], float (&c2)[M][kTiles][4],
                                        const std::uint32_t (&a1)[M][4], const std::uint32_t (&a2)[M][4],
                                        LoadB load_b) {
#pragma unroll
  for (int n2 = 0; n2 < kTiles / 2; ++n2) {
    std::uint32_t b1[4], b2[4];
    load_b(n2, b1, b2);
#pragma unroll
    for (int m = 0; m < M; ++m) {
      mma_bf16_x2(c1[m][2 * n2], c1[m][2 * n2 + 1], a1[m], b1);
      mma_bf16_x2(c2[m][2 * n2], c2[m][2 * n2 + 1], a2[m], b2);
    }
  }
}

// Column pairs per dq task: as many as still leave a task for every warp
// (more pairs reuse each dS fragment more; fewer tasks would idle warps). At
// d_head 128 the dK/dV accumulators leave no registers for more than one.
__host__ __device__ constexpr int dq_pairs_per_task(int query_tile, int d_head, int warps) {
  const int blocks = query_tile / 16, pairs = d_head / 16;
  int best = 1;
  if (d_head > 96) return best;
  for (int p = 1; p <= pairs; ++p)
    if (pairs % p == 0 && blocks * (pairs / p) >= warps) best = p;
  return best;
}

template <class Config>
__global__ void __launch_bounds__(Config::threads, Config::min_blocks)
    flash_backward_kernel(const bf16* __restrict__ q, const bf16* __restrict__ k, const bf16* __restrict__ v,
                          const bf16* __restrict__ dcontext, const float* __restrict__ lse,
                          const float* __restrict__ delta, float* __restrict__ dq_accum,
                          bf16* __restrict__ dk, bf16* __restrict__ dv, int ctx, int heads, int batch_heads,
                          float scale_log2, float scale) {
  constexpr int D = Config::d_head;
  constexpr int S = kStride<D>, M = Config::key_rows, W = Config::warps;
  constexpr int Br = Config::query_tile, Bc = Config::key_tile, kThreads = Config::threads;
  constexpr int SP = Br + 8;  // stride of the dS tile, [key][query]
  extern __shared__ __align__(16) unsigned char shared_raw[];
  bf16* const k_tile = reinterpret_cast<bf16*>(shared_raw);
  bf16* const v_tile = k_tile + Bc * S;
  bf16* const q_tiles = v_tile + Bc * S;                                 // two buffers
  bf16* const do_tiles = q_tiles + 2 * Br * S;                           // two buffers
  bf16* const ds_tile = do_tiles + 2 * Br * S;                           // [Bc][SP]
  float* const lse_tiles = reinterpret_cast<float*>(ds_tile + Bc * SP);  // two buffers
  float* const delta_tiles = lse_tiles + 2 * Br;                         // two buffers

  const int key0 = static_cast<int>(blockIdx.x) * Bc;  // tile 0 has the most work: first
  if (grid_head() >= batch_heads) return;
  const int head = static_cast<int>(grid_head());
  const int batch = head / heads, h = head % heads;
  const std::size_t head_offset = static_cast<std::size_t>(head) * ctx * D;
  const bf16* const do_head =
      dcontext + static_cast<std::size_t>(batch) * ctx * heads * D + static_cast<std::size_t>(h) * D;
  const std::size_t do_stride = static_cast<std::size_t>(heads) * D;
  const float* const lse_head = lse + static_cast<std::size_t>(head) * ctx;
  const float* const delta_head = delta + static_cast<std::size_t>(head) * ctx;
  const int warp = static_cast<int>(threadIdx.x) / 32, lane = static_cast<int>(threadIdx.x) % 32;
  const int group = lane / 4, quad = lane % 4;
  const int warp_row0 = warp * 16 * M;  // the warp's first key, within the tile
  const int warp_key0 = key0 + warp_row0;

  const int first_query_tile = key0 / Br;
  const int query_tiles = (ctx + Br - 1) / Br;

  // Rows past ctx get lse = delta = 0 (zero-filled) so that their masked
  // terms stay finite.
  auto load_query_tile = [&](int tile, int buffer) {
    const int query0 = tile * Br;
    load_tile_async<Br, D, kThreads>(q_tiles + buffer * Br * S, q + head_offset, D, query0, ctx);
    load_tile_async<Br, D, kThreads>(do_tiles + buffer * Br * S, do_head, do_stride, query0, ctx);
    // Asynchronous too: a plain load here would hold its warp (and so the
    // whole block, at the next barrier) for a round trip to L2.
    for (int r = static_cast<int>(threadIdx.x); r < Br; r += kThreads) {
      const int row = query0 + r;
      const bool inside = row < ctx;
      copy_async_4(lse_tiles + buffer * Br + r, lse_head + (inside ? row : 0), inside);
      copy_async_4(delta_tiles + buffer * Br + r, delta_head + (inside ? row : 0), inside);
    }
  };

  load_tile_async<Bc, D, kThreads>(k_tile, k + head_offset, D, key0, ctx);
  load_tile_async<Bc, D, kThreads>(v_tile, v + head_offset, D, key0, ctx);
  load_query_tile(first_query_tile, 0);
  commit_copies();

  float dk_acc[M][D / 8][4], dv_acc[M][D / 8][4];
  set_zero(dk_acc);
  set_zero(dv_acc);

  for (int tile = first_query_tile; tile < query_tiles; ++tile) {
    const int buffer = (tile - first_query_tile) & 1;
    // Past this barrier this tile's copies are visible to all, and every
    // warp is done with the previous tile's buffers and its dS.
    wait_copies<0>();
    __syncthreads();
    if (tile + 1 < query_tiles) {
      load_query_tile(tile + 1, buffer ^ 1);
      commit_copies();
    }
    const bf16* const q_buf = q_tiles + buffer * Br * S;
    const bf16* const do_buf = do_tiles + buffer * Br * S;
    const float* const lse_buf = lse_tiles + buffer * Br;
    const float* const delta_buf = delta_tiles + buffer * Br;
    const int query0 = tile * Br;

    // Sᵀ = K Qᵀ and dPᵀ = V dOᵀ for this warp's 16·M keys × Br queries.
    float p[M][Br / 8][4], dp[M][Br / 8][4];
    set_zero(p);
    set_zero(dp);
#pragma unroll
    for (int kk = 0; kk < D / 16; ++kk) {
      std::uint32_t kf[M][4], vf[M][4];
#pragma unroll
      for (int m = 0; m < M; ++m) {
        ldmatrix_x4(kf[m], a_address<S>(k_tile, warp_row0 + 16 * m, kk * 16, lane));
        ldmatrix_x4(vf[m], a_address<S>(v_tile, warp_row0 + 16 * m, kk * 16, lane));
      }
      mma_two_products(p, dp, kf, vf, [&](int n2, std::uint32_t(&qf)[4], std::uint32_t(&of)[4]) {
        ldmatrix_x4(qf, b_nk_address<S>(q_buf, n2 * 16, kk * 16, lane));
        ldmatrix_x4(of, b_nk_address<S>(do_buf, n2 * 16, kk * 16, lane));
      });
    }

    // Pᵀ = exp(S·scale − lse) (0 where key > query or query ≥ ctx), then
    // dSᵀ = Pᵀ ∘ (dPᵀ − delta), kept in dp.
#pragma unroll
    for (int m = 0; m < M; ++m) {
      const int block_key0 = warp_key0 + 16 * m;
      const bool masked = query0 < block_key0 + 15 || query0 + Br > ctx;
#pragma unroll
      for (int n = 0; n < Br / 8; ++n)
#pragma unroll
        for (int e = 0; e < 4; ++e) {
          const int column = n * 8 + 2 * quad + (e & 1);
          const int key = block_key0 + group + (e >> 1) * 8, query = query0 + column;
          const float prob = masked && (key > query || query >= ctx)
                                 ? 0.0f
                                 : exp2_approx(fmaf(p[m][n][e], scale_log2, -kLog2e * lse_buf[column]));
          p[m][n][e] = prob;
          dp[m][n][e] = prob * (dp[m][n][e] - delta_buf[column]);
        }
    }

    // dV += Pᵀ dO and dK += dSᵀ Q (the scale goes on dK at the end).
#pragma unroll
    for (int kk = 0; kk < Br / 16; ++kk) {
      std::uint32_t p_frag[M][4], ds_frag[M][4];
#pragma unroll
      for (int m = 0; m < M; ++m) {
        accumulators_to_a(p[m][2 * kk], p[m][2 * kk + 1], p_frag[m]);
        accumulators_to_a(dp[m][2 * kk], dp[m][2 * kk + 1], ds_frag[m]);
      }
      mma_two_products(dv_acc, dk_acc, p_frag, ds_frag,
                       [&](int n2, std::uint32_t(&of)[4], std::uint32_t(&qf)[4]) {
                         ldmatrix_x4_trans(of, b_kn_address<S>(do_buf, kk * 16, n2 * 16, lane));
                         ldmatrix_x4_trans(qf, b_kn_address<S>(q_buf, kk * 16, n2 * 16, lane));
                       });
    }

    // dQ = dS K needs every warp's keys: through shared memory as dSᵀ [key][query].
#pragma unroll
    for (int m = 0; m < M; ++m)
#pragma unroll
      for (int n = 0; n < Br / 8; ++n)
#pragma unroll
        for (int half = 0; half < 2; ++half)
          *reinterpret_cast<std::uint32_t*>(ds_tile + (warp_row0 + 16 * m + group + half * 8) * SP + n * 8 +
                                            2 * quad) = pack_bf16(dp[m][n][2 * half], dp[m][n][2 * half + 1]);
    __syncthreads();

    // Br/16 query blocks × D/16 column pairs in tasks of kPairs pairs (one dS
    // fragment feeds 2·kPairs products), dealt round-robin to the warps.
    constexpr int kPairs = dq_pairs_per_task(Br, D, W);
    constexpr int kTasks = (Br / 16) * (D / 16) / kPairs;
#pragma unroll
    for (int task = warp; task < kTasks; task += W) {
      const int query_block = task / (D / 16 / kPairs);
      const int pair0 = task % (D / 16 / kPairs) * kPairs;
      float dq_part[2 * kPairs][4] = {};
#pragma unroll
      for (int kk = 0; kk < Bc / 16; ++kk) {
        std::uint32_t ds_frag[4];
        ldmatrix_x4_trans(ds_frag, a_km_address<SP>(ds_tile, kk * 16, query_block * 16, lane));
#pragma unroll
        for (int pair = 0; pair < kPairs; ++pair) {
          std::uint32_t kf[4];
          ldmatrix_x4_trans(kf, b_kn_address<S>(k_tile, kk * 16, (pair0 + pair) * 16, lane));
          mma_bf16_x2(dq_part[2 * pair], dq_part[2 * pair + 1], ds_frag, kf);
        }
      }
#pragma unroll
      for (int half = 0; half < 2; ++half) {
        const int query = query0 + query_block * 16 + group + half * 8;
        if (query < ctx) {
          float* const row =
              dq_accum + (static_cast<std::size_t>(head) * ctx + query) * D + pair0 * 16 + 2 * quad;
#pragma unroll
          for (int nn = 0; nn < 2 * kPairs; ++nn)
            atomic_add_pair(row + nn * 8, dq_part[nn][2 * half], dq_part[nn][2 * half + 1]);
        }
      }
    }
  }

#pragma unroll
  for (int m = 0; m < M; ++m)
#pragma unroll
    for (int half = 0; half < 2; ++half) {
      const int key = warp_key0 + 16 * m + group + half * 8;
      if (key >= ctx) continue;
      const std::size_t row = head_offset + static_cast<std::size_t>(key) * D;
#pragma unroll
      for (int n = 0; n < D / 8; ++n) {
        const int col = n * 8 + 2 * quad;
        *reinterpret_cast<std::uint32_t*>(dk + row + col) =
            pack_bf16(dk_acc[m][n][2 * half] * scale, dk_acc[m][n][2 * half + 1] * scale);
        *reinterpret_cast<std::uint32_t*>(dv + row + col) =
            pack_bf16(dv_acc[m][n][2 * half], dv_acc[m][n][2 * half + 1]);
      }
    }
}

// Kernels taking more than 48 KB of shared memory must opt in, once per kernel.
template <class Kernel>
void allow_shared_bytes(Kernel kernel, std::size_t bytes) {
  GPUPROF_CUDA_CHECK(
      cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(bytes)));
}

float softmax_scale(const AttentionShape& shape) {
  return static_cast<float>(1.0 / std::sqrt(static_cast<double>(shape.d_head)));
}

template <int D>
void launch_forward(const AttentionShape& shape, const bf16* q, const bf16* k, const bf16* v, bf16* context,
                    float* lse, cudaStream_t stream) {
  constexpr std::size_t bytes = forward_shared_bytes<D>();
  static const bool prepared = (allow_shared_bytes(flash_forward_kernel<D>, bytes), true);
  (void)prepared;
  const dim3 grid =
      head_grid((shape.ctx + kForwardQueryTile<D> - 1) / kForwardQueryTile<D>, shape.batch * shape.heads);
  flash_forward_kernel<D><<<grid, 32 * kForwardWarps, bytes, stream>>>(q, k, v, context, lse, shape.ctx,
                                                                       shape.heads, shape.batch * shape.heads,
                                                                       softmax_scale(shape) * kLog2e);
  EXAMPLE_LAUNCH_CHECK();
}

template <class Config>
void launch_backward_tiles(const AttentionShape& shape, const bf16* q, const bf16* k, const bf16* v,
                           const bf16* dcontext, const float* lse, const float* delta, float* dq_accum,
                           bf16* dk, bf16* dv, float scale, cudaStream_t stream) {
  static const bool prepared =
      (allow_shared_bytes(flash_backward_kernel<Config>, Config::shared_bytes), true);
  (void)prepared;
  const dim3 grid =
      head_grid((shape.ctx + Config::key_tile - 1) / Config::key_tile, shape.batch * shape.heads);
  flash_backward_kernel<Config><<<grid, Config::threads, Config::shared_bytes, stream>>>(
      q, k, v, dcontext, lse, delta, dq_accum, dk, dv, shape.ctx, shape.heads, shape.batch * shape.heads,
      scale * kLog2e, scale);
  EXAMPLE_LAUNCH_CHECK();
}

// Shared memory a block of the current device may opt in to.
std::size_t device_shared_bytes() {
  int device = 0, bytes = 0;
  GPUPROF_CUDA_CHECK(cudaGetDevice(&device));
  GPUPROF_CUDA_CHECK(cudaDeviceGetAttribute(&bytes, cudaDevAttrMaxSharedMemoryPerBlockOptin, device));
  return static_cast<std::size_t>(bytes);
}

template <int D>
void launch_backward(const AttentionShape& shape, const bf16* q, const bf16* k, const bf16* v,
                     const bf16* context, const float* lse, const bf16* dcontext, bf16* dq, bf16* dk,
                     bf16* dv, float* workspace, FlashBackwardTiles tiles, cudaStream_t stream) {
  const long long rows = shape.score_rows();
  float* const dq_accum = workspace;
  float* const delta = workspace + static_cast<std::size_t>(rows) * D;

  constexpr unsigned kRowsPerBlock = 8;  // one warp each
  flash_backward_preprocess_kernel<D>
      <<<static_cast<unsigned>((rows + kRowsPerBlock - 1) / kRowsPerBlock), 32 * kRowsPerBlock, 0, stream>>>(
          context, dcontext, delta, dq_accum, shape.ctx, shape.heads, rows);
  EXAMPLE_LAUNCH_CHECK();

  const float scale = softmax_scale(shape);
  if (tiles == FlashBackwardTiles::compact || FastBackwardConfig<D>::shared_bytes > device_shared_bytes())
    launch_backward_tiles<CompactBackwardConfig<D>>(shape, q, k, v, dcontext, lse, delta, dq_accum, dk, dv,
                                                    scale, stream);
  else
    launch_backward_tiles<FastBackwardConfig<D>>(shape, q, k, v, dcontext, lse, delta, dq_accum, dk, dv,
                                                 scale, stream);

  const std::size_t vectors = static_cast<std::size_t>(rows) * D / kVec;
  flash_backward_dq_kernel<<<blocks_for(vectors, 256), 256, 0, stream>>>(dq_accum, dq, scale, vectors);
  EXAMPLE_LAUNCH_CHECK();
}

}  // namespace

void check_flash_attention_shape(const AttentionShape& shape) {
  if (shape.batch <= 0 || shape.heads <= 0 || shape.ctx <= 0)
    throw std::invalid_argument("flash attention: batch, heads and ctx must be positive (got " +
                                std::to_string(shape.batch) + ", " + std::to_string(shape.heads) + ", " +
                                std::to_string(shape.ctx) + ")");
  if (static_cast<long long>(shape.batch) * shape.heads > std::numeric_limits<int>::max())
    throw std::invalid_argument("flash attention: batch·heads " +
                                std::to_string(static_cast<long long>(shape.batch) * shape.heads) +
                                " exceeds 2^31 - 1");
  switch (shape.d_head) {
    case 64:
    case 80:
    case 96:
    case 128: return;
    default:
      throw std::invalid_argument("flash attention: d_head " + std::to_string(shape.d_head) +
                                  " is not supported (64, 80, 96 or 128)");
  }
}

std::size_t flash_attention_workspace_floats(const AttentionShape& shape) {
  check_flash_attention_shape(shape);
  return static_cast<std::size_t>(shape.score_rows()) * (shape.d_head + 1);
}

void flash_attention_forward(const AttentionShape& shape, const bf16* q, const bf16* k, const bf16* v,
                             bf16* context, float* lse, cudaStream_t stream) {
  check_flash_attention_shape(shape);
  switch (shape.d_head) {
    case 64: return launch_forward<64>(shape, q, k, v, context, lse, stream);
    case 80: return launch_forward<80>(shape, q, k, v, context, lse, stream);
    case 96: return launch_forward<96>(shape, q, k, v, context, lse, stream);
    case 128: return launch_forward<128>(shape, q, k, v, context, lse, stream);
  }
}

void flash_attention_backward(const AttentionShape& shape, const bf16* q, const bf16* k, const bf16* v,
                              const bf16* context, const float* lse, const bf16* dcontext, bf16* dq, bf16* dk,
                              bf16* dv, float* workspace, cudaStream_t stream, FlashBackwardTiles tiles) {
  check_flash_attention_shape(shape);
  switch (shape.d_head) {
    case 64:
      return launch_backward<64>(shape, q, k, v, context, lse, dcontext, dq, dk, dv, workspace, tiles,
                                 stream);
    case 80:
      return launch_backward<80>(shape, q, k, v, context, lse, dcontext, dq, dk, dv, workspace, tiles,
                                 stream);
    case 96:
      return launch_backward<96>(shape, q, k, v, context, lse, dcontext, dq, dk, dv, workspace, tiles,
                                 stream);
    case 128:
      return launch_backward<128>(shape, q, k, v, context, lse, dcontext, dq, dk, dv, workspace, tiles,
                                  stream);
  }
}

}  // namespace transformer::cuda
