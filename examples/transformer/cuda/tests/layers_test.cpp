// cuda/tests/layers_test.cpp: every CUDA layer, forward and backward, against
// the CPU layers in double on fresh random inputs, in each precision the
// layer supports. Outputs start as NaN (DeviceArray poisons them), so an
// element a kernel does not write fails its comparison.
#include <algorithm>
#include <cmath>
#include <memory>

#include <Eigen/Core>

#include "cpu/adamw.hpp"
#include "cpu/attention.hpp"
#include "cpu/cross_entropy.hpp"
#include "cpu/embedding.hpp"
#include "cpu/rmsnorm.hpp"
#include "cpu/rope.hpp"
#include "cpu/swiglu.hpp"
#include "cuda/adamw.hpp"
#include "cuda/attention.hpp"
#include "cuda/cross_entropy.hpp"
#include "cuda/cudnn_attention.hpp"
#include "cuda/embedding.hpp"
#include "cuda/flash_attention.hpp"
#include "cuda/gemm.hpp"
#include "cuda/rmsnorm.hpp"
#include "cuda/swiglu.hpp"
#include "cuda/tests/gpu_support.hpp"
#include "cuda/vector_width.hpp"

namespace transformer::cuda::test {
namespace {

using MatrixD = cpu::Matrix<double>;
using VectorD = cpu::Vector<double>;

Eigen::Map<const MatrixD> as_matrix(const std::vector<double>& v, Eigen::Index rows, Eigen::Index cols) {
  REQUIRE(static_cast<Eigen::Index>(v.size()) == rows * cols);
  return Eigen::Map<const MatrixD>(v.data(), rows, cols);
}

Eigen::Map<const VectorD> as_vector(const std::vector<double>& v) {
  return Eigen::Map<const VectorD>(v.data(), static_cast<Eigen::Index>(v.size()));
}

std::vector<double> flat(const MatrixD& m) { return {m.data(), m.data() + m.size()}; }
std::vector<double> flat(const VectorD& v) { return {v.data(), v.data() + v.size()}; }

// The first `cols` columns of rows stored `ld` apart, and what lies beyond them.
struct PaddedRows {
  std::vector<double> values, padding;
};
PaddedRows split_padding(const std::vector<double>& stored, std::size_t rows, std::size_t cols,
                         std::size_t ld) {
  REQUIRE(stored.size() == rows * ld);
  PaddedRows split;
  for (std::size_t r = 0; r < rows; ++r)
    for (std::size_t c = 0; c < ld; ++c)
      (c < cols ? split.values : split.padding).push_back(stored[r * ld + c]);
  return split;
}

bool all_zero(const std::vector<double>& values) {
  return std::all_of(values.begin(), values.end(), [](double x) { return x == 0.0; });
}

// Tolerance of a tensor stored in Act by an elementwise kernel with fp32 math.
template <class Act>
double stored_tolerance() {
  return tolerance_for(std::is_same_v<Act, bf16> ? Precision::bf16 : Precision::fp32).layer;
}
constexpr double kFp32Math = 1e-5;  // fp32 results of fp32 math (no GEMM)

template <class Grad>
void check_embedding(int d) {
  CAPTURE(d);
  const int vocab = 40, rows = 96;  // 96 draws from 40 ids: repeats and absent ids
  const auto tokens = random_ids(rows, vocab);
  const auto table = round_to<float>(random_values(static_cast<std::size_t>(vocab) * d));
  const auto dout = round_to<float>(random_values(static_cast<std::size_t>(rows) * d));

  // The table as the backend of this gradient type stores it: fp32, or split.
  DeviceArray<std::int32_t> tokens_dev(tokens);
  DeviceArray<float> table_dev(table), out(static_cast<std::size_t>(rows) * d);
  const DeviceSplitMaster table_split(table);
  const MasterWeights table_master =
      std::is_same_v<Grad, bf16> ? table_split.view() : MasterWeights(table_dev.get());
  embedding_forward(tokens_dev.get(), table_master, out.get(), rows, d, nullptr);
  MatrixD out_ref;
  cpu::embedding_forward<double>(as_matrix(table, vocab, d), tokens, out_ref);
  check_close("embedding forward", out.download(), flat(out_ref), 1e-12);

  const TokenGroups groups = group_positions_by_token(tokens, vocab);
  DeviceArray<std::int32_t> offsets(groups.offsets), positions(groups.positions);
  DeviceArray<float> dout_dev(dout);
  DeviceArray<Grad> dtable(static_cast<std::size_t>(vocab) * d);
  embedding_backward(offsets.get(), positions.get(), dout_dev.get(), dtable.get(), vocab, d, nullptr);
  MatrixD dtable_ref = MatrixD::Zero(vocab, d);
  cpu::embedding_backward<double>(as_matrix(dout, rows, d), tokens, dtable_ref);
  // Summed in fp32, then rounded once to Grad: a bf16 table's error is its rounding.
  check_close("embedding backward (table gradient), d = " + std::to_string(d), dtable.download(),
              flat(dtable_ref), std::is_same_v<Grad, bf16> ? stored_tolerance<bf16>() : kFp32Math);
}

TEST_CASE_TEMPLATE("embedding gathers rows and scatter-adds gradients by token", Grad, float, bf16) {
  // d = 10 is not a multiple of the vector width: the element-wise kernels.
  for (const int d : {24, 10}) check_embedding<Grad>(d);
}

template <class Act>
void check_rmsnorm(int rows, int d) {
  CAPTURE(rows);
  CAPTURE(d);
  const float eps = 1e-5f;
  const std::size_t n = static_cast<std::size_t>(rows) * d;
  // Every other row is tiny (mean square about 1e-5, as large as eps): there
  // eps decides half of r, so a wrong eps fails the check; elsewhere it is
  // lost in the rounding.
  std::vector<double> values = random_values(n, 0.0, 2.0);
  for (int row = 1; row < rows; row += 2)
    for (int j = 0; j < d; ++j) values[static_cast<std::size_t>(row) * d + j] *= 1.5e-3;
  const auto x = round_to<float>(values);
  const auto gain = round_to<float>(random_values(d, 1.0, 0.3));

  // The gain as the backend of this precision stores it: fp32, or split.
  DeviceArray<float> x_dev(x), gain_fp32(gain), inv_rms(rows), x_copy(n);
  const DeviceSplitMaster gain_split(gain);
  const MasterWeights gain_dev =
      std::is_same_v<Act, bf16> ? gain_split.view() : MasterWeights(gain_fp32.get());
  DeviceArray<Act> y(n);
  rmsnorm_forward<Act>(x_dev.get(), gain_dev, y.get(), inv_rms.get(), x_copy.get(), rows, d, eps, nullptr);
  MatrixD y_ref;
  VectorD inv_rms_ref;
  cpu::rmsnorm_forward<double>(as_matrix(x, rows, d), as_vector(gain), eps, y_ref, inv_rms_ref);
  check_close("rmsnorm forward y", y.download(), flat(y_ref), stored_tolerance<Act>());
  check_close("rmsnorm forward inv_rms", inv_rms.download(), flat(inv_rms_ref), kFp32Math);
  check_close("rmsnorm forward residual copy", x_copy.download(), x, 1e-12);

  const auto dy = round_to<Act>(random_values(n));
  const auto residual = round_to<float>(random_values(n));
  DeviceArray<Act> dy_dev(dy), dx_act(n);
  DeviceArray<float> dx(residual);  // dx starts as the residual: updated in place
  DeviceArray<Act> dgain(d);
  DeviceArray<float> gain_partials(rmsnorm_gain_partials_floats(rows, d));
  rmsnorm_backward<Act>(dy_dev.get(), x_dev.get(), gain_dev, inv_rms.get(), dx.get(), dx.get(),
                        std::is_same_v<Act, bf16> ? dx_act.get() : nullptr, dgain.get(), gain_partials.get(),
                        rows, d, nullptr);
  MatrixD dx_ref;
  VectorD dgain_ref = VectorD::Zero(d);
  cpu::rmsnorm_backward<double>(as_matrix(dy, rows, d), as_matrix(x, rows, d), as_vector(gain), inv_rms_ref,
                                dx_ref, dgain_ref);
  dx_ref += as_matrix(residual, rows, d);
  check_close("rmsnorm backward dx (+ residual, in place)", dx.download(), flat(dx_ref), kFp32Math);
  check_close("rmsnorm backward dgain", dgain.download(), flat(dgain_ref),
              std::is_same_v<Act, bf16> ? stored_tolerance<Act>() : kFp32Math);
  DeviceArray<float> dx_again(n);
  DeviceArray<Act> dgain_again(d);
  rmsnorm_backward<Act>(dy_dev.get(), x_dev.get(), gain_dev, inv_rms.get(), nullptr, dx_again.get(), nullptr,
                        dgain_again.get(), gain_partials.get(), rows, d, nullptr);
  check_close("rmsnorm backward dgain again (fixed order: bit-identical)", dgain_again.download(),
              dgain.download(), 0.0);
  if (std::is_same_v<Act, bf16>)
    check_close("rmsnorm backward dx bf16 copy", dx_act.download(), flat(dx_ref), stored_tolerance<Act>());
}

TEST_CASE_TEMPLATE("rmsnorm forward and backward (residual fused, gain gradient)", Act, float, bf16) {
  // d = 272: lanes loop twice over a row and d is not a multiple of 32;
  // d = 38 is not a multiple of the vector width: the element-wise kernels;
  // d = 2560, the 2.7B model's, needs more than the default 48 KB of shared
  // sums per block. 40 rows are five chunks of the gain gradient's
  // reduction; 4490 the most chunks (256 of 18 rows): 249 full, one of 8
  // rows, and the last six empty.
  for (const int d : {272, 38, 2560})
    for (const int rows : {40, 4490}) check_rmsnorm<Act>(rows, d);
}

template <class Act>
void check_swiglu(int d_ff) {
  CAPTURE(d_ff);
  const int rows = 24;
  const auto h13 = round_to<Act>(random_values(static_cast<std::size_t>(rows) * 2 * d_ff, 0, 2));
  const auto dgated = round_to<Act>(random_values(static_cast<std::size_t>(rows) * d_ff));
  DeviceArray<Act> h13_dev(h13), gated(static_cast<std::size_t>(rows) * d_ff);
  DeviceArray<Act> dgated_dev(dgated), dh13(h13.size());
  swiglu_forward<Act>(h13_dev.get(), gated.get(), rows, d_ff, nullptr);
  swiglu_backward<Act>(h13_dev.get(), dgated_dev.get(), dh13.get(), rows, d_ff, nullptr);
  MatrixD gated_ref, dh13_ref;
  cpu::swiglu_gate_forward<double>(as_matrix(h13, rows, 2 * d_ff), gated_ref);
  cpu::swiglu_gate_backward<double>(as_matrix(dgated, rows, d_ff), as_matrix(h13, rows, 2 * d_ff), dh13_ref);
  check_close("swiglu forward", gated.download(), flat(gated_ref), stored_tolerance<Act>());
  check_close("swiglu backward", dh13.download(), flat(dh13_ref), stored_tolerance<Act>());
}

TEST_CASE_TEMPLATE("swiglu gate forward and backward", Act, float, bf16) {
  // d_ff = 50 is not a multiple of the vector width: the element-wise kernels.
  for (const int d_ff : {136, 50}) check_swiglu<Act>(d_ff);
}

template <class Act>
void check_cross_entropy(int vocab) {
  CAPTURE(vocab);
  const int rows = 20, ld = padded_to_vectors(vocab);
  auto logits = random_values(static_cast<std::size_t>(rows) * vocab, 0, 3);
  for (int col = 0; col < vocab; ++col) logits[col] += 80;  // exp(80) overflows fp32 unless stable
  logits = round_to<Act>(logits);
  const auto targets = random_ids(rows, vocab);
  std::vector<double> stored(static_cast<std::size_t>(rows) * ld, NAN);
  for (int r = 0; r < rows; ++r)
    std::copy_n(logits.begin() + static_cast<long>(r) * vocab, vocab,
                stored.begin() + static_cast<long>(r) * ld);

  DeviceArray<Act> logits_dev(stored);
  DeviceArray<std::int32_t> targets_dev(targets);
  DeviceArray<float> lse(rows), row_loss(rows), mean_loss(1);
  cross_entropy_forward<Act>(logits_dev.get(), targets_dev.get(), lse.get(), row_loss.get(), mean_loss.get(),
                             rows, vocab, ld, nullptr);
  VectorD lse_ref;
  const double loss_ref =
      cpu::cross_entropy_forward<double>(as_matrix(logits, rows, vocab), targets, lse_ref);
  check_close("cross-entropy mean loss", mean_loss.download(), {loss_ref}, kFp32Math);
  check_close("cross-entropy logsumexp", lse.download(), flat(lse_ref), kFp32Math);

  cross_entropy_backward<Act>(logits_dev.get(), targets_dev.get(), lse.get(), rows, vocab, ld, nullptr);
  MatrixD dlogits_ref;
  cpu::cross_entropy_backward<double>(as_matrix(logits, rows, vocab), targets, lse_ref, 1.0, dlogits_ref);
  const PaddedRows dlogits = split_padding(logits_dev.download(), rows, vocab, ld);
  check_close("cross-entropy dlogits (in place), vocab " + std::to_string(vocab), dlogits.values,
              flat(dlogits_ref), stored_tolerance<Act>());
  CHECK_MESSAGE(all_zero(dlogits.padding), "the padding columns of dlogits must be zeros");
}

TEST_CASE_TEMPLATE("cross-entropy loss, logsumexp and in-place logits gradient", Act, float, bf16) {
  // vocab 2056: a block of 256 threads × 8 covers 2048 columns per sweep.
  // vocab 1001 (rows padded to 1008): NaN in the padding must not count, and
  // the backward pass leaves zeros there.
  for (const int vocab : {2056, 1001}) check_cross_entropy<Act>(vocab);
  // Rows that are not padded to whole vectors are refused.
  const int vocab = 1001;
  DeviceArray<Act> unpadded(static_cast<std::size_t>(vocab));
  DeviceArray<std::int32_t> target(std::vector<std::int32_t>{0});
  DeviceArray<float> scalars(3);
  CHECK_THROWS_AS(cross_entropy_forward<Act>(unpadded.get(), target.get(), scalars.get(), scalars.get() + 1,
                                             scalars.get() + 2, 1, vocab, vocab, nullptr),
                  std::invalid_argument);
}

// Head-major [batch, heads, ctx, d_head] copy of columns part·d … of qkv.
std::vector<double> head_major(const MatrixD& qkv, const AttentionShape& s, int part) {
  std::vector<double> out;
  out.reserve(static_cast<std::size_t>(s.tokens()) * s.d_model());
  for (int b = 0; b < s.batch; ++b)
    for (int h = 0; h < s.heads; ++h)
      for (int t = 0; t < s.ctx; ++t)
        for (int e = 0; e < s.d_head; ++e)
          out.push_back(qkv(b * s.ctx + t, part * s.d_model() + h * s.d_head + e));
  return out;
}

std::vector<double> columns(const MatrixD& m, Eigen::Index first, Eigen::Index count) {
  return flat(MatrixD(m.middleCols(first, count)));
}

// The naive path (every precision) or a fused one (bf16, ours or cuDNN's):
// the same RoPE around a different core, against the same double reference.
// Ours and the naive path copy q, k, v into head-major tensors; cuDNN's
// rotates q and k inside qkv and writes the gradients straight into dqkv.
template <class Act>
void check_attention(Precision precision, const AttentionShape& s, Attention attention = Attention::naive) {
  const bool fused = is_fused(attention), in_place = attention == Attention::cudnn;
  std::unique_ptr<CudnnAttention> cudnn;
  if (in_place) {
    cudnn = std::make_unique<CudnnAttention>();
    cudnn->check_shape(s, QkvLayout::packed);
  }
  const std::string label = std::string(to_string(precision)) + " " + to_string(attention) + " attention [b" +
                            std::to_string(s.batch) + " t" + std::to_string(s.ctx) + " h" +
                            std::to_string(s.heads) + " dh" + std::to_string(s.d_head) + "] ";
  const double tol = tolerance_for(precision).layer;
  const int N = s.tokens(), d = s.d_model();
  const double theta = 10000.0;
  // The fused path allocates no score buffers (one element: no zero-size allocations).
  const auto scores = fused ? 1 : static_cast<std::size_t>(s.score_buffer_elements());
  const auto qkv = round_to<Act>(random_values(static_cast<std::size_t>(N) * 3 * d));

  DeviceArray<char> workspace(Gemm::kWorkspaceBytes);
  Gemm gemm(precision, nullptr);
  gemm.set_workspace(workspace.get(), Gemm::kWorkspaceBytes);
  const RopeTables rope = make_rope_tables(s.ctx, s.d_head, theta);
  DeviceArray<float> cos(rope.cos), sin(rope.sin), score_scratch(scores);
  const std::size_t nd = static_cast<std::size_t>(N) * d;
  DeviceArray<Act> qkv_dev(qkv), q(nd), k(nd), v(nd), probs(scores), context(nd);
  DeviceArray<float> lse(static_cast<std::size_t>(s.score_rows()));
  const AttentionTensors<Act> tensors{q.get(),
                                      k.get(),
                                      v.get(),
                                      fused ? nullptr : probs.get(),
                                      fused ? nullptr : score_scratch.get(),
                                      fused ? lse.get() : nullptr};
  if constexpr (std::is_same_v<Act, bf16>) {
    if (in_place)
      cudnn_attention_forward(s, cos.get(), sin.get(), qkv_dev.get(), context.get(), lse.get(), *cudnn,
                              nullptr);
    else if (fused)
      fused_attention_forward(s, cos.get(), sin.get(), qkv_dev.get(), tensors, context.get(), nullptr);
  }
  if (!fused)
    attention_forward<Act>(gemm, s, cos.get(), sin.get(), qkv_dev.get(), tensors, context.get(), nullptr);

  MatrixD rotated = as_matrix(qkv, N, 3 * d);
  cpu::rope_forward<double>(rotated.leftCols(2 * d), s.batch, s.ctx, 2 * s.heads, theta);
  MatrixD context_ref, probs_ref;
  cpu::causal_attention_forward<double>(rotated, s.batch, s.ctx, s.heads, context_ref, probs_ref);
  if (in_place) {
    check_close(label + "qkv (q, k rotated in place)", qkv_dev.download(), flat(rotated),
                stored_tolerance<Act>());
  } else {
    check_close(label + "q (rotated, head-major)", q.download(), head_major(rotated, s, 0),
                stored_tolerance<Act>());
    check_close(label + "k (rotated, head-major)", k.download(), head_major(rotated, s, 1),
                stored_tolerance<Act>());
    check_close(label + "v (head-major)", v.download(), head_major(rotated, s, 2), 1e-12);
  }
  if (!fused) {
    const PaddedRows probs_got = split_padding(probs.download(), s.score_rows(), s.ctx, s.score_ld());
    check_close(label + "probs", probs_got.values, flat(probs_ref), tol);
    CHECK_MESSAGE(all_zero(probs_got.padding), label << "the padding columns of P must be zeros");
  }
  check_close(label + "context", context.download(), flat(context_ref), tol);

  const auto dcontext = round_to<Act>(random_values(nd));
  DeviceArray<Act> dcontext_dev(dcontext), dq(nd), dk(nd), dv(nd), dqkv(nd * 3);
  DeviceArray<float> flash_workspace(in_place ? CudnnAttention::workspace_floats(s)
                                     : fused  ? flash_attention_workspace_floats(s)
                                              : 1);
  if constexpr (std::is_same_v<Act, bf16>) {
    if (in_place)
      cudnn_attention_backward(s, cos.get(), sin.get(), qkv_dev.get(), context.get(), lse.get(),
                               dcontext_dev.get(), dqkv.get(), flash_workspace.get(), *cudnn, nullptr);
    else if (fused)
      fused_attention_backward(s, cos.get(), sin.get(), dcontext_dev.get(), context.get(), tensors, dq.get(),
                               dk.get(), dv.get(), dqkv.get(), flash_workspace.get(), nullptr);
  }
  if (!fused)
    attention_backward<Act>(gemm, s, cos.get(), sin.get(), dcontext_dev.get(), tensors, dq.get(), dk.get(),
                            dv.get(), dqkv.get(), nullptr);
  MatrixD dqkv_ref;
  cpu::causal_attention_backward<double>(as_matrix(dcontext, N, d), rotated, probs_ref, s.batch, s.ctx,
                                         s.heads, dqkv_ref);
  cpu::rope_backward<double>(dqkv_ref.leftCols(2 * d), s.batch, s.ctx, 2 * s.heads, theta);
  const MatrixD dqkv_got = as_matrix(dqkv.download(), N, 3 * d);
  check_close(label + "dq (unrotated)", columns(dqkv_got, 0, d), columns(dqkv_ref, 0, d), tol);
  check_close(label + "dk (unrotated)", columns(dqkv_got, d, d), columns(dqkv_ref, d, d), tol);
  check_close(label + "dv", columns(dqkv_got, 2 * d, d), columns(dqkv_ref, 2 * d, d), tol);
}

TEST_CASE("attention (RoPE, causal softmax, strided-batched GEMMs) forward and backward") {
  // The second shape has rows longer than a warp's 256-element sweep and the
  // 2.7B model's d_head of 80; the third a ctx that is not a multiple of the
  // vector width (score rows padded) and a d_head of 6 (RoPE a pair at a
  // time); the fourth one position per sequence.
  for (const AttentionShape shape : {AttentionShape{2, 24, 3, 16}, AttentionShape{1, 264, 2, 80},
                                     AttentionShape{2, 13, 3, 6}, AttentionShape{3, 1, 2, 8}}) {
    check_attention<float>(Precision::fp32, shape);
    check_attention<float>(Precision::tf32, shape);
    check_attention<bf16>(Precision::bf16, shape);
  }
}

TEST_CASE("fused attention (RoPE around the flash kernels) forward and backward, bf16") {
  // 77 positions: no multiple of the vectors or the kernels' tiles.
  for (const AttentionShape shape : {AttentionShape{2, 24, 2, 64}, AttentionShape{1, 264, 2, 80},
                                     AttentionShape{1, 136, 1, 128}, AttentionShape{2, 77, 2, 64}})
    check_attention<bf16>(Precision::bf16, shape, Attention::fused);
}

TEST_CASE("cuDNN attention (RoPE around cuDNN's fused engine) forward and backward, bf16" *
          doctest::test_suite("cudnn")) {
  for (const AttentionShape shape : {AttentionShape{2, 24, 2, 64}, AttentionShape{1, 264, 2, 80},
                                     AttentionShape{1, 136, 1, 128}, AttentionShape{2, 77, 2, 64}})
    check_attention<bf16>(Precision::bf16, shape, Attention::cudnn);
}

// Grad bf16: the mixed-precision backend's gradients and its split master
// weights (the update is fp32 either way).
TEST_CASE_TEMPLATE(
    "adamw: three steps match the CPU reference, t is counted on the device, "
    "split master's bf16 halves are the rounded weights",
    Grad, float, bf16) {
  constexpr bool split = std::is_same_v<Grad, bf16>;
  const std::size_t count = 10000;
  for (const float clip : {0.0f, 0.5f}) {  // gradient norms here are ≈ 100: clipping acts
    CAPTURE(clip);
    AdamWConfig config;
    config.lr = 1e-2f;
    config.weight_decay = 0.1f;
    config.clip_norm = clip;
    const auto initial = round_to<float>(random_values(count, 0, 0.1));
    std::vector<double> params_ref = initial;
    cpu::AdamWState<double> state(static_cast<Eigen::Index>(count));

    DeviceArray<float> params(initial), m(std::vector<double>(count, 0.0)),
        v(std::vector<double>(count, 0.0)), partials(kNormPartials);
    const DeviceSplitMaster params_split(initial);
    DeviceArray<Grad> grads(count);
    DeviceArray<AdamWStep> step(1);
    GPUPROF_CUDA_CHECK(cudaMemset(step.get(), 0, sizeof(AdamWStep)));
    constexpr unsigned long long kSteps = 3;
    for (unsigned long long t = 1; t <= kSteps; ++t) {
      const auto g = round_to<Grad>(random_values(count));
      grads.upload(g);
      adamw_step<Grad>(config,
                       {split ? nullptr : params.get(), split ? params_split.hi() : nullptr,
                        split ? params_split.lo() : nullptr, grads.get(), m.get(), v.get(), partials.get(),
                        step.get(), count},
                       nullptr);
      cpu::adamw_step<double>(config, Eigen::Map<VectorD>(params_ref.data(), count),
                              Eigen::Map<const VectorD>(g.data(), count), state);
    }
    const std::string label = clip > 0 ? "adamw (clipped) " : "adamw ";
    const auto params_got = split ? params_split.joined() : params.download();
    check_close(label + "params", params_got, params_ref, 1e-6);
    check_close(label + "m", m.download(), flat(state.m), 1e-6);
    check_close(label + "v", v.download(), flat(state.v), 1e-6);
    // Nearest bf16 (ties away from zero, where round_to rounds to even: a
    // tie, 1 in 65 536 elements, moves this figure by at most 2⁻⁸/√count;
    // truncating instead would make it ≈ 1e-3).
    if (split)
      check_close(label + "bf16 halves = bf16(params)", params_split.upper_halves(),
                  round_to<bf16>(params_got), 1e-4);
    // The kernel advanced t itself, and left its block count ready for the next launch.
    AdamWStep counted{};
    GPUPROF_CUDA_CHECK(cudaMemcpy(&counted, step.get(), sizeof counted, cudaMemcpyDeviceToHost));
    CHECK(counted.step == kSteps);
    CHECK(counted.blocks_done == 0);
  }
}

}  // namespace
}  // namespace transformer::cuda::test
