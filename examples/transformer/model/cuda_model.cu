// model/cuda_model.cu: the CUDA backend: the CS336 Transformer LM on cuBLAS GEMMs
// and the kernels of this folder, its memory allocated once from an arena.
// docs/model.md ("The CUDA backend") says how: precisions, the arena and the
// buffers that share bytes, padded shapes, CUDA-graph capture, AdamW on a
// second stream overlapping backward, and the data-parallel gradient hooks.
#include <algorithm>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include <gpuprof/graph.hpp>
#include <gpuprof/scope.hpp>

#include "cuda/adamw.hpp"
#include "cuda/attention.hpp"
#include "common/cuda_check.hpp"
#include "common/kernel_image.hpp"
#include "common/stream_event.hpp"
#include "cuda/cross_entropy.hpp"
#include "cuda/device_utils.cuh"
#include "cuda/embedding.hpp"
#include "cuda/cudnn_attention.hpp"
#include "cuda/flash_attention.hpp"
#include "cuda/gemm.hpp"
#include "cuda/parameters.hpp"
#include "cuda/rmsnorm.hpp"
#include "cuda/swiglu.hpp"
#include "model/backend.hpp"

namespace transformer {
namespace cuda {
namespace {

void check_supported(const RunConfig& config) {
  config.model.validate();
  if (config.batch <= 0 || config.ctx <= 0)
    throw std::invalid_argument("CUDA backend: batch and ctx must be > 0 (got " +
                                std::to_string(config.batch) + ", " + std::to_string(config.ctx) + ")");
  if (is_fused(config.attention) && config.precision != Precision::bf16)
    throw std::invalid_argument(std::string("CUDA backend: ") + to_string(config.attention) +
                                " attention is bf16 only (got " + to_string(config.precision) +
                                "); use the naive attention for fp32 and tf32");
  if (config.attention == Attention::fused)
    check_flash_attention_shape({config.batch, config.ctx, config.model.heads, config.model.d_head()});
}

// Elements of each flat parameter buffer (the master weights or their split
// halves, the gradients, the AdamW moments). The lm_head, the layout's last
// tensor, gets zero rows up to padded_to_vectors(vocab), so its GEMMs see a
// vocab that is a multiple of kVec (cuBLAS's bf16 kernels for an odd one are
// far slower), and the whole is padded to whole vectors for the flat kernels. The padding
// stays zero: zero weights give zero logits in the padding columns, which
// the cross-entropy backward turns into zero gradients, so AdamW leaves
// them zero. Equal to the layout's total when vocab and d_model are
// multiples of kVec.
std::size_t flat_count(const ParameterLayout& layout) {
  const ParamTensor& head = layout.tensors.back();
  if (head.kind != ParamKind::lm_head)
    throw std::logic_error("CUDA backend: the parameter layout must end with the lm_head");
  const std::size_t padding_rows = padded_to_vectors(head.rows) - head.rows;
  return padded_to_vectors(layout.total + padding_rows * head.cols);
}

// A run of the arena's buffers with one purpose, allocated on its own:
// [begin, end) in arena offsets, at `base` once allocated.
struct ArenaRegion {
  std::string name;
  std::size_t begin = 0, end = 0;
  bool per_step = false;  // written by every step (poisoned on request)
  char* base = nullptr;
};

// Carves typed, 256-byte aligned buffers out of the arena's regions. Run once
// without memory to size the regions (every pointer null), then again over
// those regions, each allocated. seek() lets buffers with disjoint lifetimes
// share bytes; high_water() is where the furthest buffer taken so far ends.
// A buffer never spans two regions: a region begins past every buffer taken.
class Carver {
 public:
  explicit Carver(const std::vector<ArenaRegion>* placed = nullptr) : placed_(placed) {}
  // Aligns the next buffer's start and returns its offset.
  std::size_t align() {
    offset_ = round_up(offset_);
    return offset_;
  }
  template <class T>
  T* take(std::size_t count) {
    const std::size_t offset = align();
    offset_ += count * sizeof(T);
    high_water_ = std::max(high_water_, offset_);
    return reinterpret_cast<T*>(at(offset));
  }
  // The address of an arena offset: in the last allocated region that begins
  // at or before it (empty regions are not allocated).
  char* at(std::size_t offset) const {
    if (!placed_) return nullptr;
    const ArenaRegion* region = nullptr;
    for (const ArenaRegion& r : *placed_)
      if (r.begin <= offset) region = &r;
    if (!region) throw std::logic_error("CUDA backend: arena offset before the first region");
    return region->base + (offset - region->begin);
  }
  void seek(std::size_t offset) { offset_ = offset; }
  std::size_t high_water() const { return high_water_; }

  // Ends the current region (if any) and begins the next one here, which
  // must be past every buffer taken so far.
  void begin_region(std::string name, bool per_step) {
    if (offset_ < high_water_)
      throw std::logic_error("CUDA backend: region '" + name + "' must begin at the high-water mark");
    end_region();
    regions_.push_back({std::move(name), align(), 0, per_step, nullptr});
  }
  // Every non-empty region, in order; call after the last take().
  std::vector<ArenaRegion> regions() {
    end_region();
    std::vector<ArenaRegion> kept;
    for (const ArenaRegion& region : regions_)
      if (region.end > region.begin) kept.push_back(region);
    return kept;
  }

  static constexpr std::size_t kAlignment = 256;  // cuBLAS workspace and vector accesses
  static std::size_t round_up(std::size_t bytes) {
    return (bytes + kAlignment - 1) / kAlignment * kAlignment;
  }

 private:
  // A region ends after its last buffer, or where the last seek() went if
  // that is further (the gradients are placed by offset, not taken).
  void end_region() {
    if (!regions_.empty()) regions_.back().end = round_up(std::max(offset_, high_water_));
  }

