// cuda/tests/flash_attention_test.cpp: the fused causal attention kernels
// (flash_attention.hpp), and cuDNN's (cudnn_attention.hpp) where the build
// has cuDNN, against causal softmax attention computed in double on the
// host, on fresh random bf16 inputs, at lengths that are and are not
// multiples of the 64-row tiles and at each supported head size. Both
// implementations are held to the same tolerances.
//
// Tolerances (norm-wise relative error against double): the context and the
// three gradients are bf16 outputs of products whose operands include a bf16
// rounding of P or dS, so 1e-2 (bf16's unit roundoff is 3.9e-3); the lse is
// fp32 arithmetic on exact bf16 inputs (scores accumulate in fp32, exp2 is
// the hardware approximation), so 1e-4. Every output, the workspace too,
// starts as NaN: an element no kernel writes fails, and the workspace must be
// initialised by the backward pass itself, and a guard past the end of every
// output must stay NaN (nothing is written past the end). At ctx 1 the softmax is constant,
// so dq and dk are exactly zero and a relative error means nothing: there
// their root-mean-square must stay under 1e-3 (what is left is the rounding
// of dP − rowsum(dO∘O), with elements of dO, v of order 1).
#include <cmath>
#include <stdexcept>
#include <string>
#include <vector>

#include "cuda/cudnn_attention.hpp"
#include "cuda/flash_attention.hpp"
#include "cuda/tests/gpu_support.hpp"

