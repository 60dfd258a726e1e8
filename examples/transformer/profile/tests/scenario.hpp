// profile/tests/scenario.hpp: one configuration's two captured runs, built
// with SyntheticRun. Per timed forward pass (ns):
//   attention scores gemm 300 | softmax 200 | final matmul gemm 100 x 2
//   ffn gemm 1000 | silu 50 (elementwise) | rmsnorm 5 (norm) | memset 10 (memory)
// kernels 1755, all activities 1765. Per timed backward: gemm 3000, softmax
// backward 400; optimizer step: adamw 500 (elementwise). Warm-up steps run a
// 1 ms kernel that must never show up in an answer.
#pragma once
#include <string>

#include "profile/questions.hpp"
#include "profile/tests/synthetic_run.hpp"

namespace transformer::profile::testing {

inline constexpr const char* inference_root = "tiny ctx 8 fwd bf16";
inline constexpr const char* train_root = "tiny ctx 8 step bf16";
inline constexpr int timed_steps = 2;
inline constexpr double forward_event_ms[timed_steps] = {0.002, 0.004};

inline void forward_pass(SyntheticRun& run) {
  run.open("attention");
  run.open("scaled dot product attention");
  run.open(scores_scope);
  run.kernel("scores_gemm", "gemm", 300);
  run.close();
  run.open(softmax_scope);
  run.kernel("softmax_forward", "softmax", 200);
  run.close();
  run.open(final_matmul_scope);
  run.kernel("pv_gemm", "gemm", 100);
  run.kernel("pv_gemm", "gemm", 100);
  run.close();
  run.close();
  run.close();
  run.open("ffn");
  run.kernel("ffn_gemm", "gemm", 1000);
  run.kernel("silu", "elementwise", 50);
  run.close();
  run.open("rmsnorm");
  run.kernel("rmsnorm", "norm", 5);
  run.kernel("[CUDA memset]", "memory", 10, gpuprof::ActivityKind::memset);
  run.close();
}

// `backward_gemm`: the backward pass's GEMM kernel ("ffn_gemm" makes it the
// forward's top kernel too).
inline void step(SyntheticRun& run, bool train, double event_ms, const std::string& backward_gemm) {
  run.open(forward_scope);
  forward_pass(run);
  run.close(event_ms);
  if (!train) return;
  run.open(backward_scope);
  run.kernel(backward_gemm, "gemm", 3000);
  run.kernel("softmax_backward", "softmax", 400);
  run.close();
  run.open(optimizer_scope);
  run.kernel("adamw", "elementwise", 500);
  run.close();
}

inline gpuprof::Report captured_run(bool train, const std::string& backward_gemm = "backward_gemm") {
  SyntheticRun run(train ? train_root : inference_root);
  run.open("warmup");
  run.open(forward_scope);
  run.kernel("ffn_gemm", "gemm", 1000000);
  run.close(1.0);
  if (train) {
    run.open(backward_scope);
    run.kernel(backward_gemm, "gemm", 1000000);
    run.close();
  }
  run.close();
  for (const double event_ms : forward_event_ms) step(run, train, event_ms, backward_gemm);
  return run.report();
}

inline AttentionFlops scenario_flops() {
  AttentionFlops flops;
  flops.scores_matmul = 4e9;
  flops.final_matmul = 4e9;
  flops.softmax = 1e8;
  return flops;
}

inline ProfileAnswers scenario_answers(const std::string& backward_gemm = "backward_gemm") {
  return answer_questions(captured_run(false), inference_root, captured_run(true, backward_gemm), train_root,
                          scenario_flops());
}

}  // namespace transformer::profile::testing