  const std::vector<ArenaRegion>* placed_;
  std::size_t offset_ = 0;
  std::size_t high_water_ = 0;
  std::vector<ArenaRegion> regions_;
};

// What one block keeps for its backward pass. The norms' outputs are kept
// for the weight gradients of the GEMMs they feed (recomputing them cost a
// kernel per norm and read the fp32 input again); the SwiGLU gate's output
// is not: the SwiGLU backward recomputes it in the pass over `h13` it makes
// anyway.
template <class Act>
struct LayerActivations {
  float* input;     // residual stream entering the block [N, d]
  float* inv_rms1;  // [N]
  Act* normed1;     // rmsnorm(input), the QKV GEMM's input [N, d]
  // cuDNN attention: the QKV GEMM's output [N, 3d], q and k rotated in place
  // (attention.q, .k, .v stay null); the other paths copy into those.
  Act* qkv;
  AttentionTensors<Act> attention;
  Act* context;  // attention output before the projection, heads merged
  float* mid;    // input + attention
  float* inv_rms2;
  Act* normed2;   // rmsnorm(mid), the FFN's input
  Act* h13;       // [N, 2·d_ff]
  Act* gated;     // silu(a)⊙b [N, d_ff], the w2 GEMM's input (kept for its weight gradient)
  float* output;  // mid + ffn: the next block's input
};

template <class Act>
struct Buffers {
  // Persistent: survive every step.
  float* params = nullptr;             // fp32 and tf32: the master weights
  __nv_bfloat16* params_hi = nullptr;  // bf16: the master weights split, whose
  std::int16_t* params_lo = nullptr;   //   upper halves are the GEMMs' weights
  float* adam_m = nullptr;             // Mode::step only
  float* adam_v = nullptr;
  AdamWStep* adam_step = nullptr;
  std::int32_t* tokens = nullptr;
  std::int32_t* targets = nullptr;
  std::int32_t* token_offsets = nullptr;
  std::int32_t* token_positions = nullptr;
  float* rope_cos = nullptr;
  float* rope_sin = nullptr;
  void* cublas_workspace = nullptr;
  // Volatile (the per_step regions): written by every step; poisoned on request.
  Act* grads = nullptr;  // training modes only (Act: see the precisions above)
  std::vector<LayerActivations<Act>> layers;
  // The final norm's output, between the lm_head's forward and backward.
  Act* normed = nullptr;
  Act* qkv = nullptr;  // the QKV GEMM's output, before RoPE
  float* final_input = nullptr;
  float* final_inv_rms = nullptr;
  Act* logits = nullptr;
  float* logsumexp = nullptr;
  float* row_loss = nullptr;
  float* loss = nullptr;
  float* norm_partials = nullptr;
  // Backward scratch, shared by all layers (training modes only).
  float* dstream = nullptr;               // gradient of the residual stream
  __nv_bfloat16* dstream_bf16 = nullptr;  // its bf16 copy for the GEMMs (bf16 only)
  Act* dnorm = nullptr;                   // gradient of a norm's output
  Act* dcontext = nullptr;
  Act* dq = nullptr;
  Act* dk = nullptr;
  Act* dv = nullptr;
  Act* dqkv = nullptr;
  Act* dh13 = nullptr;
  Act* dgated = nullptr;
  float* flash_workspace = nullptr;  // fused attention's backward scratch
  float* gain_partials = nullptr;    // the norms' gain-gradient reduction scratch
  std::vector<ArenaRegion> regions;  // in arena order; their sizes add up to total_bytes
  std::size_t total_bytes = 0;
};

struct ActivationSizes {
  std::size_t tokens, d, d_ff;
  bool fused;          // fused attention: per-row lse instead of P and the scores
  bool packed_qkv;     // cuDNN attention: q, k, v read inside the QKV GEMM's output
  std::size_t scores;  // the score buffer: batch·heads·ctx·score_ld (naive attention)
  std::size_t rows;    // batch·heads·ctx: the lse (fused attention)
};

// One block's activations; `input` is the previous block's output, or null
// for a fresh buffer. The caller sets `output`.
template <class Act>
LayerActivations<Act> take_layer(Carver& arena, const ActivationSizes& s, float* input) {
  const std::size_t N = s.tokens, d = s.d;
  LayerActivations<Act> a{};
  a.input = input ? input : arena.take<float>(N * d);
  a.inv_rms1 = arena.take<float>(N);
  a.normed1 = arena.take<Act>(N * d);
  if (s.packed_qkv) {
    a.qkv = arena.take<Act>(N * 3 * d);
  } else {
    a.attention.q = arena.take<Act>(N * d);
    a.attention.k = arena.take<Act>(N * d);
    a.attention.v = arena.take<Act>(N * d);
  }
  if (s.fused) a.attention.lse = arena.take<float>(s.rows);
  else a.attention.probs = arena.take<Act>(s.scores);
  a.context = arena.take<Act>(N * d);
  a.mid = arena.take<float>(N * d);
  a.inv_rms2 = arena.take<float>(N);
  a.normed2 = arena.take<Act>(N * d);
  a.h13 = arena.take<Act>(N * 2 * s.d_ff);
  a.gated = arena.take<Act>(N * s.d_ff);
  return a;
}

// Every block's activations in layer order; layer_ends[l] = where layer l's
// buffers end (each block's output belongs to the layer that writes it).
template <class Act>
std::vector<LayerActivations<Act>> take_saved_layers(Carver& arena, const ActivationSizes& s, int layers,
                                                     std::vector<std::size_t>* layer_ends) {
  std::vector<LayerActivations<Act>> saved;
  for (int layer = 0; layer < layers; ++layer) {
    LayerActivations<Act> a = take_layer<Act>(arena, s, layer == 0 ? nullptr : saved.back().output);
    a.output = arena.take<float>(s.tokens * s.d);
    saved.push_back(a);
    layer_ends->push_back(arena.align());
  }
  return saved;
}

// Mode::fwd's block memory, reused by every layer, with the buffers' bytes
// shared wherever their lifetimes inside one block's forward allow (r = an
// fp32 [N, d] tensor, x = an Act one, S = the scores' element count):
//   [0, r)         the residual stream: the block's input, later its output.
//                  Dead from the first norm (which copies it into `mid`) to
//                  the second (which writes the output), so v lives there.
//   [r, 2r)        mid; dead once the second norm has copied it into the
//                  output, so the FFN's h13 [N, 2·d_ff] and gated [N, d_ff]
//                  start here (no attention buffer is alive by then).
//   [2r, 2r + U)   qkv, dead once RoPE has split it into q, k, v; then the
//                  fp32 scores; U = max(3x, 4S). In fp32 the softmax writes
//                  P over the scores; in bf16 the scores are dead after it,
//                  and the attention output goes here.
//   [2r + U, …)    q and k, dead once the scores GEMM has read them; then P
//                  (bf16), or the attention output (fp32).
// So the block peaks at the largest live set of its forward, not at the sum
// of its buffers: mid + qkv + q, k, v at RoPE, mid + q, k, v + scores at the
// scores GEMM, mid + v + scores (+ P in bf16) at the softmax, or the
// residual + h13 + gated at the SwiGLU. The norms' statistics go to
// `inv_rms`: no one reads them without a backward pass.
// Fused attention has no scores and no P: q, k and the lse follow qkv, and
// the attention output goes over qkv (dead once RoPE has split it). cuDNN's
// reads q, k, v inside qkv while it writes the output: the lse and the
// output follow qkv, and there are no q, k, v buffers.
template <class Act>
struct ForwardBlock {
  LayerActivations<Act> layer;
  Act* qkv;
  float* scores;
};

template <class Act>
ForwardBlock<Act> take_forward_block(Carver& arena, const ActivationSizes& s, float* inv_rms) {
  const std::size_t N = s.tokens, d = s.d;
  ForwardBlock<Act> f{};
  LayerActivations<Act>& a = f.layer;
  a.inv_rms1 = a.inv_rms2 = inv_rms;
  const std::size_t stream_start = arena.align();
  a.input = arena.take<float>(N * d);
  a.output = a.input;  // the block writes its output over its spent input
  const std::size_t mid_start = arena.align();
  a.mid = arena.take<float>(N * d);
  const std::size_t attention_start = arena.align();

  arena.seek(stream_start);
  if (!s.packed_qkv) a.attention.v = arena.take<Act>(N * d);  // x ≤ r: Act is at most 4 bytes

  arena.seek(mid_start);
  a.h13 = arena.take<Act>(N * 2 * s.d_ff);
  a.gated = arena.take<Act>(N * s.d_ff);

  arena.seek(attention_start);
  f.qkv = arena.take<Act>(N * 3 * d);
  const std::size_t qkv_end = arena.align();
  arena.seek(attention_start);
  if (!s.fused) f.scores = arena.take<float>(s.scores);
  const std::size_t qk_start = std::max(qkv_end, arena.align());
  arena.seek(qk_start);
  if (s.packed_qkv) {
    a.qkv = f.qkv;
    a.attention.lse = arena.take<float>(s.rows);
    a.context = arena.take<Act>(N * d);
    return f;
  }
  a.attention.q = arena.take<Act>(N * d);
  a.attention.k = arena.take<Act>(N * d);
  // P · V reads P while it writes the attention output, so the output goes
  // to whichever of the two regions P does not occupy: that one is dead.
  if (s.fused) {
    a.attention.lse = arena.take<float>(s.rows);
    arena.seek(attention_start);
  } else if constexpr (std::is_same_v<Act, float>) {
    // The softmax kernel reads each element before writing it, from the
    // same thread, so fp32 P can overwrite the scores in place.
    a.attention.probs = f.scores;
    arena.seek(qk_start);
  } else {
    arena.seek(qk_start);
    a.attention.probs = arena.take<Act>(s.scores);
    arena.seek(attention_start);
  }
  a.context = arena.take<Act>(N * d);
  return f;
}

// Where the gradients start, in bytes relative to the saved activations'
// start (may be negative), so that they share memory with the activations
// without ever overwriting one still needed: backward writes the lm_head's
// and final norm's gradients first, while every activation is alive, then
// block l's while only layers ≤ l are, and the embedding's last, when none
// is. The layout stores emb, blocks 0…L−1, final_norm, lm_head, so each
// block's gradients must lie above its own layer's end.
template <class Grad>
long long gradients_offset(const ParameterLayout& layout, int layers,
                           const std::vector<std::size_t>& layer_ends) {
  const auto grad_bytes = [](std::size_t index) { return static_cast<long long>(index * sizeof(Grad)); };
  long long offset = static_cast<long long>(layer_ends.back()) - grad_bytes(layout.find("final_norm").offset);
  for (int layer = 0; layer < layers; ++layer)
    offset =
        std::max(offset, static_cast<long long>(layer_ends[layer]) - grad_bytes(layout.block_offset(layer)));
  // Round up (towards +∞ for negatives too) to keep the gradients aligned.
  const long long step = static_cast<long long>(Carver::kAlignment);
  const long long rounded = offset / step * step;
  return rounded < offset ? rounded + step : rounded;
}

// A stretch of the flat parameters that one AdamW launch updates.
struct UpdatePiece {
  std::size_t begin, end;  // elements, whole vectors
};

// The flat parameters cut where backward finishes their gradients, in that
// order: the lm_head and final norm (stored last), blocks L−1 … 0, the
// embedding (stored first). A vector that straddles a cut goes to the piece
// on its lower side, which backward finishes later, so no piece reads a
// gradient before it is written.
std::vector<UpdatePiece> update_pieces(const ParameterLayout& layout, int layers, std::size_t flat_count) {
  const auto cut = [](std::size_t element) { return padded_to_vectors(element); };
  std::vector<std::size_t> starts{cut(layout.find("final_norm").offset)};
  for (int layer = layers - 1; layer >= 0; --layer) starts.push_back(cut(layout.block_offset(layer)));
  starts.push_back(0);
  std::vector<UpdatePiece> pieces;
  std::size_t end = flat_count;
  for (const std::size_t begin : starts) {
    pieces.push_back({begin, end});
    end = begin;
  }
  return pieces;
}

// The arena: [persistent | small volatile buffers | logits ∪ block scratch |
// (training) saved activations ∪ gradients]. The logits live from the lm_head
// GEMM to the lm_head backward GEMM, a stretch in which no block runs, so
// they share bytes with everything only blocks use. Mode::fwd's block
// scratch is take_forward_block()'s one set of activations, reused by every
// layer; the final norm reads the last block's output before the lm_head
// GEMM writes the logits over it.
// `placed`: the regions of a sizing pass (carve(nullptr, ...)), allocated.
template <class Act>
Buffers<Act> carve(const std::vector<ArenaRegion>* placed, const RunConfig& config,
                   const ParameterLayout& layout) {
  constexpr bool mixed = std::is_same_v<Act, __nv_bfloat16>;
  const ModelConfig& m = config.model;
  const bool training = config.mode != Mode::fwd;
  const std::size_t N = static_cast<std::size_t>(config.batch) * config.ctx;
  const std::size_t d = m.d_model, F = m.d_ff, P = flat_count(layout);
  const std::size_t V = m.vocab, logits_ld = padded_to_vectors(V);
  const AttentionShape shape{config.batch, config.ctx, m.heads, m.d_head()};
  const bool fused = is_fused(config.attention);
  const auto rows = static_cast<std::size_t>(shape.score_rows());
  const auto scores = fused ? 0 : static_cast<std::size_t>(shape.score_buffer_elements());
  const std::size_t rope = static_cast<std::size_t>(config.ctx) * (m.d_head() / 2);
  const bool packed_qkv = config.attention == Attention::cudnn;
  const ActivationSizes sizes{N, d, F, fused, packed_qkv, scores, rows};

  Carver arena(placed);
  Buffers<Act> b;
  if (mixed) {
    arena.begin_region("parameters (split: bf16 upper halves)", false);
    b.params_hi = arena.take<__nv_bfloat16>(P);
    arena.begin_region("parameters (split: lower halves)", false);
    b.params_lo = arena.take<std::int16_t>(P);
  } else {
    arena.begin_region("parameters (fp32)", false);
    b.params = arena.take<float>(P);
  }
  if (config.mode == Mode::step) {
    arena.begin_region("AdamW state", false);
    b.adam_m = arena.take<float>(P);
    b.adam_v = arena.take<float>(P);
    b.adam_step = arena.take<AdamWStep>(1);
  }
  arena.begin_region("tokens, RoPE tables, cuBLAS workspace", false);
  b.tokens = arena.take<std::int32_t>(N);
  b.targets = arena.take<std::int32_t>(N);
  b.token_offsets = arena.take<std::int32_t>(V + 1);
  b.token_positions = arena.take<std::int32_t>(N);
  b.rope_cos = arena.take<float>(rope);
  b.rope_sin = arena.take<float>(rope);
  b.cublas_workspace = arena.take<char>(Gemm::kWorkspaceBytes);

  arena.begin_region("norm and loss buffers", true);
  b.normed = arena.take<Act>(N * d);
  b.final_inv_rms = arena.take<float>(N);
  b.logsumexp = arena.take<float>(N);
  b.row_loss = arena.take<float>(N);
  b.loss = arena.take<float>(1);
  if (config.mode == Mode::step && config.adamw.clip_norm > 0)
    b.norm_partials = arena.take<float>(kNormPartials);
  if (training) {
    b.dnorm = arena.take<Act>(N * d);  // written by the lm_head backward GEMM
    b.gain_partials =
        arena.take<float>(rmsnorm_gain_partials_floats(static_cast<int>(N), static_cast<int>(d)));
  }

  arena.begin_region(training ? "logits and block scratch" : "logits and block activations", true);
  const std::size_t shared_start = arena.align();
  b.logits = arena.take<Act>(N * logits_ld);
  arena.seek(shared_start);
  float* score_scratch = nullptr;
  if (!training) {
    // The statistics go to final_inv_rms too: fwd mode reads none of them.
    ForwardBlock<Act> block = take_forward_block<Act>(arena, sizes, b.final_inv_rms);
    // Without a backward pass a norm's output lives only until the GEMM
    // after it: every norm writes the one `normed` buffer.
    block.layer.normed1 = block.layer.normed2 = b.normed;
    b.layers.assign(m.layers, block.layer);
    b.qkv = block.qkv;
    score_scratch = block.scores;
  } else {
    if (!packed_qkv) b.qkv = arena.take<Act>(N * 3 * d);  // cuDNN's path keeps it per layer
    if (fused)
      b.flash_workspace = arena.take<float>(packed_qkv ? CudnnAttention::workspace_floats(shape)
                                                       : flash_attention_workspace_floats(shape));
    else score_scratch = arena.take<float>(scores);
    b.dstream = arena.take<float>(N * d);
    if (mixed) b.dstream_bf16 = arena.take<__nv_bfloat16>(N * d);
    b.dcontext = arena.take<Act>(N * d);
    if (!packed_qkv) {  // cuDNN writes the gradients into dqkv directly
      b.dq = arena.take<Act>(N * d);
      b.dk = arena.take<Act>(N * d);
      b.dv = arena.take<Act>(N * d);
    }
    b.dqkv = arena.take<Act>(N * 3 * d);
    b.dh13 = arena.take<Act>(N * 2 * F);
    b.dgated = arena.take<Act>(N * F);
  }
  arena.seek(arena.high_water());  // past the logits and the block scratch

  if (training) {
    arena.begin_region("saved activations and gradients", true);
    std::vector<std::size_t> relative_ends;
    Carver probe;
    take_saved_layers<Act>(probe, sizes, m.layers, &relative_ends);
    const long long grads_offset = gradients_offset<Act>(layout, m.layers, relative_ends);
    // Starts stay 256-aligned, so the layers' relative layout is the probe's.
    const std::size_t region_start = arena.align();
    const std::size_t layers_start = region_start + static_cast<std::size_t>(std::max(0LL, -grads_offset));
    const std::size_t grads_start =
        static_cast<std::size_t>(static_cast<long long>(layers_start) + grads_offset);
    arena.seek(layers_start);
    std::vector<std::size_t> layer_ends;
    b.layers = take_saved_layers<Act>(arena, sizes, m.layers, &layer_ends);
    b.grads = reinterpret_cast<Act*>(arena.at(grads_start));
    arena.seek(std::max(layer_ends.back(), grads_start + P * sizeof(Act)));
  }
  for (LayerActivations<Act>& a : b.layers) a.attention.scores = score_scratch;
  b.final_input = b.layers.back().output;
  b.regions = arena.regions();
  b.total_bytes = b.regions.back().end;
  if (placed)
    for (std::size_t i = 0; i < b.regions.size(); ++i) b.regions[i].base = (*placed)[i].base;
  return b;
}

struct DeviceMemory {
  void* data = nullptr;
  DeviceMemory() = default;
  DeviceMemory(DeviceMemory&& other) noexcept : data(std::exchange(other.data, nullptr)) {}
  DeviceMemory& operator=(DeviceMemory&&) = delete;
  ~DeviceMemory() { cudaFree(data); }
};

// Allocates every region (setting its base) into `memory`, each in a scope
// named after it, or throws OutOfMemory for the whole arena (never a crash;
// the regions allocated so far are freed with `memory`).
void allocate_regions(std::vector<ArenaRegion>& regions, std::vector<DeviceMemory>& memory) {
  std::size_t bytes = 0;
  for (const ArenaRegion& region : regions) bytes += region.end - region.begin;
  std::size_t free_bytes = 0, total_bytes = 0;
  GPUPROF_CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total_bytes));
  if (bytes > free_bytes) throw OutOfMemory(bytes, free_bytes);
  memory.reserve(regions.size());
  for (ArenaRegion& region : regions) {
    GPUPROF_SCOPE("allocate " + region.name);
    memory.emplace_back();
    const cudaError_t status = cudaMalloc(&memory.back().data, region.end - region.begin);
    if (status == cudaErrorMemoryAllocation) {
      cudaGetLastError();  // clear the sticky-free allocation error
      memory.back().data = nullptr;
      throw OutOfMemory(bytes, free_bytes);
    }
    GPUPROF_CUDA_CHECK(status);
    region.base = static_cast<char*>(memory.back().data);
  }
}

struct GraphOwner {
  cudaGraph_t graph = nullptr;
  ~GraphOwner() {
    if (graph) cudaGraphDestroy(graph);
  }
};

// The host's record of what has run, which decides which call may come next:
// each phase checks and updates it, also when a graph replay stands for it.
enum class Phase { forward, backward, optimizer_step };
// Where backward() last recorded its gradient-ready events: an overlapped
// optimizer step may wait only on events of its own kind of enqueueing (a
// capture cannot wait on an event recorded outside it, and a replay records
// none the host can wait on).
enum class ReadyEvents { none, eager, captured };
struct PhaseState {
  bool have_forward = false;
  bool logits_are_gradient = false;
  ReadyEvents gradients_ready = ReadyEvents::none;
};

// The instantiated graph of capture_graph() and the phases it stands for.
struct ExecutableGraph {
  cudaGraphExec_t exec = nullptr;
  std::vector<Phase> phases;
  ExecutableGraph() = default;
  ExecutableGraph(ExecutableGraph&& other) noexcept
      : exec(std::exchange(other.exec, nullptr)), phases(std::move(other.phases)) {}
  ExecutableGraph& operator=(ExecutableGraph&& other) noexcept {
    std::swap(exec, other.exec);
    std::swap(phases, other.phases);
    return *this;
  }
  ~ExecutableGraph() {
    if (exec) cudaGraphExecDestroy(exec);
  }
};

template <class T>
void upload(T* device, const std::vector<T>& host, cudaStream_t stream) {
  GPUPROF_CUDA_CHECK(
      cudaMemcpyAsync(device, host.data(), host.size() * sizeof(T), cudaMemcpyHostToDevice, stream));
}

template <class Act>
class CudaBackend final : public Backend {
  static constexpr bool kMixed = std::is_same_v<Act, __nv_bfloat16>;

