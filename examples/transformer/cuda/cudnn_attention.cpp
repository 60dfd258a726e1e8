// cuda/cudnn_attention.cpp: the cuDNN graphs behind cudnn_attention.hpp,
// written against the backend descriptor API (cudnn_graph.h) directly. Each
// graph is the operation pattern cuDNN's fused attention engine matches; the
// order and the data types of the intermediate tensors follow what that
// engine expects (the cuDNN developer guide's "Fused Flash Attention"
// patterns): fp32 scores and statistics, bf16 P and dSᵀ into the products.
#include "cuda/cudnn_attention.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "common/compute_capability.hpp"
#include "common/cuda_check.hpp"
#include "model/backend.hpp"

#if TRANSFORMER_HAVE_CUDNN
#include <cudnn.h>
#endif

namespace transformer::cuda {

std::size_t CudnnAttention::workspace_floats(const AttentionShape& shape) {
  return static_cast<std::size_t>(shape.score_rows()) * shape.d_head;
}

#if !TRANSFORMER_HAVE_CUDNN

struct CudnnAttention::Handle {};
struct CudnnAttention::Plan {};
// No instance can exist (the constructor throws), so the members below are
// unreachable; they throw rather than do nothing all the same.
namespace {
[[noreturn]] void no_cudnn() {
  throw std::runtime_error(
      "this build has no cuDNN (CMake found no cudnn_graph.h and libcudnn): "
      "--attention cudnn is unavailable; use --attention fused");
}
}  // namespace
CudnnAttention::CudnnAttention() { no_cudnn(); }
CudnnAttention::~CudnnAttention() = default;
std::string CudnnAttention::engine_name() const { return engine_name_; }
void CudnnAttention::check_shape(const AttentionShape&, QkvLayout, bool) { no_cudnn(); }
void CudnnAttention::forward(const AttentionShape&, QkvLayout, const __nv_bfloat16*, const __nv_bfloat16*,
                             const __nv_bfloat16*, __nv_bfloat16*, float*, cudaStream_t) {
  no_cudnn();
}
void CudnnAttention::backward(const AttentionShape&, QkvLayout, const __nv_bfloat16*, const __nv_bfloat16*,
                              const __nv_bfloat16*, const __nv_bfloat16*, const float*, const __nv_bfloat16*,
                              __nv_bfloat16*, __nv_bfloat16*, __nv_bfloat16*, float*, cudaStream_t) {
  no_cudnn();
}

#else

namespace {

// The status's name and cuDNN's own account of the last failure.
std::string status_text(cudnnStatus_t status) {
  char detail[1024] = "";
  cudnnGetLastErrorString(detail, sizeof detail);
  return std::string(cudnnGetErrorString(status)) + (detail[0] ? std::string(": ") + detail : "");
}

[[noreturn]] void fail(cudnnStatus_t status, const char* call, int line) {
  throw std::runtime_error(std::string(call) + " failed: " + status_text(status) +
                           " (cudnn_attention.cpp:" + std::to_string(line) + ")");
}
#define CUDNN_CHECK(call)                                                \
  do {                                                                   \
    const cudnnStatus_t status_ = (call);                                \
    if (status_ != CUDNN_STATUS_SUCCESS) fail(status_, #call, __LINE__); \
  } while (0)

// One backend descriptor, destroyed with its owner.
class Descriptor {
 public:
  explicit Descriptor(cudnnBackendDescriptorType_t type) {
    CUDNN_CHECK(cudnnBackendCreateDescriptor(type, &raw_));
  }
  ~Descriptor() {
    if (raw_) cudnnBackendDestroyDescriptor(raw_);
  }
  Descriptor(Descriptor&& other) noexcept : raw_(other.raw_) { other.raw_ = nullptr; }
  Descriptor(const Descriptor&) = delete;
  Descriptor& operator=(const Descriptor&) = delete;
  Descriptor& operator=(Descriptor&&) = delete;

  cudnnBackendDescriptor_t get() const { return raw_; }
  template <class T>
  Descriptor& set(cudnnBackendAttributeName_t name, cudnnBackendAttributeType_t type, const T* values,
                  std::int64_t count = 1) {
    CUDNN_CHECK(cudnnBackendSetAttribute(raw_, name, type, count, values));
    return *this;
  }
  Descriptor& set(cudnnBackendAttributeName_t name, const Descriptor& value) {
    cudnnBackendDescriptor_t raw = value.get();
    return set(name, CUDNN_TYPE_BACKEND_DESCRIPTOR, &raw);
  }
  Descriptor& finalize() {
    CUDNN_CHECK(cudnnBackendFinalize(raw_));
    return *this;
  }

 private:
  cudnnBackendDescriptor_t raw_ = nullptr;
};

using Dims = std::vector<std::int64_t>;

// Tensor ids of the variant pack; virtual tensors number from kFirstVirtual.
enum Uid : std::int64_t {
  kQ = 1,
  kK,
  kV,
  kO,
  kStats,
  kScale,
  kMaskValue,
  kOne,
  kdO,
  kdQ,
  kdK,
  kdV,
  kdQAccumulator,
  kFirstVirtual = 100,
};

// Builds one operation graph: tensors and operations in the order added.
class GraphBuilder {
 public:
  explicit GraphBuilder(cudnnHandle_t handle) : handle_(handle) {}

  // A tensor the caller binds (a device pointer, or a host scalar when
  // by_value). dims/strides are 4-D [batch, heads, rows, cols].
  const Descriptor& tensor(std::int64_t uid, cudnnDataType_t type, const Dims& dims, const Dims& strides,
                           bool by_value = false, bool reordered_f16x16 = false) {
    return add_tensor(uid, type, dims, strides, false, by_value, reordered_f16x16);
  }
  // A float passed by value; one descriptor per uid however often it is used.
  const Descriptor& scalar(std::int64_t uid) {
    auto found = scalars_.find(uid);
    if (found != scalars_.end()) return *found->second;
    const Descriptor& t = tensor(uid, CUDNN_DATA_FLOAT, {1, 1, 1, 1}, {1, 1, 1, 1}, true);
    scalars_.emplace(uid, &t);
    return t;
  }
  // An intermediate tensor the engine keeps on chip.
  const Descriptor& virtual_tensor(cudnnDataType_t type, const Dims& dims, const Dims& strides) {
    return add_tensor(next_virtual_++, type, dims, strides, true, false, false);
  }

  void matmul(const Descriptor& a, const Descriptor& b, const Descriptor& c) {
    Descriptor desc(CUDNN_BACKEND_MATMUL_DESCRIPTOR);
    const cudnnDataType_t compute = CUDNN_DATA_FLOAT;
    desc.set(CUDNN_ATTR_MATMUL_COMP_TYPE, CUDNN_TYPE_DATA_TYPE, &compute).finalize();
    Descriptor op(CUDNN_BACKEND_OPERATION_MATMUL_DESCRIPTOR);
    op.set(CUDNN_ATTR_OPERATION_MATMUL_ADESC, a)
        .set(CUDNN_ATTR_OPERATION_MATMUL_BDESC, b)
        .set(CUDNN_ATTR_OPERATION_MATMUL_CDESC, c)
        .set(CUDNN_ATTR_OPERATION_MATMUL_DESC, desc)
        .finalize();
    ops_.push_back(std::move(op));
  }

  // y = mode(x[, b[, t]]): t is BINARY_SELECT's predicate.
  void pointwise(cudnnPointwiseMode_t mode, const Descriptor& x, const Descriptor* b, const Descriptor& y,
                 const Descriptor* t = nullptr, cudnnDataType_t math = CUDNN_DATA_FLOAT,
                 std::int64_t axis = -1) {
    Descriptor desc(CUDNN_BACKEND_POINTWISE_DESCRIPTOR);
    desc.set(CUDNN_ATTR_POINTWISE_MODE, CUDNN_TYPE_POINTWISE_MODE, &mode)
        .set(CUDNN_ATTR_POINTWISE_MATH_PREC, CUDNN_TYPE_DATA_TYPE, &math);
    if (axis >= 0) desc.set(CUDNN_ATTR_POINTWISE_AXIS, CUDNN_TYPE_INT64, &axis);
    desc.finalize();
    Descriptor op(CUDNN_BACKEND_OPERATION_POINTWISE_DESCRIPTOR);
    op.set(CUDNN_ATTR_OPERATION_POINTWISE_PW_DESCRIPTOR, desc).set(CUDNN_ATTR_OPERATION_POINTWISE_XDESC, x);
    if (b) op.set(CUDNN_ATTR_OPERATION_POINTWISE_BDESC, *b);
    if (t) op.set(CUDNN_ATTR_OPERATION_POINTWISE_TDESC, *t);
    op.set(CUDNN_ATTR_OPERATION_POINTWISE_YDESC, y).finalize();
    ops_.push_back(std::move(op));
  }

  void reduction(cudnnReduceTensorOp_t mode, const Descriptor& x, const Descriptor& y) {
    Descriptor desc(CUDNN_BACKEND_REDUCTION_DESCRIPTOR);
    const cudnnDataType_t compute = CUDNN_DATA_FLOAT;
    desc.set(CUDNN_ATTR_REDUCTION_OPERATOR, CUDNN_TYPE_REDUCTION_OPERATOR_TYPE, &mode)
        .set(CUDNN_ATTR_REDUCTION_COMP_TYPE, CUDNN_TYPE_DATA_TYPE, &compute)
        .finalize();
    Descriptor op(CUDNN_BACKEND_OPERATION_REDUCTION_DESCRIPTOR);
    op.set(CUDNN_ATTR_OPERATION_REDUCTION_XDESC, x)
        .set(CUDNN_ATTR_OPERATION_REDUCTION_YDESC, y)
        .set(CUDNN_ATTR_OPERATION_REDUCTION_DESC, desc)
        .finalize();
    ops_.push_back(std::move(op));
  }

  // Same elements, other dims/strides (a transposed view for a product).
  void reshape(const Descriptor& x, const Descriptor& y) {
    Descriptor op(CUDNN_BACKEND_OPERATION_RESHAPE_DESCRIPTOR);
    op.set(CUDNN_ATTR_OPERATION_RESHAPE_XDESC, x).set(CUDNN_ATTR_OPERATION_RESHAPE_YDESC, y).finalize();
    ops_.push_back(std::move(op));
  }

  // The operation graph, its engine configurations from heuristics mode A,
  // and the first plan that finalises. Returns the plan and names its engine.
  Descriptor build_plan(std::string& engine_name) {
    std::vector<cudnnBackendDescriptor_t> raw_ops;
    for (const Descriptor& op : ops_) raw_ops.push_back(op.get());
    Descriptor graph(CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR);
    graph.set(CUDNN_ATTR_OPERATIONGRAPH_HANDLE, CUDNN_TYPE_HANDLE, &handle_)
        .set(CUDNN_ATTR_OPERATIONGRAPH_OPS, CUDNN_TYPE_BACKEND_DESCRIPTOR, raw_ops.data(),
             static_cast<std::int64_t>(raw_ops.size()))
        .finalize();

    Descriptor heuristics(CUDNN_BACKEND_ENGINEHEUR_DESCRIPTOR);
    const cudnnBackendHeurMode_t mode = CUDNN_HEUR_MODE_A;
    heuristics.set(CUDNN_ATTR_ENGINEHEUR_OPERATION_GRAPH, graph)
        .set(CUDNN_ATTR_ENGINEHEUR_MODE, CUDNN_TYPE_HEUR_MODE, &mode)
        .finalize();
    constexpr std::int64_t kMaxConfigs = 8;
    std::vector<Descriptor> configs;
    std::vector<cudnnBackendDescriptor_t> raw_configs;
    for (std::int64_t i = 0; i < kMaxConfigs; ++i) {
      configs.emplace_back(CUDNN_BACKEND_ENGINECFG_DESCRIPTOR);
      raw_configs.push_back(configs.back().get());
    }
    std::int64_t found = 0;
    CUDNN_CHECK(cudnnBackendGetAttribute(heuristics.get(), CUDNN_ATTR_ENGINEHEUR_RESULTS,
                                         CUDNN_TYPE_BACKEND_DESCRIPTOR, kMaxConfigs, &found,
                                         raw_configs.data()));
    std::string last_error = "heuristics returned no engine configuration";
    for (std::int64_t i = 0; i < found; ++i) {
      // A configuration that does not finalise is skipped, not an error.
      Descriptor plan(CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR);
      cudnnStatus_t status = cudnnBackendSetAttribute(plan.get(), CUDNN_ATTR_EXECUTION_PLAN_HANDLE,
                                                      CUDNN_TYPE_HANDLE, 1, &handle_);
      if (status == CUDNN_STATUS_SUCCESS)
        status = cudnnBackendSetAttribute(plan.get(), CUDNN_ATTR_EXECUTION_PLAN_ENGINE_CONFIG,
                                          CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &raw_configs[i]);
      if (status == CUDNN_STATUS_SUCCESS) status = cudnnBackendFinalize(plan.get());
      if (status == CUDNN_STATUS_SUCCESS) {
        engine_name = describe_engine(raw_configs[i]);
        return plan;
      }
      last_error = status_text(status);
    }
    throw std::runtime_error("cuDNN built no plan for the fused attention graph (" + last_error +
                             "; CUDNN_LOGLEVEL_DBG=2 prints cuDNN's reasons)");
  }

 private:
  const Descriptor& add_tensor(std::int64_t uid, cudnnDataType_t type, const Dims& dims, const Dims& strides,
                               bool is_virtual, bool by_value, bool reordered_f16x16) {
    Descriptor t(CUDNN_BACKEND_TENSOR_DESCRIPTOR);
    const std::int64_t alignment = 16;
    t.set(CUDNN_ATTR_TENSOR_DATA_TYPE, CUDNN_TYPE_DATA_TYPE, &type)
        .set(CUDNN_ATTR_TENSOR_DIMENSIONS, CUDNN_TYPE_INT64, dims.data(),
             static_cast<std::int64_t>(dims.size()))
        .set(CUDNN_ATTR_TENSOR_STRIDES, CUDNN_TYPE_INT64, strides.data(),
             static_cast<std::int64_t>(strides.size()))
        .set(CUDNN_ATTR_TENSOR_UNIQUE_ID, CUDNN_TYPE_INT64, &uid)
        .set(CUDNN_ATTR_TENSOR_BYTE_ALIGNMENT, CUDNN_TYPE_INT64, &alignment)
        .set(CUDNN_ATTR_TENSOR_IS_VIRTUAL, CUDNN_TYPE_BOOLEAN, &is_virtual);
    if (by_value) {
      const bool flag = true;
      t.set(CUDNN_ATTR_TENSOR_IS_BY_VALUE, CUDNN_TYPE_BOOLEAN, &flag);
    }
    if (reordered_f16x16) {
      const cudnnBackendTensorReordering_t reordering = CUDNN_TENSOR_REORDERING_F16x16;
      t.set(CUDNN_ATTR_TENSOR_REORDERING_MODE, CUDNN_TYPE_TENSOR_REORDERING_MODE, &reordering);
    }
    t.finalize();
    tensors_.push_back(std::make_unique<Descriptor>(std::move(t)));
    return *tensors_.back();
  }

  static std::string describe_engine(cudnnBackendDescriptor_t config) {
    Descriptor engine(CUDNN_BACKEND_ENGINE_DESCRIPTOR);
    cudnnBackendDescriptor_t raw = engine.get();
    std::int64_t count = 0;
    if (cudnnBackendGetAttribute(config, CUDNN_ATTR_ENGINECFG_ENGINE, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1,
                                 &count, &raw) != CUDNN_STATUS_SUCCESS)
      return "cuDNN engine";
    std::int64_t index = -1;
    if (cudnnBackendGetAttribute(raw, CUDNN_ATTR_ENGINE_GLOBAL_INDEX, CUDNN_TYPE_INT64, 1, &count, &index) !=
        CUDNN_STATUS_SUCCESS)
      return "cuDNN engine";
    return "cuDNN engine " + std::to_string(index);
  }

  cudnnHandle_t handle_;
  std::vector<std::unique_ptr<Descriptor> > tensors_;
  std::vector<Descriptor> ops_;
  std::map<std::int64_t, const Descriptor*> scalars_;
  std::int64_t next_virtual_ = kFirstVirtual;
};

}  // namespace

struct CudnnAttention::Handle {
  cudnnHandle_t raw = nullptr;
};

struct CudnnAttention::Plan {
  Descriptor plan;
  std::size_t workspace_bytes;
};

CudnnAttention::CudnnAttention() : handle_(std::make_unique<Handle>()) {
  const std::size_t version = cudnnGetVersion();
  if (version < 90000)
    throw std::runtime_error("cuDNN " + cudnn_version_text(version) +
                             " is too old for fused attention through the graph API (needs 9.0)");
  // cuDNN's fused attention starts at sm_80, and a release knows the
  // architectures up to its newest (cudnnGetMaxDeviceVersion: 1210 = sm_121).
  const examples::ComputeCapability card = examples::current_compute_capability();
  if (card.major < 8)
    throw std::runtime_error("cuDNN's fused attention needs sm_80 or newer; device " +
                             std::to_string(card.device) + " is " + card.sm());
  const std::size_t newest = cudnnGetMaxDeviceVersion();
  if (static_cast<std::size_t>(card.major * 100 + card.minor * 10) > newest)
    throw std::runtime_error("cuDNN " + cudnn_version_text(version) + " knows GPUs up to sm_" +
                             std::to_string(newest / 10) + ", not device " + std::to_string(card.device) +
                             "'s " + card.sm() + ": use a newer cuDNN, or --attention fused");
  CUDNN_CHECK(cudnnCreate(&handle_->raw));
}

CudnnAttention::~CudnnAttention() {
  if (workspace_) cudaFree(workspace_);
  for (void* outgrown : outgrown_) cudaFree(outgrown);
  plans_.clear();
  if (handle_->raw) cudnnDestroy(handle_->raw);
}

std::string CudnnAttention::engine_name() const { return engine_name_; }

void CudnnAttention::check_shape(const AttentionShape& shape, QkvLayout layout, bool with_backward) {
  if (shape.batch <= 0 || shape.ctx <= 0 || shape.heads <= 0 || shape.d_head <= 0)
    throw std::invalid_argument("cuDNN attention: every dimension must be positive");
  if (shape.d_head % 8 != 0 || shape.d_head > 128)
    throw std::invalid_argument("cuDNN attention: d_head " + std::to_string(shape.d_head) +
                                " is not a multiple of 8 up to 128");
  // The plans and the workspace now, so that no later call allocates.
  std::size_t bytes = plan_for(shape, layout, false, nullptr).workspace_bytes;
  if (with_backward) bytes = std::max(bytes, plan_for(shape, layout, true, nullptr).workspace_bytes);
  workspace_for(bytes);
}

namespace {

// [batch, heads, rows, cols] of a head-major tensor, and of the context's
// merged-heads layout [batch, ctx, heads, d_head] seen in that order.
Dims head_major(const AttentionShape& s, std::int64_t rows, std::int64_t cols) {
  return {s.heads * rows * cols, rows * cols, cols, 1};
}
// q, k, v and their gradients as [batch, heads, ctx, d_head]: head-major, or
// inside the projection's rows [tokens, 3d].
Dims qkv_strides(const AttentionShape& s, QkvLayout layout) {
  if (layout == QkvLayout::head_major) return head_major(s, s.ctx, s.d_head);
  const std::int64_t row = 3LL * s.heads * s.d_head;
  return {s.ctx * row, s.d_head, row, 1};
}
Dims merged_heads(const AttentionShape& s) {
  return {static_cast<std::int64_t>(s.ctx) * s.heads * s.d_head, s.d_head,
          static_cast<std::int64_t>(s.heads) * s.d_head, 1};
}

// The scores' chain both graphs share: S·scale with the causal mask applied
// (masked entries become the lowest float, as cuDNN's own pattern does).
const Descriptor& masked_scores(GraphBuilder& g, const AttentionShape& s, const Descriptor& q,
                                const Descriptor& k_transposed) {
  const Dims dims{s.batch, s.heads, s.ctx, s.ctx}, strides = head_major(s, s.ctx, s.ctx);
  const Descriptor& scores = g.virtual_tensor(CUDNN_DATA_FLOAT, dims, strides);
  g.matmul(q, k_transposed, scores);
  const Descriptor& scaled = g.virtual_tensor(CUDNN_DATA_FLOAT, dims, strides);
  g.pointwise(CUDNN_POINTWISE_MUL, scores, &g.scalar(kScale), scaled);
  const Descriptor& row = g.virtual_tensor(CUDNN_DATA_INT32, dims, strides);
  g.pointwise(CUDNN_POINTWISE_GEN_INDEX, scaled, nullptr, row, nullptr, CUDNN_DATA_INT32, 2);
  const Descriptor& col = g.virtual_tensor(CUDNN_DATA_INT32, dims, strides);
  g.pointwise(CUDNN_POINTWISE_GEN_INDEX, scaled, nullptr, col, nullptr, CUDNN_DATA_INT32, 3);
  const Descriptor& keep = g.virtual_tensor(CUDNN_DATA_BOOLEAN, dims, strides);
  g.pointwise(CUDNN_POINTWISE_CMP_GE, row, &col, keep, nullptr, CUDNN_DATA_BOOLEAN);
  const Descriptor& masked = g.virtual_tensor(CUDNN_DATA_FLOAT, dims, strides);
  g.pointwise(CUDNN_POINTWISE_BINARY_SELECT, scaled, &g.scalar(kMaskValue), masked, &keep);
  return masked;
}

// Kᵀ (or Vᵀ) [batch, heads, d_head, ctx] over K's storage: its strides
// with the last two swapped.
const Descriptor& k_transposed(GraphBuilder& g, const AttentionShape& s, QkvLayout layout, std::int64_t uid) {
  const Dims k = qkv_strides(s, layout);
  return g.tensor(uid, CUDNN_DATA_BFLOAT16, {s.batch, s.heads, s.d_head, s.ctx}, {k[0], k[1], k[3], k[2]});
}

void build_forward(GraphBuilder& g, const AttentionShape& s, QkvLayout layout) {
  const Dims qkv{s.batch, s.heads, s.ctx, s.d_head}, qkv_layout = qkv_strides(s, layout);
  const Dims row_dims{s.batch, s.heads, s.ctx, 1}, row_strides = head_major(s, s.ctx, 1);
  const Dims score_dims{s.batch, s.heads, s.ctx, s.ctx}, score_strides = head_major(s, s.ctx, s.ctx);
  const Descriptor& q = g.tensor(kQ, CUDNN_DATA_BFLOAT16, qkv, qkv_layout);
  const Descriptor& kt = k_transposed(g, s, layout, kK);
  const Descriptor& v = g.tensor(kV, CUDNN_DATA_BFLOAT16, qkv, qkv_layout);
  const Descriptor& o = g.tensor(kO, CUDNN_DATA_BFLOAT16, qkv, merged_heads(s));
  const Descriptor& stats = g.tensor(kStats, CUDNN_DATA_FLOAT, row_dims, row_strides);

  const Descriptor& masked = masked_scores(g, s, q, kt);
  const Descriptor& max = g.virtual_tensor(CUDNN_DATA_FLOAT, row_dims, row_strides);
  g.reduction(CUDNN_REDUCE_TENSOR_MAX, masked, max);
  const Descriptor& shifted = g.virtual_tensor(CUDNN_DATA_FLOAT, score_dims, score_strides);
  g.pointwise(CUDNN_POINTWISE_SUB, masked, &max, shifted);
  const Descriptor& exps = g.virtual_tensor(CUDNN_DATA_FLOAT, score_dims, score_strides);
  g.pointwise(CUDNN_POINTWISE_EXP, shifted, nullptr, exps);
  const Descriptor& sum = g.virtual_tensor(CUDNN_DATA_FLOAT, row_dims, row_strides);
  g.reduction(CUDNN_REDUCE_TENSOR_ADD, exps, sum);
  const Descriptor& log_sum = g.virtual_tensor(CUDNN_DATA_FLOAT, row_dims, row_strides);
  g.pointwise(CUDNN_POINTWISE_LOG, sum, nullptr, log_sum);
  g.pointwise(CUDNN_POINTWISE_ADD, max, &log_sum, stats);
  const Descriptor& probs = g.virtual_tensor(CUDNN_DATA_BFLOAT16, score_dims, score_strides);
  g.pointwise(CUDNN_POINTWISE_DIV, exps, &sum, probs);
  g.matmul(probs, v, o);
}

void build_backward(GraphBuilder& g, const AttentionShape& s, QkvLayout layout) {
  const Dims qkv{s.batch, s.heads, s.ctx, s.d_head}, qkv_layout = qkv_strides(s, layout);
  // The accumulator is cuDNN's own fp32 buffer: packed head-major.
  const Dims accumulator_strides = head_major(s, s.ctx, s.d_head);
  const Dims row_dims{s.batch, s.heads, s.ctx, 1}, row_strides = head_major(s, s.ctx, 1);
  const Dims score_dims{s.batch, s.heads, s.ctx, s.ctx}, score_strides = head_major(s, s.ctx, s.ctx);
  // Transposed scores [batch, heads, key, query] over the same storage.
  const Dims transposed_strides{score_strides[0], score_strides[1], 1, s.ctx};
  const Descriptor& q = g.tensor(kQ, CUDNN_DATA_BFLOAT16, qkv, qkv_layout);
  const Descriptor& kt = k_transposed(g, s, layout, kK);
  const Descriptor& vt = k_transposed(g, s, layout, kV);
  const Descriptor& o = g.tensor(kO, CUDNN_DATA_BFLOAT16, qkv, merged_heads(s));
  const Descriptor& d_o = g.tensor(kdO, CUDNN_DATA_BFLOAT16, qkv, merged_heads(s));
  const Descriptor& stats = g.tensor(kStats, CUDNN_DATA_FLOAT, row_dims, row_strides);
  const Descriptor& dq = g.tensor(kdQ, CUDNN_DATA_BFLOAT16, qkv, qkv_layout);
  const Descriptor& dk = g.tensor(kdK, CUDNN_DATA_BFLOAT16, qkv, qkv_layout);
  const Descriptor& dv = g.tensor(kdV, CUDNN_DATA_BFLOAT16, qkv, qkv_layout);
  const Descriptor& dq_accumulator =
      g.tensor(kdQAccumulator, CUDNN_DATA_FLOAT, qkv, accumulator_strides, false, true);

  // delta = rowsum(dO ∘ O)
  const Descriptor& d_o_o = g.virtual_tensor(CUDNN_DATA_FLOAT, qkv, accumulator_strides);
  g.pointwise(CUDNN_POINTWISE_MUL, d_o, &o, d_o_o);
  const Descriptor& delta_sum = g.virtual_tensor(CUDNN_DATA_FLOAT, row_dims, row_strides);
  g.reduction(CUDNN_REDUCE_TENSOR_ADD, d_o_o, delta_sum);
  const Descriptor& delta = g.virtual_tensor(CUDNN_DATA_FLOAT, row_dims, row_strides);
  g.pointwise(CUDNN_POINTWISE_MUL, delta_sum, &g.scalar(kOne), delta);

  // P = exp(masked S·scale − stats); dV = Pᵀ·dO
  const Descriptor& masked = masked_scores(g, s, q, kt);
  const Descriptor& shifted = g.virtual_tensor(CUDNN_DATA_FLOAT, score_dims, score_strides);
  g.pointwise(CUDNN_POINTWISE_SUB, masked, &stats, shifted);
  const Descriptor& probs = g.virtual_tensor(CUDNN_DATA_FLOAT, score_dims, score_strides);
  g.pointwise(CUDNN_POINTWISE_EXP, shifted, nullptr, probs);
  const Descriptor& probs_t =
      g.virtual_tensor(CUDNN_DATA_BFLOAT16, {s.batch, s.heads, s.ctx, s.ctx}, transposed_strides);
  g.reshape(probs, probs_t);
  g.matmul(probs_t, d_o, dv);

  // dS = P ∘ (dO·Vᵀ − delta)·scale; dK = dSᵀ·Q; dQ = dS·K
  const Descriptor& dp = g.virtual_tensor(CUDNN_DATA_FLOAT, score_dims, score_strides);
  g.matmul(d_o, vt, dp);
  const Descriptor& dp_kept = g.virtual_tensor(CUDNN_DATA_FLOAT, score_dims, score_strides);
  g.pointwise(CUDNN_POINTWISE_MUL, dp, &g.scalar(kOne), dp_kept);
  const Descriptor& dp_centred = g.virtual_tensor(CUDNN_DATA_FLOAT, score_dims, score_strides);
  g.pointwise(CUDNN_POINTWISE_SUB, dp_kept, &delta, dp_centred);
  const Descriptor& ds_unscaled = g.virtual_tensor(CUDNN_DATA_FLOAT, score_dims, score_strides);
  g.pointwise(CUDNN_POINTWISE_MUL, dp_centred, &probs, ds_unscaled);
  const Descriptor& ds = g.virtual_tensor(CUDNN_DATA_FLOAT, score_dims, score_strides);
  g.pointwise(CUDNN_POINTWISE_MUL, ds_unscaled, &g.scalar(kScale), ds);
  const Descriptor& ds_t =
      g.virtual_tensor(CUDNN_DATA_BFLOAT16, {s.batch, s.heads, s.ctx, s.ctx}, transposed_strides);
  g.reshape(ds, ds_t);
  g.matmul(ds_t, q, dk);
  const Descriptor& k = g.virtual_tensor(CUDNN_DATA_BFLOAT16, qkv, qkv_layout);
  g.reshape(kt, k);
  g.matmul(ds, k, dq_accumulator);
  g.pointwise(CUDNN_POINTWISE_IDENTITY, dq_accumulator, nullptr, dq);
}

}  // namespace

CudnnAttention::Plan& CudnnAttention::plan_for(const AttentionShape& shape, QkvLayout layout, bool backward,
                                               cudaStream_t stream) {
  const auto key = std::make_tuple(shape.batch, shape.ctx, shape.heads, shape.d_head, layout, backward);
  auto found = plans_.find(key);
  if (found != plans_.end()) return *found->second;
  cudaStreamCaptureStatus capturing = cudaStreamCaptureStatusNone;
  GPUPROF_CUDA_CHECK(cudaStreamIsCapturing(stream, &capturing));
  if (capturing != cudaStreamCaptureStatusNone)
    throw std::logic_error(
        "cuDNN attention: the first call for a shape builds its plan and workspace, which "
        "cannot happen inside stream capture; call check_shape() or run once before capturing");
  GraphBuilder g(handle_->raw);
  if (backward) build_backward(g, shape, layout);
  else build_forward(g, shape, layout);
  Descriptor plan = g.build_plan(engine_name_);
  std::int64_t bytes = 0, count = 0;
  CUDNN_CHECK(cudnnBackendGetAttribute(plan.get(), CUDNN_ATTR_EXECUTION_PLAN_WORKSPACE_SIZE, CUDNN_TYPE_INT64,
                                       1, &count, &bytes));
  // The workspace first: a plan is cached only once it can run.
  workspace_for(static_cast<std::size_t>(bytes));
  auto entry = std::make_unique<Plan>(Plan{std::move(plan), static_cast<std::size_t>(bytes)});
  return *plans_.emplace(key, std::move(entry)).first->second;
}

void* CudnnAttention::workspace_for(std::size_t bytes) {
  if (bytes <= workspace_bytes_) return workspace_;
  void* grown = nullptr;
  GPUPROF_CUDA_CHECK(cudaMalloc(&grown, bytes));
  // A graph captured with the old workspace may still be replayed.
  if (workspace_) outgrown_.push_back(workspace_);
  workspace_ = grown;
  workspace_bytes_ = bytes;
  return workspace_;
}

namespace {

void execute(cudnnHandle_t handle, const Descriptor& plan, void* workspace,
             const std::vector<std::int64_t>& uids, const std::vector<void*>& pointers, cudaStream_t stream) {
  CUDNN_CHECK(cudnnSetStream(handle, stream));
  Descriptor pack(CUDNN_BACKEND_VARIANT_PACK_DESCRIPTOR);
  pack.set(CUDNN_ATTR_VARIANT_PACK_UNIQUE_IDS, CUDNN_TYPE_INT64, uids.data(),
           static_cast<std::int64_t>(uids.size()))
      .set(CUDNN_ATTR_VARIANT_PACK_DATA_POINTERS, CUDNN_TYPE_VOID_PTR, pointers.data(),
           static_cast<std::int64_t>(pointers.size()))
      .set(CUDNN_ATTR_VARIANT_PACK_WORKSPACE, CUDNN_TYPE_VOID_PTR, &workspace)
      .finalize();
  CUDNN_CHECK(cudnnBackendExecute(handle, plan.get(), pack.get()));
}

void* mutable_pointer(const void* p) { return const_cast<void*>(p); }

// The by-value scalars the graphs bind: host memory cuDNN reads in Execute.
struct Scalars {
  explicit Scalars(const AttentionShape& shape) : scale(1.0f / std::sqrt(static_cast<float>(shape.d_head))) {}
  float scale;
  float mask_value = std::numeric_limits<float>::lowest();  // as cuDNN's own pattern masks
  float one = 1.0f;
};

}  // namespace

void CudnnAttention::forward(const AttentionShape& shape, QkvLayout layout, const __nv_bfloat16* q,
                             const __nv_bfloat16* k, const __nv_bfloat16* v, __nv_bfloat16* context,
                             float* lse, cudaStream_t stream) {
  Plan& plan = plan_for(shape, layout, false, stream);
  void* workspace = workspace_for(plan.workspace_bytes);
  Scalars scalars(shape);
  execute(handle_->raw, plan.plan, workspace, {kQ, kK, kV, kO, kStats, kScale, kMaskValue},
          {mutable_pointer(q), mutable_pointer(k), mutable_pointer(v), context, lse, &scalars.scale,
           &scalars.mask_value},
          stream);
}

void CudnnAttention::backward(const AttentionShape& shape, QkvLayout layout, const __nv_bfloat16* q,
                              const __nv_bfloat16* k, const __nv_bfloat16* v, const __nv_bfloat16* context,
                              const float* lse, const __nv_bfloat16* dcontext, __nv_bfloat16* dq,
                              __nv_bfloat16* dk, __nv_bfloat16* dv, float* workspace, cudaStream_t stream) {
  Plan& plan = plan_for(shape, layout, true, stream);
  void* cudnn_workspace = workspace_for(plan.workspace_bytes);
  // cuDNN adds dQ's partial products into the fp32 accumulator: it starts at zero.
  GPUPROF_CUDA_CHECK(cudaMemsetAsync(workspace, 0, workspace_floats(shape) * sizeof(float), stream));
  Scalars scalars(shape);
  execute(handle_->raw, plan.plan, cudnn_workspace,
          {kQ, kK, kV, kO, kdO, kStats, kdQ, kdK, kdV, kdQAccumulator, kScale, kMaskValue, kOne},
          {mutable_pointer(q), mutable_pointer(k), mutable_pointer(v), mutable_pointer(context),
           mutable_pointer(dcontext), mutable_pointer(lse), dq, dk, dv, workspace, &scalars.scale,
           &scalars.mask_value, &scalars.one},
          stream);
}

#endif  // TRANSFORMER_HAVE_CUDNN

}  // namespace transformer::cuda

namespace transformer {

std::optional<std::string> cudnn_runtime_version() {
#if TRANSFORMER_HAVE_CUDNN
  return cudnn_version_text(cudnnGetVersion());
#else
  return std::nullopt;
#endif
}

}  // namespace transformer