namespace transformer::cuda::test {
namespace {

constexpr double kOutputTolerance = 1e-2;
constexpr double kLseTolerance = 1e-4;
constexpr double kZeroGradientRms = 1e-3;

void check_near_zero(const std::string& what, const std::vector<double>& got) {
  double sum2 = 0;
  std::size_t nans = 0;
  for (double x : got) {
    if (std::isnan(x)) ++nans;
    else sum2 += x * x;
  }
  const double rms = nans ? INFINITY : std::sqrt(sum2 / static_cast<double>(got.size()));
  std::printf("  %-48s rms %.3e (tolerance %.0e, want 0)%s\n", what.c_str(), rms, kZeroGradientRms,
              rms <= kZeroGradientRms ? "" : "  <-- FAIL");
  CHECK_MESSAGE(rms <= kZeroGradientRms, what << ": rms " << rms << ", " << nans << " NaN (unwritten)");
}

struct Reference {
  std::vector<double> context, lse, dq, dk, dv;
};

// Causal softmax attention and its gradients, in double, straight from the
// definition. q, k, v, dq, dk, dv head-major [batch, heads, ctx, d];
// context and dcontext merged heads [batch·ctx, heads·d].
Reference reference_attention(const AttentionShape& s, const std::vector<double>& q,
                              const std::vector<double>& k, const std::vector<double>& v,
                              const std::vector<double>& dcontext) {
  const int T = s.ctx, D = s.d_head, H = s.heads;
  const double scale = 1.0 / std::sqrt(static_cast<double>(D));
  Reference r;
  r.context.assign(static_cast<std::size_t>(s.tokens()) * s.d_model(), 0.0);
  r.lse.assign(static_cast<std::size_t>(s.score_rows()), 0.0);
  r.dq.assign(q.size(), 0.0);
  r.dk.assign(q.size(), 0.0);
  r.dv.assign(q.size(), 0.0);
  std::vector<double> probs(static_cast<std::size_t>(T)), dprobs(static_cast<std::size_t>(T));
  for (int head = 0; head < s.batch * H; ++head) {
    const int b = head / H, h = head % H;
    const std::size_t base = static_cast<std::size_t>(head) * T * D;
    auto row_of = [&](const std::vector<double>& m, int t) {
      return m.data() + base + static_cast<std::size_t>(t) * D;
    };
    auto merged = [&](int t) {
      return (static_cast<std::size_t>(b) * T + t) * H * D + static_cast<std::size_t>(h) * D;
    };
    for (int i = 0; i < T; ++i) {
      const double* qi = row_of(q, i);
      double max = -INFINITY;
      for (int j = 0; j <= i; ++j) {
        const double* kj = row_of(k, j);
        double dot = 0;
        for (int d = 0; d < D; ++d) dot += qi[d] * kj[d];
        probs[j] = dot * scale;
        max = std::max(max, probs[j]);
      }
      double sum = 0;
      for (int j = 0; j <= i; ++j) sum += (probs[j] = std::exp(probs[j] - max));
      for (int j = 0; j <= i; ++j) probs[j] /= sum;
      r.lse[static_cast<std::size_t>(head) * T + i] = max + std::log(sum);
      double* out = r.context.data() + merged(i);
      for (int j = 0; j <= i; ++j) {
        const double* vj = row_of(v, j);
        for (int d = 0; d < D; ++d) out[d] += probs[j] * vj[d];
      }
      // Backward of row i: dP = dO·vⱼ, dS = P ∘ (dP − dO·o), then the three products.
      const double* dout = dcontext.data() + merged(i);
      double delta = 0;
      for (int d = 0; d < D; ++d) delta += dout[d] * out[d];
      double* dqi = r.dq.data() + base + static_cast<std::size_t>(i) * D;
      for (int j = 0; j <= i; ++j) {
        const double* vj = row_of(v, j);
        double dp = 0;
        for (int d = 0; d < D; ++d) dp += dout[d] * vj[d];
        const double ds = probs[j] * (dp - delta) * scale;
        const double* kj = row_of(k, j);
        double* dkj = r.dk.data() + base + static_cast<std::size_t>(j) * D;
        double* dvj = r.dv.data() + base + static_cast<std::size_t>(j) * D;
        for (int d = 0; d < D; ++d) {
          dqi[d] += ds * kj[d];
          dkj[d] += ds * qi[d];
          dvj[d] += probs[j] * dout[d];
        }
      }
    }
  }
  return r;
}

// Every output gets kGuardHeads heads' worth of elements past its end that
// start as NaN and must stay NaN: a block of a head that does not exist (the
// surplus blocks of the last z slice) writing anything lands there.
constexpr int kGuardHeads = 8;

template <class T>
class GuardedOutput {
 public:
  GuardedOutput(std::size_t count, std::size_t guard) : count_(count), array_(count + guard) {}
  T* get() const { return array_.get(); }
  // The output, after checking that its guard is untouched.
  std::vector<double> download(const std::string& what) const {
    std::vector<double> all = array_.download();
    std::size_t written = 0;
    for (std::size_t i = count_; i < all.size(); ++i) written += std::isnan(all[i]) ? 0 : 1;
    CHECK_MESSAGE(written == 0, what << ": " << written << " of the " << all.size() - count_
                                     << " guard elements past the end were written");
    all.resize(count_);
    return all;
  }