 public:
  cudaStream_t stream() const override { return stream_.get(); }

  explicit CudaBackend(const RunConfig& config)
      : config_(config), layout_(config.model), block_(config.model), flat_count_(flat_count(layout_)) {
    check_supported(config);
    if (overlaps_optimizer()) {
      update_pieces_ = update_pieces(layout_, config_.model.layers, flat_count_);
      gradients_ready_.resize(update_pieces_.size());
      pieces_reduced_.resize(update_pieces_.size());
    }
    // Host-timed scopes: what memory_timeline attributes the allocations to.
    GPUPROF_SCOPE("build backend");
    {
      GPUPROF_SCOPE("create cuBLAS handle");
      gemm_ = std::make_unique<Gemm>(config_.precision, stream());
    }
    if (config_.attention == Attention::cudnn) {
      // Plans and their workspace now, so no later step (or capture) allocates.
      GPUPROF_SCOPE("build cuDNN attention plans");
      cudnn_ = std::make_unique<CudnnAttention>();
      cudnn_->check_shape(attention_shape(), QkvLayout::packed, config_.mode != Mode::fwd);
    }
    std::vector<ArenaRegion> regions = carve<Act>(nullptr, config_, layout_).regions;
    allocate_regions(regions, arena_);
    buffers_ = carve<Act>(&regions, config_, layout_);
    gemm_->set_workspace(buffers_.cublas_workspace, Gemm::kWorkspaceBytes);
    const RopeTables rope = make_rope_tables(config_.ctx, config_.model.d_head(), config_.model.rope_theta);
    upload(buffers_.rope_cos, rope.cos, stream());
    upload(buffers_.rope_sin, rope.sin, stream());
    if constexpr (kMixed) {
      zero_flat_padding(buffers_.params_hi);
      zero_flat_padding(buffers_.params_lo);
      init_parameters(layout_, config_.seed, hi_bits(), buffers_.params_lo, stream());
    } else {
      zero_flat_padding(buffers_.params);
      init_parameters(layout_, config_.seed, buffers_.params, stream());
    }
    if (config_.mode == Mode::step) {
      GPUPROF_CUDA_CHECK(cudaMemsetAsync(buffers_.adam_m, 0, flat_count_ * sizeof(float), stream()));
      GPUPROF_CUDA_CHECK(cudaMemsetAsync(buffers_.adam_v, 0, flat_count_ * sizeof(float), stream()));
      GPUPROF_CUDA_CHECK(cudaMemsetAsync(buffers_.adam_step, 0, sizeof(AdamWStep), stream()));
    }
    synchronize();  // the rope tables' host vectors die here
  }

