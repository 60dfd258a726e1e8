// backend.hpp: what the benchmark driver and the tests see of a model
// implementation. The CUDA backend (cuda/) and the Eigen CPU backend (cpu/)
// both implement it, over the same ParameterLayout.
#pragma once
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "model/config.hpp"

// The runtime's stream type (cudaStream_t is CUstream_st*), declared here so
// this header needs no CUDA include.
struct CUstream_st;
struct CUevent_st;  // cudaEvent_t, likewise

namespace transformer {

enum class Precision { fp32, tf32, bf16 };
enum class Mode { fwd, fwdbwd, step };
// naive: the score matrix S = QKᵀ, softmax and P·V as separate kernels (the
// course's question (e) profiles them apart); fused: our flash-attention
// kernel each way, no T×T tensor in memory (bf16 only); cudnn: the same
// contract through cuDNN's fused attention engine (bf16 only, where the
// build found cuDNN 9).
enum class Attention { naive, fused, cudnn };
// fused and cudnn: one kernel each way with no T×T tensor.
inline bool is_fused(Attention a) { return a != Attention::naive; }

const char* to_string(Precision p);
const char* to_string(Mode m);
const char* to_string(Attention a);
std::optional<Precision> parse_precision(const std::string& s);
std::optional<Mode> parse_mode(const std::string& s);
std::optional<Attention> parse_attention(const std::string& s);
// Whether the fused kernels are built for this model's head size (d_head 64,
// 80, 96 or 128: what cuda/flash_attention.cu instantiates).
bool fused_attention_supports(const ModelConfig& model);
// Whether this build has the CUDA backend with cuDNN 9 (what --attention
// cudnn needs); without it CudnnAttention's constructor throws.
bool cudnn_attention_available();
// A cuDNN version number as cudnnGetVersion() returns it, as text: "9.14.0"
// from 91400 (cuDNN 9 counts major·10000 + minor·100 + patch), "8.9.2" from
// 8902 (cuDNN 8 counted major·1000 + minor·100 + patch).
std::string cudnn_version_text(std::size_t version);
// Whether cuDNN's fused attention engine takes this model's head size (d_head
// a multiple of 8 up to 128).
bool cudnn_attention_supports(const ModelConfig& model);
// What a run gets when it does not choose, for bf16 (the only precision the
// fused paths support): cuDNN's attention where the build has it
// (cudnn_built: cudnn_attention_available()) and the head size allows it,
// the fastest from ctx 512 up (docs/experiments/2026-11-26-split-master-weights.md);
// else, and at contexts up to kFusedDefaultMaxCtx with 64-wide heads, our kernels where they run
// (no cuDNN memset and plan nodes around each call: a small-model train step
// 3.18 → 2.98 ms at ctx 128, medium and large 5–7 % faster at 128 and
// 4–5 % at 256, H100; other head sizes were not measured there, so they keep
// cuDNN); naive otherwise.
constexpr int kFusedDefaultMaxCtx = 256;
Attention default_attention(Precision p, const ModelConfig& model, int ctx, bool cudnn_built);

// AdamW with the decay applied after the Adam update (the course's / the
// handout's order, docs/model.md): θ -= α_t·m/(√v+ε); θ -= lr·λ·θ.
struct AdamWConfig {
  float lr = 1e-3f;
  float beta1 = 0.9f;
  float beta2 = 0.999f;
  float eps = 1e-8f;
  float weight_decay = 0.01f;
  float clip_norm = 0.0f;  // global-norm gradient clipping; 0 = off
};

struct RunConfig {
  ModelConfig model;
  Precision precision = Precision::fp32;
  Mode mode = Mode::step;                  // decides which buffers exist: fwd has no gradients
  Attention attention = Attention::naive;  // fused needs bf16 (the backends throw otherwise)
  int batch = 4;
  int ctx = 128;
  AdamWConfig adamw;
  std::uint64_t seed = 0;  // parameter initialisation (model/init.hpp)
  // Tests: fill every activation, gradient and output buffer with NaN before
  // each forward, so an element the kernels fail to write shows up.
  bool poison_buffers = false;
};

// Elements [begin, end) of the backend's flat gradient buffer.
struct GradientRange {
  std::size_t begin = 0;
  std::size_t end = 0;
  std::size_t size() const { return end - begin; }
};

// Data-parallel training's hook into backward() (ddp/): called on the host
// while backward() enqueues, right after the work that writes a range's last
// gradient is on stream(), so the caller can record an event there and start
// reducing that range on another stream while the rest of backward runs.
// Ranges arrive in descending order (lm_head and final norm, blocks L-1 ... 0,
// embedding), adjacent, and cover [0, gradient_buffer().count) once per
// backward(). Nothing in backward() writes a range again after announcing it.
// With a hook the backend does not take the gradients as final when backward
// has written them: the caller names, for each range it reduced, an event
// that completes when the range is final (gradients_final_after()), and
// optimizer_step() updates each piece of the parameters once its event has
// completed. Without such events for every range it runs AdamW in one pass on
// stream(), which the caller must then have made wait for its reductions.
using GradientReadyHook = std::function<void(GradientRange)>;

// The device's flat gradients in ParameterLayout order, with the CUDA
// backend's zero padding (vector widths) after the layout's total: fp32, or
// bf16 under mixed precision (docs/model.md).
enum class GradientType { fp32, bf16 };
struct DeviceGradients {
  void* data = nullptr;
  std::size_t count = 0;
  GradientType type = GradientType::fp32;
  std::size_t element_bytes() const { return type == GradientType::bf16 ? 2 : 4; }
};

// Thrown by a backend's constructor when its buffers do not fit.
struct OutOfMemory : std::runtime_error {
  std::size_t bytes_requested;  // what this configuration needs in total
  std::size_t bytes_free;       // what the device had free
  OutOfMemory(std::size_t requested, std::size_t free_bytes);
};

class Backend {
 public:
  virtual ~Backend() = default;
  virtual std::string name() const = 0;  // "cuda" or "cpu"
  virtual const RunConfig& config() const = 0;

