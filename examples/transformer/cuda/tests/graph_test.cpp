// cuda/tests/graph_test.cpp: the whole step as one CUDA graph. Over several
// steps, each on a fresh batch set between replays, a backend replaying its
// captured graph gives bit-identical losses, logits, gradients and parameters
// to a backend running the same steps eagerly, in fp32 and bf16, for
// Mode::fwd, fwdbwd and step (with clipping, so the device-side norm and
// AdamW's device-side step count are both in the graph). Bit identity also
// says that cuBLAS chose the same kernels under capture as eagerly. Then the
// contracts: what may not happen inside a capture, and replays that may not
// follow what ran before.
#include <algorithm>
#include <cstring>
#include <memory>

#include "cuda/cudnn_attention.hpp"
#include "cuda/tests/gpu_support.hpp"

namespace transformer::cuda::test {
namespace {

RunConfig graph_run(const ModelConfig& model, Precision precision, Mode mode) {
  RunConfig config;
  config.model = model;
  config.precision = precision;
  config.mode = mode;
  config.batch = 2;
  config.ctx = 32;
  config.seed = 5;
  config.adamw.lr = 3e-3f;
  config.adamw.clip_norm = 0.5f;
  config.poison_buffers = true;  // the graph must write every element too
  return config;
}

// What one step leaves for the host to compare.
struct StepResult {
  float loss = 0;
  std::vector<float> logits;      // Mode::fwd only (backward turns them into their gradient)
  std::vector<float> gradients;   // training modes
  std::vector<float> parameters;  // after the step
};

StepResult read_back(Backend& backend, Mode mode) {
  StepResult result;
  result.loss = backend.loss();
  if (mode == Mode::fwd) result.logits = backend.logits();
  if (mode != Mode::fwd) result.gradients = backend.gradients();
  result.parameters = backend.parameters();
  return result;
}

bool same_bits(const std::vector<float>& a, const std::vector<float>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

std::size_t differing(const std::vector<float>& a, const std::vector<float>& b) {
  if (a.size() != b.size()) return std::max(a.size(), b.size());
  std::size_t count = 0;
  for (std::size_t i = 0; i < a.size(); ++i) count += std::memcmp(&a[i], &b[i], sizeof(float)) != 0;
  return count;
}

void check_same_bits(const std::string& what, const std::vector<float>& graph,
                     const std::vector<float>& eager) {
  CHECK_MESSAGE(same_bits(graph, eager), what << ": " << differing(graph, eager) << " of " << eager.size()
                                              << " floats differ, graph vs eager");
}

// The eager backend runs every step; the graph backend runs the first step
// eagerly (the bench's warm-up), captures, and replays the others, so AdamW's
// count carries over from eager steps into replays.
void check_graph_matches_eager(const ModelConfig& model, Precision precision, Mode mode) {
  const RunConfig config = graph_run(model, precision, mode);
  const std::string label = model.name + " " + to_string(precision) + " " + to_string(mode) + " run ";
  const auto eager = make_cuda_backend(config);
  const auto graphed = make_cuda_backend(config);
  const std::size_t n = static_cast<std::size_t>(config.batch) * config.ctx;
  constexpr int kSteps = 4;
  for (int step = 0; step < kSteps; ++step) {
    const auto tokens = random_ids(n, model.vocab), targets = random_ids(n, model.vocab);
    eager->set_batch(tokens, targets);
    graphed->set_batch(tokens, targets);
    eager->run(mode);
    if (step == 0) {
      graphed->run(mode);
      graphed->capture_graph(mode);
      CHECK(graphed->has_graph());
    } else {
      graphed->replay_graph();
    }
    const StepResult want = read_back(*eager, mode);
    const StepResult got = read_back(*graphed, mode);
    const std::string at = label + std::to_string(step + 1) + (step == 0 ? " (eager)" : " (replay)");
    const bool same_loss = std::memcmp(&got.loss, &want.loss, sizeof(float)) == 0;
    CHECK_MESSAGE(same_loss, at << " loss: graph " << got.loss << ", eager " << want.loss);
    check_same_bits(at + " logits", got.logits, want.logits);
    check_same_bits(at + " gradients", got.gradients, want.gradients);
    check_same_bits(at + " parameters", got.parameters, want.parameters);
    if (step > 0 && mode == Mode::step) {
      const bool identical =
          same_loss && same_bits(got.gradients, want.gradients) && same_bits(got.parameters, want.parameters);
      std::printf("  %-40s loss %.7f, %s\n", at.c_str(), got.loss,
                  identical ? "bit-identical to eager" : "DIFFERS from eager");
    }
  }
}

TEST_CASE("a replayed graph step is bit-identical to an eager step") {
  for (const ModelConfig& model : {little_config(), *named_size("tiny")})
    for (Precision precision : {Precision::fp32, Precision::bf16})
      for (Mode mode : {Mode::fwd, Mode::fwdbwd, Mode::step})
        check_graph_matches_eager(model, precision, mode);
}

// The flash backward (ours and cuDNN's) adds dQ with fp32 atomics, so two
// runs agree to rounding, not bit for bit: the bf16 layer tolerance, over
// four steps.
void check_fused_graph_tracks_eager(Attention attention) {
  for (Mode mode : {Mode::fwd, Mode::step}) {
    RunConfig config = graph_run(little_d64_config(), Precision::bf16, mode);
    config.attention = attention;
    const std::string label =
        std::string("little-d64 bf16 ") + to_string(attention) + " " + to_string(mode) + " step ";
    const auto eager = make_cuda_backend(config);
    const auto graphed = make_cuda_backend(config);
    const std::size_t n = static_cast<std::size_t>(config.batch) * config.ctx;
    for (int step = 0; step < 4; ++step) {
      const auto tokens = random_ids(n, config.model.vocab);
      const auto targets = random_ids(n, config.model.vocab);
      eager->set_batch(tokens, targets);
      graphed->set_batch(tokens, targets);
      eager->run(mode);
      if (step == 0) {
        graphed->capture_graph(mode);  // before any eager step: first launches inside a capture
        CHECK(graphed->has_graph());
      }
      graphed->replay_graph();
      const StepResult want = read_back(*eager, mode);
      const StepResult got = read_back(*graphed, mode);
      const std::string at = label + std::to_string(step + 1);
      const double tol = tolerance_for(Precision::bf16).layer;
      check_close(at + " loss", {got.loss}, {want.loss}, tol);
      if (mode == Mode::fwd)
        check_close(at + " logits", std::vector<double>(got.logits.begin(), got.logits.end()),
                    std::vector<double>(want.logits.begin(), want.logits.end()), tol);
      else
        check_close(at + " gradients", std::vector<double>(got.gradients.begin(), got.gradients.end()),
                    std::vector<double>(want.gradients.begin(), want.gradients.end()), tol);
      check_close(at + " parameters", std::vector<double>(got.parameters.begin(), got.parameters.end()),
                  std::vector<double>(want.parameters.begin(), want.parameters.end()), tol);
    }
  }
}

TEST_CASE("with fused attention, replayed graph steps track eager steps") {
  check_fused_graph_tracks_eager(Attention::fused);
}

TEST_CASE("with cuDNN attention, replayed graph steps track eager steps" * doctest::test_suite("cudnn")) {
  check_fused_graph_tracks_eager(Attention::cudnn);
}

TEST_CASE("replays keep AdamW counting: each replay is a new step t") {
  // Had the capture frozen t, every replay would repeat step 1's bias
  // correction; the eager comparison above would catch that too, this says
  // it directly: replays of one batch keep lowering the loss, by amounts
  // that follow the eager run's.
  const RunConfig config = graph_run(little_config(), Precision::fp32, Mode::step);
  const auto eager = make_cuda_backend(config);
  const auto graphed = make_cuda_backend(config);
  const std::size_t n = static_cast<std::size_t>(config.batch) * config.ctx;
  const auto tokens = random_ids(n, config.model.vocab);
  eager->set_batch(tokens, tokens);
  graphed->set_batch(tokens, tokens);
  graphed->capture_graph(Mode::step);  // before any eager step: t starts at 1 in the graph
  std::vector<float> eager_losses, graph_losses;
  for (int step = 0; step < 6; ++step) {
    eager->train_step();
    graphed->replay_graph();
    eager_losses.push_back(eager->loss());
    graph_losses.push_back(graphed->loss());
  }
  check_same_bits("losses of 6 steps", graph_losses, eager_losses);
  CHECK(graph_losses.back() < graph_losses.front());
}

TEST_CASE("graph contracts: nothing inside a capture may wait, replays follow the phase rules") {
  const RunConfig config = graph_run(little_config(), Precision::fp32, Mode::fwdbwd);
  const auto backend = make_cuda_backend(config);
  const std::size_t n = static_cast<std::size_t>(config.batch) * config.ctx;
  const auto tokens = random_ids(n, config.model.vocab);

  CHECK_THROWS_WITH_AS(backend->replay_graph(), doctest::Contains("before capture_graph"), std::logic_error);
  CHECK_THROWS_WITH_AS(backend->capture_graph(Mode::fwd), doctest::Contains("before set_batch"),
                       std::logic_error);
  backend->set_batch(tokens, tokens);
  // A read-back inside the capture is refused, the capture abandoned, and
  // the stream left usable.
  CHECK_THROWS_WITH_AS(backend->capture_graph([&] {
    backend->forward();
    (void)backend->loss();
  }),
                       doctest::Contains("inside capture_graph"), std::logic_error);
  CHECK_THROWS_WITH_AS(backend->capture_graph([&] { backend->set_batch(tokens, tokens); }),
                       doctest::Contains("inside capture_graph"), std::logic_error);
  CHECK_THROWS_WITH_AS(backend->capture_graph([] {}), doctest::Contains("nothing captured"),
                       std::logic_error);
  CHECK_THROWS_AS(backend->capture_graph(Mode::step), std::logic_error);  // no AdamW state
  CHECK_FALSE(backend->has_graph());
  backend->forward();
  CHECK(std::isfinite(backend->loss()));

  // A graph of backward() alone may only replay after a forward pass.
  backend->capture_graph([&] { backend->backward(); });
  backend->replay_graph();
  CHECK_THROWS_WITH_AS(backend->replay_graph(), doctest::Contains("backward() twice"), std::logic_error);
  CHECK_THROWS_AS(backend->logits(), std::logic_error);  // the replay made them a gradient
  backend->forward();
  CHECK_NOTHROW(backend->logits());
  backend->replay_graph();
  CHECK(backend->gradients().size() == ParameterLayout(config.model).total);

  // A new capture replaces the graph; a fwd graph leaves the logits readable.
  backend->capture_graph(Mode::fwd);
  backend->replay_graph();
  const float loss = backend->loss();
  backend->forward();
  CHECK(backend->loss() == loss);
  CHECK(backend->logits().size() == n * static_cast<std::size_t>(config.model.vocab));
}

}  // namespace
}  // namespace transformer::cuda::test