  std::string name() const override { return "cuda"; }
  const RunConfig& config() const override { return config_; }
  std::size_t allocated_bytes() const override {
    return buffers_.total_bytes + (cudnn_ ? cudnn_->workspace_bytes() : 0);
  }

  std::vector<float> parameters() override {
    std::vector<float> host(layout_.total);
    if constexpr (kMixed) {
      std::vector<std::uint16_t> hi(host.size());
      std::vector<std::int16_t> lo(host.size());
      download(hi.data(), hi_bits(), hi.size());
      download(lo.data(), buffers_.params_lo, lo.size());
      join_floats(hi.data(), lo.data(), host.data(), host.size());
    } else {
      download(host.data(), buffers_.params, host.size());
    }
    return host;
  }

  void set_parameters(const std::vector<float>& values) override {
    refuse_inside_capture("set_parameters()");
    if (values.size() != layout_.total)
      throw std::invalid_argument("set_parameters: " + std::to_string(values.size()) +
                                  " values, the layout has " + std::to_string(layout_.total));
    std::vector<std::uint16_t> hi;  // mixed precision: the halves uploaded
    std::vector<std::int16_t> lo;
    if constexpr (kMixed) {
      hi.resize(values.size());
      lo.resize(values.size());
      split_floats(values.data(), hi.data(), lo.data(), values.size());
      upload(hi_bits(), hi, stream());
      upload(buffers_.params_lo, lo, stream());
    } else {
      upload(buffers_.params, values, stream());
    }
    synchronize();  // the host vectors may go away after we return
  }