  // Parameters (fp32 master copy) in ParameterLayout order, host side.
  virtual std::vector<float> parameters() = 0;
  virtual void set_parameters(const std::vector<float>& values) = 0;

  // Token ids and targets, batch·ctx each, row-major [batch, ctx], in [0, vocab).
  virtual void set_batch(const std::vector<std::int32_t>& tokens,
                         const std::vector<std::int32_t>& targets) = 0;

  // Enqueue work (the CUDA backend returns without waiting).
  virtual void forward() = 0;         // logits and mean cross-entropy loss
  virtual void backward() = 0;        // gradients of the loss (overwritten, not accumulated)
  virtual void optimizer_step() = 0;  // one AdamW step (t = 1, 2, ...), clipping if configured
  void train_step() {
    forward();
    backward();
    optimizer_step();
  }
  // Runs what `mode` asks for: fwd, fwd+bwd, or a full train step.
  void run(Mode mode);

  // CUDA graphs: a whole step as one launch. capture_graph() runs `enqueue`
  // (or run(mode)) with stream() capturing, so what it enqueues through
  // forward(), backward(), optimizer_step() and run(), with the caller's
  // scopes around them, becomes one graph; nothing of it executes then, and
  // it replaces any earlier graph. replay_graph() launches it without
  // waiting, and leaves the backend as the captured calls would have. Inside
  // a capture nothing may read back or wait (loss(), set_batch() and the
  // like throw). Replays read the batch and parameters from the buffers the
  // capture saw, so set_batch() and set_parameters() between replays take
  // effect; the rest a graph bakes in (buffer addresses, shapes, the cuBLAS
  // handle and workspace, the AdamW constants) is fixed at construction, and
  // AdamW counts its steps on the device. The CPU backend throws
  // std::logic_error: it has no graphs.
  void capture_graph(const std::function<void()>& enqueue) { capture(enqueue); }
  void capture_graph(Mode mode) {
    capture([this, mode] { run(mode); });
  }
  virtual void replay_graph();
  virtual bool has_graph() const { return false; }

  // The stream the backend enqueues on: events and scopes that time its work
  // must be recorded there. nullptr for the CPU backend.
  virtual CUstream_st* stream() const { return nullptr; }

  virtual void synchronize() = 0;
  // These wait for the enqueued work and copy to the host.
  virtual float loss() = 0;
  // [batch·ctx, vocab], fp32. Read between forward() and backward(): the CUDA
  // backend turns the logits into their gradient in place (throws after backward()).
  virtual std::vector<float> logits() = 0;
  virtual std::vector<float> gradients() = 0;  // ParameterLayout order

  // Data parallelism (GradientReadyHook above). An empty hook removes it: a
  // backend without one pays one test per layer. The CPU backend throws
  // std::logic_error: it has no device buffers to reduce.
  virtual void set_gradient_ready_hook(GradientReadyHook hook);
  virtual DeviceGradients gradient_buffer();
  // The gradients in `range` (announced ranges, whole) are final once `done`
  // completes; valid until the next backward(). Keep `done` unrecorded until
  // optimizer_step() has been enqueued.
  virtual void gradients_final_after(GradientRange range, CUevent_st* done);

  // Device (or host) bytes this backend allocated for its configuration.
  virtual std::size_t allocated_bytes() const = 0;

 protected:
  virtual void capture(const std::function<void()>& enqueue);
};

// Throw OutOfMemory when the configuration does not fit; std::runtime_error
// when there is no usable GPU.
std::unique_ptr<Backend> make_cuda_backend(const RunConfig& config);
// The bytes make_cuda_backend would allocate for `config` (its arena, all regions);
// needs no device. Throws std::invalid_argument for an unsupported config.
std::size_t cuda_backend_bytes(const RunConfig& config);
std::unique_ptr<Backend> make_cpu_backend(const RunConfig& config);
bool cuda_backend_available(std::string* why_not = nullptr);
// The cuDNN library loaded at run time, "major.minor.patch" (e.g. "9.14.0"),
// or nothing where the build has no cuDNN. cuDNN 9 keeps one soname across minor
// versions, so LD_LIBRARY_PATH picks which one runs, and its fused attention
// engines differ between them by a few per cent: reports name it.
std::optional<std::string> cudnn_runtime_version();

}  // namespace transformer