 private:
  std::size_t count_;
  DeviceArray<T> array_;
};

// Heads [first, first + count) of the batch·heads index, checked on their
// own as well as within the whole output (count 0: none).
struct HeadRange {
  long long first = 0, count = 0;
};

// The rows of `heads` in an output with `per_row` values per (head, position)
// row: head-major (q, k, v, their gradients, lse), or merged heads (context).
std::vector<double> rows_of(const std::vector<double>& values, const AttentionShape& s, HeadRange heads,
                            int per_row, bool merged) {
  std::vector<double> rows;
  for (long long head = heads.first; head < heads.first + heads.count; ++head)
    for (int t = 0; t < s.ctx; ++t) {
      const long long b = head / s.heads, h = head % s.heads;
      const long long row = merged ? (b * s.ctx + t) * s.heads + h : head * s.ctx + t;
      rows.insert(rows.end(), values.begin() + row * per_row, values.begin() + (row + 1) * per_row);
    }
  return rows;
}

// Ours when cudnn is null (backward with `tiles`), else cuDNN's; `focus`:
// heads also checked on their own.
void check_attention(const AttentionShape& s, CudnnAttention* cudnn = nullptr, HeadRange focus = {},
                     FlashBackwardTiles tiles = FlashBackwardTiles::automatic) {
  const std::string label = std::string(cudnn                                  ? "cuDNN"
                                        : tiles == FlashBackwardTiles::compact ? "flash (compact)"
                                                                               : "flash") +
                            " attention [b" + std::to_string(s.batch) + " h" + std::to_string(s.heads) +
                            " T" + std::to_string(s.ctx) + " d" + std::to_string(s.d_head) + "]";
  const std::size_t n = static_cast<std::size_t>(s.score_rows()) * s.d_head;
  const auto q = round_to<bf16>(random_values(n));
  const auto k = round_to<bf16>(random_values(n));
  const auto v = round_to<bf16>(random_values(n));
  const auto dcontext = round_to<bf16>(random_values(n));

  const std::size_t guard_rows = static_cast<std::size_t>(kGuardHeads) * s.ctx;
  const std::size_t guard = guard_rows * s.d_head;
  DeviceArray<bf16> q_dev(q), k_dev(k), v_dev(v), dcontext_dev(dcontext);
  GuardedOutput<bf16> context(n, guard), dq(n, guard), dk(n, guard), dv(n, guard);
  GuardedOutput<float> lse(static_cast<std::size_t>(s.score_rows()), guard_rows);
  GuardedOutput<float> workspace(
      cudnn ? CudnnAttention::workspace_floats(s) : flash_attention_workspace_floats(s), guard + guard_rows);

  if (cudnn) {
    cudnn->forward(s, QkvLayout::head_major, q_dev.get(), k_dev.get(), v_dev.get(), context.get(), lse.get(),
                   nullptr);
    cudnn->backward(s, QkvLayout::head_major, q_dev.get(), k_dev.get(), v_dev.get(), context.get(), lse.get(),
                    dcontext_dev.get(), dq.get(), dk.get(), dv.get(), workspace.get(), nullptr);
  } else {
    flash_attention_forward(s, q_dev.get(), k_dev.get(), v_dev.get(), context.get(), lse.get(), nullptr);
    flash_attention_backward(s, q_dev.get(), k_dev.get(), v_dev.get(), context.get(), lse.get(),
                             dcontext_dev.get(), dq.get(), dk.get(), dv.get(), workspace.get(), nullptr,
                             tiles);
  }
  GPUPROF_CUDA_CHECK(cudaDeviceSynchronize());

  const Reference want = reference_attention(s, q, k, v, dcontext);
  struct Output {
    const char* name;
    std::vector<double> got;
    const std::vector<double>& want;
    int per_row;
    bool merged;
    double tolerance;
  };
  const Output outputs[] = {
      {"context", context.download(label + " context"), want.context, s.d_head, true, kOutputTolerance},
      {"lse", lse.download(label + " lse"), want.lse, 1, false, kLseTolerance},
      {"dq", dq.download(label + " dq"), want.dq, s.d_head, false, kOutputTolerance},
      {"dk", dk.download(label + " dk"), want.dk, s.d_head, false, kOutputTolerance},
      {"dv", dv.download(label + " dv"), want.dv, s.d_head, false, kOutputTolerance}};
  workspace.download(label + " workspace");
  const std::string part = label + " heads [" + std::to_string(focus.first) + ", " +
                           std::to_string(focus.first + focus.count) + ")";
  for (const Output& output : outputs) {
    const std::string name = output.name;
    if (s.ctx == 1 && (name == "dq" || name == "dk")) {
      check_near_zero(label + " " + name, output.got);
      continue;
    }
    check_close(label + " " + name, output.got, output.want, output.tolerance);
    if (focus.count > 0)
      check_close(part + " " + name, rows_of(output.got, s, focus, output.per_row, output.merged),
                  rows_of(output.want, s, focus, output.per_row, output.merged), output.tolerance);
  }
}

// Two heads of two sequences (merged-heads indexing); one sequence at the
// longest length keeps the double reference quick.
template <class Check>
void for_each_tested_shape(Check check) {
  for (const int d_head : {64, 80, 128})
    for (const int ctx : {1, 7, 127, 128, 129, 1000})
      check(AttentionShape{ctx >= 1000 ? 1 : 2, ctx, 2, d_head});
}

TEST_CASE("flash attention forward and backward match double causal attention") {
  for_each_tested_shape([](const AttentionShape& s) { check_attention(s); });
}

// The smaller backward tiles that cards with 99 KB of shared memory per block
// (sm_86, sm_89, sm_120) take at d_head 80 and 128, run here on any card.
TEST_CASE("flash attention's compact backward tiles match double causal attention too") {
  for (const int d_head : {80, 128})
    for (const int ctx : {7, 129, 1000})
      check_attention(AttentionShape{ctx >= 1000 ? 1 : 2, ctx, 2, d_head}, nullptr, HeadRange{},
                      FlashBackwardTiles::compact);
}

TEST_CASE("flash attention also serves d_head 96") { check_attention(AttentionShape{2, 200, 3, 96}); }

// More sequences·heads than a grid's y extent (65535): the 7 heads past it
// (14 of the 131,084 rows) run in a second z slice, whose 65,528 surplus
// blocks must write nothing. Those rows are checked on their own (within
// the norm over all rows a wrong slice would hardly show), and the guard
// past every output catches a surplus block that writes.
TEST_CASE("flash attention runs more sequences times heads than a grid row holds") {
  constexpr long long kGridY = 65535;
  const AttentionShape shape{32771, 2, 2, 64};
  check_attention(shape, nullptr,
                  HeadRange{kGridY, static_cast<long long>(shape.batch) * shape.heads - kGridY});
}

TEST_CASE("cuDNN attention forward and backward match double causal attention" *
          doctest::test_suite("cudnn")) {
  CudnnAttention cudnn;
  for_each_tested_shape([&](const AttentionShape& s) { check_attention(s, &cudnn); });
  MESSAGE("cuDNN chose " << cudnn.engine_name());
}

TEST_CASE("cuDNN attention also serves head sizes our kernels lack (d_head 16, 32, 48)" *
          doctest::test_suite("cudnn")) {
  CudnnAttention cudnn;
  for (const int d_head : {16, 32, 48})
    for (const int ctx : {7, 129}) check_attention(AttentionShape{2, ctx, 2, d_head}, &cudnn);
}

TEST_CASE("cuDNN attention refuses head sizes its engine lacks" * doctest::test_suite("cudnn")) {
  CudnnAttention cudnn;
  CHECK_THROWS_AS(cudnn.check_shape(AttentionShape{1, 16, 2, 72 + 4}), std::invalid_argument);
  CHECK_THROWS_AS(cudnn.check_shape(AttentionShape{1, 16, 2, 136}), std::invalid_argument);
  CHECK_THROWS_AS(cudnn.check_shape(AttentionShape{1, 0, 2, 64}), std::invalid_argument);
}

TEST_CASE("flash attention refuses shapes it has no kernel for") {
  CHECK_THROWS_AS(check_flash_attention_shape(AttentionShape{1, 16, 2, 72}), std::invalid_argument);
  CHECK_THROWS_AS(check_flash_attention_shape(AttentionShape{1, 0, 2, 64}), std::invalid_argument);
  CHECK_THROWS_AS(check_flash_attention_shape(AttentionShape{0, 16, 2, 64}), std::invalid_argument);
  CHECK_THROWS_AS(check_flash_attention_shape(AttentionShape{1 << 27, 16, 32, 64}),
                  std::invalid_argument);  // batch·heads past an int
  CHECK_NOTHROW(check_flash_attention_shape(AttentionShape{4, 1, 32, 80}));
}

}  // namespace
}  // namespace transformer::cuda::test