  void set_batch(const std::vector<std::int32_t>& tokens, const std::vector<std::int32_t>& targets) override {
    refuse_inside_capture("set_batch()");
    const std::size_t n = tokens_count();
    check_ids("tokens", tokens, n);
    check_ids("targets", targets, n);
    const TokenGroups groups = group_positions_by_token(tokens, config_.model.vocab);
    upload(buffers_.tokens, tokens, stream());
    upload(buffers_.targets, targets, stream());
    upload(buffers_.token_offsets, groups.offsets, stream());
    upload(buffers_.token_positions, groups.positions, stream());
    synchronize();  // the host vectors may go away after we return
    have_batch_ = true;
  }

  void forward() override {
    enter(Phase::forward);
    if (config_.poison_buffers)
      for (const ArenaRegion& region : buffers_.regions)
        if (region.per_step)
          GPUPROF_CUDA_CHECK(cudaMemsetAsync(region.base, 0xFF, region.end - region.begin, stream()));
    const int N = tokens_count(), d = config_.model.d_model, V = config_.model.vocab;
    const int padded_vocab = padded_to_vectors(V);  // the lm_head's rows, the logits' columns
    {
      GPUPROF_SCOPE("embedding", stream(), gpuprof::Work{0, 8.0 * N * d});
      embedding_forward(buffers_.tokens, master_at(layout_.find("emb").offset), buffers_.layers[0].input, N,
                        d, stream());
    }
    for (int layer = 0; layer < config_.model.layers; ++layer) block_forward(layer);
    {
      GPUPROF_SCOPE("rmsnorm", stream(), gpuprof::Work{4.0 * N * d, (8.0 + sizeof(Act)) * N * d});
      rmsnorm_forward<Act>(buffers_.final_input, master_at(layout_.find("final_norm").offset),
                           buffers_.normed, buffers_.final_inv_rms, nullptr, N, d, config_.model.norm_eps,
                           stream());
    }
    {
      GPUPROF_SCOPE("lm_head", stream(), gpuprof::Work{matmul_flops(N, V, d), 0});
      linear(buffers_.normed, weights_at("lm_head"), buffers_.logits, data_type<Act>(), N, padded_vocab, d,
             0.0f);
    }
    {
      GPUPROF_SCOPE("cross_entropy", stream(),
                    gpuprof::Work{3.0 * N * V, static_cast<double>(sizeof(Act)) * N * V});
      cross_entropy_forward<Act>(buffers_.logits, buffers_.targets, buffers_.logsumexp, buffers_.row_loss,
                                 buffers_.loss, N, V, padded_vocab, stream());
    }
  }

  void backward() override {
    enter(Phase::backward);
    const int N = tokens_count(), d = config_.model.d_model, V = config_.model.vocab;
    const int padded_vocab = padded_to_vectors(V);
    zero_flat_padding(buffers_.grads);  // the gradient memory is shared: garbage until now
    std::fill(pieces_reduced_.begin(), pieces_reduced_.end(), nullptr);
    {
      GPUPROF_SCOPE("cross_entropy", stream(), gpuprof::Work{3.0 * N * V, 2.0 * sizeof(Act) * N * V});
      cross_entropy_backward<Act>(buffers_.logits, buffers_.targets, buffers_.logsumexp, N, V, padded_vocab,
                                  stream());
    }
    {
      GPUPROF_SCOPE("lm_head", stream(), gpuprof::Work{2 * matmul_flops(N, V, d), 0});
      linear_backward(buffers_.logits, buffers_.normed, weights_at("lm_head"), grads_at("lm_head"),
                      buffers_.dnorm, N, padded_vocab, d);
    }
    // The lm_head's range takes the flat buffer's padding with it.
    const std::size_t head = layout_.find("lm_head").offset;
    gradients_ready(head, flat_count_);
    const std::size_t final_norm = layout_.find("final_norm").offset;
    norm_backward(buffers_.dnorm, buffers_.final_input, "final_norm", buffers_.final_inv_rms,
                  /*residual=*/nullptr);
    gradients_ready(final_norm, head);
    std::size_t piece = 0;
    mark_gradients_ready(piece++);
    for (int layer = config_.model.layers - 1; layer >= 0; --layer) {
      block_backward(layer);
      gradients_ready(layout_.block_offset(layer), layout_.block_offset(layer) + block_.size);
      mark_gradients_ready(piece++);
    }
    {
      GPUPROF_SCOPE("embedding", stream(),
                    gpuprof::Work{0, 8.0 * N * d + sizeof(Act) * static_cast<double>(V) * d});
      embedding_backward(buffers_.token_offsets, buffers_.token_positions, buffers_.dstream, grads_at("emb"),
                         V, d, stream());
    }
    gradients_ready(0, layout_.block_offset(0));
    mark_gradients_ready(piece++);
    // Set on every backward, so an optimizer step never waits on the events
    // of an earlier one (the hook may have come or gone in between).
    phase_state_.gradients_ready = !overlaps_optimizer() ? ReadyEvents::none
                                   : capture_phases_     ? ReadyEvents::captured
                                                         : ReadyEvents::eager;
  }

  void set_gradient_ready_hook(GradientReadyHook hook) override {
    if (config_.mode == Mode::fwd)
      throw std::logic_error("set_gradient_ready_hook() on a backend built for Mode::fwd");
    refuse_inside_capture("set_gradient_ready_hook()");
    gradient_ready_ = std::move(hook);
    phase_state_.gradients_ready = ReadyEvents::none;
    // The events named for the old hook's reductions may be gone with it.
    std::fill(pieces_reduced_.begin(), pieces_reduced_.end(), nullptr);
  }

  void gradients_final_after(GradientRange range, cudaEvent_t done) override {
    if (!gradient_ready_) throw std::logic_error("gradients_final_after() without a gradient-ready hook");
    refuse_inside_capture("gradients_final_after()");
    // A piece's lowest element is reduced last of all its elements (the
    // caller reduces in the order backward announced, top-down, on one stream).
    for (std::size_t i = 0; i < update_pieces_.size(); ++i)
      if (range.begin <= update_pieces_[i].begin && update_pieces_[i].begin < range.end)
        pieces_reduced_[i] = done;
  }

  DeviceGradients gradient_buffer() override {
    if (config_.mode == Mode::fwd)
      throw std::logic_error("gradient_buffer() on a backend built for Mode::fwd");
    return {buffers_.grads, flat_count_, kMixed ? GradientType::bf16 : GradientType::fp32};
  }

  void optimizer_step() override {
    enter(Phase::optimizer_step);
    const double count = static_cast<double>(layout_.total);
    GPUPROF_SCOPE("adamw", stream(), gpuprof::Work{12.0 * count, (24.0 + sizeof(Act)) * count});
    const AdamWBuffers<Act> adamw{buffers_.params,        hi_bits(),          buffers_.params_lo,
                                  buffers_.grads,         buffers_.adam_m,    buffers_.adam_v,
                                  buffers_.norm_partials, buffers_.adam_step, flat_count_};
    // Each piece waits for backward's event, or with a hook for the caller's
    // reduction of its gradients.
    std::vector<cudaEvent_t> ready;
    const ReadyEvents here = capture_phases_ ? ReadyEvents::captured : ReadyEvents::eager;
    if (phase_state_.gradients_ready == here)
      for (const examples::OrderingEvent& event : gradients_ready_) ready.push_back(event.get());
    else if (gradient_ready_ && !capture_phases_ && !pieces_reduced_.empty() &&
             std::find(pieces_reduced_.begin(), pieces_reduced_.end(), nullptr) == pieces_reduced_.end())
      ready = pieces_reduced_;
    if (ready.empty()) {
      // No events of this backward to wait on (no backward since the last
      // replay, clipping, which needs every gradient first, or a hook's
      // caller who did not say when its reductions end): one pass.
      adamw_step(config_.adamw, adamw, stream());
      return;
    }
    const cudaStream_t side = optimizer_stream_.get();
    for (std::size_t i = 0; i < update_pieces_.size(); ++i) {
      GPUPROF_CUDA_CHECK(cudaStreamWaitEvent(side, ready[i], 0));
      adamw_update_range(config_.adamw, adamw, update_pieces_[i].begin, update_pieces_[i].end,
                         /*last_of_step=*/i + 1 == update_pieces_.size(), side);
    }
    GPUPROF_CUDA_CHECK(cudaEventRecord(optimizer_done_.get(), side));
    GPUPROF_CUDA_CHECK(cudaStreamWaitEvent(stream(), optimizer_done_.get(), 0));
  }

  void replay_graph() override {
    if (!graph_.exec) throw std::logic_error("replay_graph() before capture_graph()");
    refuse_inside_capture("replay_graph()");
    // The phases' checks run first, on a copy, so a replay that may not
    // follow what ran before leaves the backend as it was.
    const PhaseState before = phase_state_;
    try {
      for (const Phase phase : graph_.phases) enter(phase);
    } catch (...) {
      phase_state_ = before;
      throw;
    }
    // launch_graph: the NVTX range Nsight shows for the replay, and gpuprof
    // reads the time stamps of the scopes captured in the step as it goes.
    gpuprof::launch_graph(graph_.exec, stream());
    phase_state_.gradients_ready = ReadyEvents::none;
    std::fill(pieces_reduced_.begin(), pieces_reduced_.end(), nullptr);
  }

  bool has_graph() const override { return graph_.exec != nullptr; }

  void synchronize() override {
    refuse_inside_capture("synchronize()");
    GPUPROF_CUDA_CHECK(cudaStreamSynchronize(stream()));
  }

  float loss() override {
    if (!phase_state_.have_forward) throw std::logic_error("loss() before forward()");
    float value = 0;
    download(&value, buffers_.loss, 1);
    return value;
  }

  std::vector<float> logits() override {
    if (!phase_state_.have_forward) throw std::logic_error("logits() before forward()");
    if (phase_state_.logits_are_gradient)
      throw std::logic_error(
          "logits() after backward(): backward turns the logits into their gradient in place; "
          "read them between forward() and backward()");
    const std::size_t rows = tokens_count(), vocab = config_.model.vocab;
    const std::size_t count = rows * vocab;
    std::vector<Act> raw(count);
    download_rows(raw.data(), buffers_.logits, rows, vocab, padded_to_vectors(vocab));
    std::vector<float> values(count);
    std::transform(raw.begin(), raw.end(), values.begin(), [](Act x) { return static_cast<float>(x); });
    return values;
  }

  std::vector<float> gradients() override {
    if (config_.mode == Mode::fwd) throw std::logic_error("gradients() on a backend built for Mode::fwd");
    std::vector<Act> raw(layout_.total);
    download(raw.data(), buffers_.grads, raw.size());
    std::vector<float> host(raw.size());
    std::transform(raw.begin(), raw.end(), host.begin(), [](Act x) { return static_cast<float>(x); });
    return host;
  }

 protected:
  void capture(const std::function<void()>& enqueue) override {
    refuse_inside_capture("capture_graph()");
    // Capture runs the host side of the calls but none of their work: the
    // phase state goes back to what it was, and replays apply the phases.
    const PhaseState before = phase_state_;
    std::vector<Phase> phases;
    capture_phases_ = &phases;
    const auto finish = [&] {
      capture_phases_ = nullptr;
      phase_state_ = before;
    };
    GPUPROF_CUDA_CHECK(cudaStreamBeginCapture(stream(), cudaStreamCaptureModeThreadLocal));
    cudaGraph_t captured = nullptr;
    try {
      enqueue();
    } catch (...) {
      finish();
      if (cudaStreamEndCapture(stream(), &captured) == cudaSuccess && captured) cudaGraphDestroy(captured);
      throw;
    }
    finish();
    GPUPROF_CUDA_CHECK(cudaStreamEndCapture(stream(), &captured));
    const GraphOwner graph{captured};
    if (phases.empty())
      throw std::logic_error(
          "capture_graph(): nothing captured (call forward(), backward(), optimizer_step() or "
          "run() inside it)");
    ExecutableGraph executable;
    // Node priorities: the optimizer's pieces yield to backward inside the graph too.
    GPUPROF_CUDA_CHECK(
        cudaGraphInstantiate(&executable.exec, graph.graph, cudaGraphInstantiateFlagUseNodePriority));
    // Uploads it now, so the first replay costs what every replay does.
    GPUPROF_CUDA_CHECK(cudaGraphUpload(executable.exec, stream()));
    executable.phases = std::move(phases);
    graph_ = std::move(executable);
  }

 private:
  int tokens_count() const { return config_.batch * config_.ctx; }

  // With a gradient-ready hook the gradients backward writes are not final:
  // data-parallel training averages them over the ranks on its own stream
  // after backward has written them. Then the pieces wait for the caller's
  // events (gradients_final_after()), never for backward's.
  bool overlaps_optimizer() const {
    return config_.mode == Mode::step && config_.adamw.clip_norm <= 0 && !gradient_ready_;
  }

  // Backward has written the gradients of update piece `piece`.
  void mark_gradients_ready(std::size_t piece) {
    if (overlaps_optimizer()) GPUPROF_CUDA_CHECK(cudaEventRecord(gradients_ready_.at(piece).get(), stream()));
  }

  // Each gradient lies in the range of the block (or tensor) whose backward
  // writes it, and the gradients share memory only with activations of layers
  // above that block, which backward has spent by then: so a range announced
  // here is final until the next forward() (see gradients_offset()).
  void gradients_ready(std::size_t begin, std::size_t end) {
    if (gradient_ready_) gradient_ready_(GradientRange{begin, end});
  }

  void enter(Phase phase) {
    switch (phase) {
      case Phase::forward:
        if (!have_batch_) throw std::logic_error("forward() before set_batch()");
        phase_state_.have_forward = true;
        phase_state_.logits_are_gradient = false;
        break;
      case Phase::backward:
        if (config_.mode == Mode::fwd)
          throw std::logic_error("backward() on a backend built for Mode::fwd (no gradient buffers)");
        if (!phase_state_.have_forward) throw std::logic_error("backward() before forward()");
        if (phase_state_.logits_are_gradient) throw std::logic_error("backward() twice after one forward()");
        phase_state_.logits_are_gradient = true;
        break;
      case Phase::optimizer_step:
        if (config_.mode != Mode::step)
          throw std::logic_error("optimizer_step() needs a backend built for Mode::step");
        break;
    }
    if (capture_phases_) capture_phases_->push_back(phase);
  }

  // What waits for the device or copies from the host cannot be in a graph.
  void refuse_inside_capture(const char* call) const {
    if (capture_phases_)
      throw std::logic_error(std::string(call) +
                             " inside capture_graph(): a graph can neither wait for the device "
                             "nor copy from host memory that changes between replays");
  }

  // What the norms and the embedding read: the master weights from `offset` on.
  MasterWeights master_at(std::size_t offset) const {
    if constexpr (kMixed) return MasterWeights(hi_bits(), buffers_.params_lo) + offset;
    else return MasterWeights(buffers_.params + offset);
  }
  // The split master's upper halves as bits (they are the bf16 weights).
  std::uint16_t* hi_bits() const { return reinterpret_cast<std::uint16_t*>(buffers_.params_hi); }
  Act* grads_at(const char* tensor) const { return buffers_.grads + layout_.find(tensor).offset; }
  // What the GEMMs read: the fp32 master, or the split master's bf16 halves.
  const Act* weights_at(std::size_t offset) const {
    if constexpr (kMixed) return buffers_.params_hi + offset;
    else return buffers_.params + offset;
  }
  const Act* weights_at(const char* tensor) const { return weights_at(layout_.find(tensor).offset); }
  // The residual-stream gradient as the GEMMs read it.
  const Act* dstream_act() const {
    if constexpr (kMixed) return buffers_.dstream_bf16;
    else return buffers_.dstream;
  }

  // Where the norm backward writes that copy (none needed in fp32).
  Act* dstream_act_copy() {
    if constexpr (kMixed) return buffers_.dstream_bf16;
    else return nullptr;
  }

  // Zeroes the elements past the layout's total of a flat parameter buffer.
  template <class T>
  void zero_flat_padding(T* flat) {
    const std::size_t padding = flat_count_ - layout_.total;
    if (padding > 0)
      GPUPROF_CUDA_CHECK(cudaMemsetAsync(flat + layout_.total, 0, padding * sizeof(T), stream()));
  }

  template <class T>
  void download(T* host, const T* device, std::size_t count) {
    refuse_inside_capture("reading back (parameters(), loss(), logits(), gradients())");
    GPUPROF_CUDA_CHECK(cudaMemcpyAsync(host, device, count * sizeof(T), cudaMemcpyDeviceToHost, stream()));
    synchronize();
  }

  // rows × cols elements whose rows lie `device_stride` apart on the device
  // (padded rows), dense on the host.
  template <class T>
  void download_rows(T* host, const T* device, std::size_t rows, std::size_t cols,
                     std::size_t device_stride) {
    if (device_stride == cols) return download(host, device, rows * cols);
    refuse_inside_capture("reading back (parameters(), loss(), logits(), gradients())");
    GPUPROF_CUDA_CHECK(cudaMemcpy2DAsync(host, cols * sizeof(T), device, device_stride * sizeof(T),
                                         cols * sizeof(T), rows, cudaMemcpyDeviceToHost, stream()));
    synchronize();
  }

  void check_ids(const char* what, const std::vector<std::int32_t>& ids, std::size_t count) const {
    if (ids.size() != count)
      throw std::invalid_argument(std::string("set_batch: ") + what + " has " + std::to_string(ids.size()) +
                                  " ids, expected batch·ctx = " + std::to_string(count));
    for (std::size_t i = 0; i < ids.size(); ++i)
      if (ids[i] < 0 || ids[i] >= config_.model.vocab)
        throw std::invalid_argument(std::string("set_batch: ") + what + "[" + std::to_string(i) +
                                    "] = " + std::to_string(ids[i]) + " is outside [0, " +
                                    std::to_string(config_.model.vocab) + ")");
  }

  // y[rows, out] = x[rows, in]·wᵀ + beta·y, w stored [out, in].
  void linear(const Act* x, const Act* w, void* y, cudaDataType_t y_type, int rows, int out, int in,
              float beta) {
    const cudaDataType_t act = data_type<Act>();
    matmul(*gemm_, Op::none, Op::transpose, rows, out, in, 1.0f, {x, act, in}, {w, act, in}, beta,
           {y, y_type, out});
  }

  // dw[out, in] = dyᵀ·x (overwritten, Act) and dx[rows, in] = dy·w.
  void linear_backward(const Act* dy, const Act* x, const Act* w, Act* dw, Act* dx, int rows, int out,
                       int in) {
    linear_weight_gradient(dy, x, dw, rows, out, in);
    linear_input_gradient(dy, w, dx, rows, out, in);
  }
  void linear_weight_gradient(const Act* dy, const Act* x, Act* dw, int rows, int out, int in) {
    const cudaDataType_t act = data_type<Act>();
    matmul(*gemm_, Op::transpose, Op::none, out, in, rows, 1.0f, {dy, act, out}, {x, act, in}, 0.0f,
           {dw, act, in});
  }
  void linear_input_gradient(const Act* dy, const Act* w, Act* dx, int rows, int out, int in) {
    const cudaDataType_t act = data_type<Act>();
    matmul(*gemm_, Op::none, Op::none, rows, in, out, 1.0f, {dy, act, out}, {w, act, in}, 0.0f,
           {dx, act, in});
  }

  bool fused() const { return is_fused(config_.attention); }

  // S = QKᵀ and P·V: all of T×T on the naive path's GEMMs, the causal half
  // (what the kernel computes) on the fused path.
  double attention_core_flops() const {
    const double full = 2 * matmul_flops(config_.ctx, config_.ctx, config_.model.d_model, config_.batch);
    return fused() ? full / 2 : full;
  }

  AttentionShape attention_shape() const {
    return {config_.batch, config_.ctx, config_.model.heads, config_.model.d_head()};
  }

  void block_forward(int layer) {
    const LayerActivations<Act>& a = buffers_.layers[layer];
    const std::size_t base = layout_.block_offset(layer);
    const int N = tokens_count(), d = config_.model.d_model, F = config_.model.d_ff;
    const float eps = config_.model.norm_eps;
    const double norm_bytes = (12.0 + sizeof(Act)) * N * d;
    const double attention_core = attention_core_flops();
    {
      GPUPROF_SCOPE("rmsnorm", stream(), gpuprof::Work{4.0 * N * d, norm_bytes});
      // Also copies the input into `mid`, which the output projection adds onto.
      rmsnorm_forward<Act>(a.input, master_at(base + block_.norm1), a.normed1, a.inv_rms1, a.mid, N, d, eps,
                           stream());
    }
    {
      GPUPROF_SCOPE("attention", stream(), gpuprof::Work{matmul_flops(N, 4.0 * d, d) + attention_core, 0});
      {
        GPUPROF_SCOPE("qkv projection", stream(), gpuprof::Work{matmul_flops(N, 3.0 * d, d), 0});
        linear(a.normed1, weights_at(base + block_.wq), a.qkv ? a.qkv : buffers_.qkv, data_type<Act>(), N,
               3 * d, d, 0.0f);
      }
      if constexpr (kMixed) {
        if (cudnn_)
          cudnn_attention_forward(attention_shape(), buffers_.rope_cos, buffers_.rope_sin, a.qkv, a.context,
                                  a.attention.lse, *cudnn_, stream());
        else if (fused())
          fused_attention_forward(attention_shape(), buffers_.rope_cos, buffers_.rope_sin, buffers_.qkv,
                                  a.attention, a.context, stream());
      }
      if (!fused())
        attention_forward<Act>(*gemm_, attention_shape(), buffers_.rope_cos, buffers_.rope_sin, buffers_.qkv,
                               a.attention, a.context, stream());
      {
        GPUPROF_SCOPE("attention output projection", stream(), gpuprof::Work{matmul_flops(N, d, d), 0});
        linear(a.context, weights_at(base + block_.wo), a.mid, CUDA_R_32F, N, d, d, 1.0f);
      }
    }
    {
      GPUPROF_SCOPE("rmsnorm", stream(), gpuprof::Work{4.0 * N * d, norm_bytes});
      rmsnorm_forward<Act>(a.mid, master_at(base + block_.norm2), a.normed2, a.inv_rms2, a.output, N, d, eps,
                           stream());
    }
    {
      GPUPROF_SCOPE("ffn", stream(), gpuprof::Work{matmul_flops(N, 3.0 * F, d), 0});
      linear(a.normed2, weights_at(base + block_.w1), a.h13, data_type<Act>(), N, 2 * F, d, 0.0f);
      swiglu_forward<Act>(a.h13, a.gated, N, F, stream());
      linear(a.gated, weights_at(base + block_.w2), a.output, CUDA_R_32F, N, d, F, 1.0f);
    }
  }

  // dstream = residual + the norm's input gradient; gain gradient overwritten.
  void norm_backward(const Act* dy, const float* x, const std::string& gain, const float* inv_rms,
                     const float* residual) {
    const int N = tokens_count(), d = config_.model.d_model;
    // dy, x and the residual read once (the gain sums ride along), dx and its
    // Act copy written.
    GPUPROF_SCOPE("rmsnorm", stream(), gpuprof::Work{8.0 * N * d, (12.0 + 2.0 * sizeof(Act)) * N * d});
    const std::size_t offset = layout_.find(gain).offset;
    rmsnorm_backward<Act>(dy, x, master_at(offset), inv_rms, residual, buffers_.dstream, dstream_act_copy(),
                          buffers_.grads + offset, buffers_.gain_partials, N, d, stream());
  }

  void block_backward(int layer) {
    const LayerActivations<Act>& a = buffers_.layers[layer];
    const std::size_t base = layout_.block_offset(layer);
    const int N = tokens_count(), d = config_.model.d_model, F = config_.model.d_ff;
    const std::string prefix = "blocks." + std::to_string(layer) + ".";
    const double attention_core = attention_core_flops();
    {
      GPUPROF_SCOPE("ffn", stream(), gpuprof::Work{2 * matmul_flops(N, 3.0 * F, d), 0});
      // The gate's output is kept from the forward pass (recomputing it here
      // cost the SwiGLU backward a sixth more bytes than reading it costs).
      linear_input_gradient(dstream_act(), weights_at(base + block_.w2), buffers_.dgated, N, d, F);
      swiglu_backward<Act>(a.h13, buffers_.dgated, buffers_.dh13, N, F, stream());
      linear_weight_gradient(dstream_act(), a.gated, buffers_.grads + base + block_.w2, N, d, F);
      linear_backward(buffers_.dh13, a.normed2, weights_at(base + block_.w1),
                      buffers_.grads + base + block_.w1, buffers_.dnorm, N, 2 * F, d);
    }
    norm_backward(buffers_.dnorm, a.mid, prefix + "norm2", a.inv_rms2, buffers_.dstream);
    {
      GPUPROF_SCOPE("attention", stream(),
                    gpuprof::Work{2 * (matmul_flops(N, 4.0 * d, d) + attention_core), 0});
      {
        GPUPROF_SCOPE("attention output projection", stream(), gpuprof::Work{2 * matmul_flops(N, d, d), 0});
        linear_backward(dstream_act(), a.context, weights_at(base + block_.wo),
                        buffers_.grads + base + block_.wo, buffers_.dcontext, N, d, d);
      }
      if constexpr (kMixed) {
        if (cudnn_)
          cudnn_attention_backward(attention_shape(), buffers_.rope_cos, buffers_.rope_sin, a.qkv, a.context,
                                   a.attention.lse, buffers_.dcontext, buffers_.dqkv,
                                   buffers_.flash_workspace, *cudnn_, stream());
        else if (fused())
          fused_attention_backward(attention_shape(), buffers_.rope_cos, buffers_.rope_sin, buffers_.dcontext,
                                   a.context, a.attention, buffers_.dq, buffers_.dk, buffers_.dv,
                                   buffers_.dqkv, buffers_.flash_workspace, stream());
      }
      if (!fused())
        attention_backward<Act>(*gemm_, attention_shape(), buffers_.rope_cos, buffers_.rope_sin,
                                buffers_.dcontext, a.attention, buffers_.dq, buffers_.dk, buffers_.dv,
                                buffers_.dqkv, stream());
      {
        GPUPROF_SCOPE("qkv projection", stream(), gpuprof::Work{2 * matmul_flops(N, 3.0 * d, d), 0});
        linear_backward(buffers_.dqkv, a.normed1, weights_at(base + block_.wq),
                        buffers_.grads + base + block_.wq, buffers_.dnorm, N, 3 * d, d);
      }
    }
    norm_backward(buffers_.dnorm, a.input, prefix + "norm1", a.inv_rms1, buffers_.dstream);
  }

  RunConfig config_;
  ParameterLayout layout_;
  BlockOffsets block_;
  std::size_t flat_count_;  // elements of each flat parameter buffer, padding included
  // Declaration order = reverse destruction order: cuBLAS goes before the
  // memory and the stream it uses.
  examples::Stream stream_{examples::StreamPriority::highest};
  examples::Stream optimizer_stream_{examples::StreamPriority::lowest};
  std::vector<UpdatePiece> update_pieces_;                // in the order backward finishes them
  std::vector<examples::OrderingEvent> gradients_ready_;  // one per piece
  std::vector<cudaEvent_t> pieces_reduced_;               // per piece, the hook's caller's event (not ours)
  examples::OrderingEvent optimizer_done_;
  std::vector<DeviceMemory> arena_;  // one per region of buffers_.regions
  std::unique_ptr<Gemm> gemm_;
  std::unique_ptr<CudnnAttention> cudnn_;  // --attention cudnn only
  Buffers<Act> buffers_;
  bool have_batch_ = false;
  PhaseState phase_state_;
  std::vector<Phase>* capture_phases_ = nullptr;  // set while capture() runs
  ExecutableGraph graph_;
  GradientReadyHook gradient_ready_;  // data-parallel training only
};

}  // namespace
}  // namespace cuda

bool cuda_backend_available(std::string* why_not) {
  auto fail = [&](std::string reason) {
    if (why_not) *why_not = std::move(reason);
    return false;
  };
  int devices = 0;
  const cudaError_t status = cudaGetDeviceCount(&devices);
  if (status != cudaSuccess)
    return fail(std::string("cudaGetDeviceCount failed: ") + cudaGetErrorName(status) + ": " +
                cudaGetErrorString(status));
  if (devices == 0) return fail("no CUDA device");
  try {
    if (const std::optional<std::string> why = examples::device_code_unavailable())
      return fail(*why + "; --device cpu runs the CPU backend");
  } catch (const gpuprof::Error& e) {
    return fail(std::string("cannot query the current CUDA device: ") + e.what());
  }
  return true;
}

std::size_t cuda_backend_bytes(const RunConfig& config) {
  cuda::check_supported(config);
  const ParameterLayout layout(config.model);
  if (config.precision == Precision::bf16)
    return cuda::carve<__nv_bfloat16>(nullptr, config, layout).total_bytes;
  return cuda::carve<float>(nullptr, config, layout).total_bytes;
}

std::unique_ptr<Backend> make_cuda_backend(const RunConfig& config) {
  std::string why_not;
  if (!cuda_backend_available(&why_not)) throw std::runtime_error("CUDA backend: " + why_not);
  if (config.precision == Precision::bf16) return std::make_unique<cuda::CudaBackend<__nv_bfloat16>>(config);
  return std::make_unique<cuda::CudaBackend<float>>(config);
}

}  // namespace transformer
