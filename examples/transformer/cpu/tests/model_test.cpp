// cpu/tests/model_test.cpp: the whole CPU model (double) against finite
// differences, causal masking, training on a fixed batch, and the float
// backend (make_cpu_backend) against the double model.
#include <cmath>
#include <limits>

#include "cpu/model.hpp"
#include "cpu/tests/check_support.hpp"
#include "model/backend.hpp"

namespace transformer::cpu::test {
namespace {

// Small enough that hundreds of forward passes take milliseconds, yet with
// every structural feature: 2 heads, 2 layers, d_ff ≠ d.
ModelConfig little_config() {
  ModelConfig config;
  config.name = "little";
  config.vocab = 37;
  config.d_model = 16;
  config.heads = 2;
  config.d_ff = 24;
  config.layers = 2;
  return config;
}
constexpr int little_batch = 2, little_ctx = 5;

// Random parameters with gains away from 1, so gain gradients are exercised too.
void randomise(CpuModel<double>& model, std::uint64_t seed) {
  model.init_parameters(seed);
  for (const ParamTensor& tensor : model.layout().tensors)
    if (tensor.kind == ParamKind::norm_gain)
      model.parameters().segment(static_cast<Eigen::Index>(tensor.offset), tensor.cols) =
          random_vector(tensor.cols, 1.0, 0.3);
}

TEST_CASE("model loss and gradients match finite differences on every tensor") {
  CpuModel<double> model(little_config(), little_batch, little_ctx);
  randomise(model, 7);
  const auto tokens = random_ids(little_batch * little_ctx, 37);
  const auto targets = random_ids(little_batch * little_ctx, 37);
  model.forward(tokens, targets);
  const Vector<double> grads = model.backward();
  auto loss = [&] { return model.forward(tokens, targets); };
  // 32 random elements of every tensor (all of a gain): ~550 of the 5.6k
  // parameters. The layer tests check every element of each layer; checking
  // every parameter here too takes ~1 minute under the sanitizers.
  for (const ParamTensor& tensor : model.layout().tensors) {
    const auto offset = static_cast<Eigen::Index>(tensor.offset);
    const auto size = static_cast<Eigen::Index>(tensor.size());
    // A tensor whose gradient is all zero would pass vacuously.
    CHECK_MESSAGE(grads.segment(offset, size).cwiseAbs().maxCoeff() > 1e-6, tensor.name);
    check_sampled_elements(tensor.name, loss, model.parameters().data() + offset, grads.data() + offset, size,
                           32);
  }
}

TEST_CASE("changing a future token leaves earlier logits unchanged") {
  CpuModel<double> model(little_config(), little_batch, little_ctx);
  model.init_parameters(3);
  auto tokens = random_ids(little_batch * little_ctx, 37);
  const auto targets = random_ids(little_batch * little_ctx, 37);
  model.forward(tokens, targets);
  const Matrix<double> before = model.logits();
  const int changed = 3;  // position 3 of sequence 0
  tokens[changed] = (tokens[changed] + 1) % 37;
  model.forward(tokens, targets);
  const Matrix<double>& after = model.logits();
  // Positions before it see exactly the same numbers: the masked scores
  // contribute exact zeros, so not even rounding may differ.
  CHECK(after.topRows(changed) == before.topRows(changed));
  CHECK(after.bottomRows(little_ctx) == before.bottomRows(little_ctx));  // the other sequence
  // ... and the change does reach its own and later positions (the test is not vacuous).
  for (int pos = changed; pos < little_ctx; ++pos)
    CHECK((after.row(pos) - before.row(pos)).cwiseAbs().maxCoeff() > 1e-6);
}

TEST_CASE("a few AdamW steps on a fixed batch reduce the loss") {
  CpuModel<double> model(little_config(), little_batch, little_ctx);
  model.init_parameters(11);
  const auto tokens = random_ids(little_batch * little_ctx, 37);
  const auto targets = random_ids(little_batch * little_ctx, 37);
  AdamWConfig adamw;
  adamw.lr = 1e-2f;
  const double initial = model.forward(tokens, targets);
  double previous = initial;
  int decreases = 0;
  for (int step = 0; step < 20; ++step) {
    model.backward();
    model.optimizer_step(adamw);
    const double loss = model.forward(tokens, targets);
    decreases += loss < previous;
    previous = loss;
  }
  INFO("loss " << initial << " -> " << previous);
  // Ten targets to memorise with ~5k parameters: 20 steps at lr 1e-2 fit most of them.
  CHECK(previous < 0.5 * initial);
  CHECK(decreases >= 15);
  CHECK(model.optimizer_state().step == 20);
}

TEST_CASE("model rejects bad batches and misuse with clear errors") {
  CpuModel<double> model(little_config(), little_batch, little_ctx);
  const auto ids = random_ids(little_batch * little_ctx, 37);
  CHECK_THROWS_AS(model.backward(), std::logic_error);
  CHECK_THROWS_AS(model.forward(random_ids(3, 37), ids), std::invalid_argument);
  auto bad = ids;
  bad[4] = 37;
  CHECK_THROWS_WITH_AS(model.forward(bad, ids), doctest::Contains("outside [0, 37)"), std::invalid_argument);
  CHECK_THROWS_AS(model.set_parameters(std::vector<double>(5)), std::invalid_argument);
  CpuModel<double> inference(little_config(), little_batch, little_ctx, false);
  inference.forward(ids, ids);
  CHECK_THROWS_AS(inference.backward(), std::logic_error);
  CHECK_THROWS_AS(CpuModel<double>(little_config(), 0, 4), std::invalid_argument);
}

TEST_CASE("allocated bytes equal the up-front estimate, before and after a step") {
  for (bool training : {false, true}) {
    CpuModel<float> model(little_config(), little_batch, little_ctx, training);
    const std::size_t estimate =
        CpuModel<float>::required_bytes(little_config(), little_batch, little_ctx, training);
    CHECK(model.allocated_bytes() == estimate);
    const auto ids = random_ids(little_batch * little_ctx, 37);
    model.forward(ids, ids);
    if (training) {
      model.backward();
      model.optimizer_step(AdamWConfig{});
    }
    CHECK(model.allocated_bytes() == estimate);
  }
}

RunConfig little_run(Mode mode) {
  RunConfig run;
  run.model = little_config();
  run.mode = mode;
  run.batch = little_batch;
  run.ctx = little_ctx;
  run.seed = 5;
  return run;
}

TEST_CASE("the up-front estimate of a huge batch and context saturates instead of wrapping") {
  const std::size_t most = std::numeric_limits<std::size_t>::max();
  CHECK(CpuModel<float>::required_bytes(little_config(), 2000000000, 2000000000, true) == most);
  CHECK(CpuModel<float>::required_bytes(little_config(), 1 << 24, 1 << 24, false) == most);
}

TEST_CASE("float CPU backend agrees with the double model") {
  RunConfig run = little_run(Mode::step);
  run.poison_buffers = true;  // every value read must have been written this step
  auto backend = make_cpu_backend(run);
  CHECK(backend->name() == "cpu");
  CpuModel<double> reference(run.model, run.batch, run.ctx);
  reference.init_parameters(run.seed);
  const std::vector<float> params = backend->parameters();
  CHECK(
      relative_error(Eigen::Map<const Vector<float>>(params.data(), static_cast<Eigen::Index>(params.size()))
                         .cast<double>(),
                     reference.parameters()) == 0.0);

  const auto tokens = random_ids(little_batch * little_ctx, 37);
  const auto targets = random_ids(little_batch * little_ctx, 37);
  backend->set_batch(tokens, targets);
  backend->run(Mode::fwdbwd);
  backend->synchronize();
  const double loss = reference.forward(tokens, targets);
  const Vector<double>& grads = reference.backward();
  CHECK(backend->loss() == doctest::Approx(loss).epsilon(1e-5));
  const std::vector<float> logits = backend->logits();
  const std::vector<float> float_grads = backend->gradients();
  // float rounding through two layers: ~1e-6 relative per op, 1e-4 leaves room.
  CHECK(relative_error(Eigen::Map<const Matrix<float>>(logits.data(), reference.logits().rows(),
                                                       reference.logits().cols())
                           .cast<double>(),
                       reference.logits()) < 1e-4);
  CHECK(relative_error(Eigen::Map<const Vector<float>>(float_grads.data(), grads.size()).cast<double>(),
                       grads) < 1e-4);

  backend->optimizer_step();
  reference.optimizer_step(run.adamw);
  const std::vector<float> stepped = backend->parameters();
  CHECK(relative_error(
            Eigen::Map<const Vector<float>>(stepped.data(), static_cast<Eigen::Index>(stepped.size()))
                .cast<double>(),
            reference.parameters()) < 1e-5);
}

TEST_CASE("CPU backend rejects what it cannot do") {
  RunConfig bf16 = little_run(Mode::step);
  bf16.precision = Precision::bf16;
  CHECK_THROWS_WITH_AS(make_cpu_backend(bf16), doctest::Contains("bf16"), std::invalid_argument);

  auto inference = make_cpu_backend(little_run(Mode::fwd));
  const auto ids = random_ids(little_batch * little_ctx, 37);
  CHECK_THROWS_AS(inference->forward(), std::logic_error);  // no batch yet
  CHECK_THROWS_AS(inference->set_batch(ids, random_ids(3, 37)), std::invalid_argument);
  inference->set_batch(ids, ids);
  inference->run(Mode::fwd);
  CHECK(std::isfinite(inference->loss()));
  CHECK_THROWS_AS(inference->backward(), std::logic_error);
  CHECK_THROWS_AS(inference->gradients(), std::logic_error);
  CHECK_THROWS_WITH_AS(inference->capture_graph(Mode::fwd),
                       doctest::Contains("cpu backend has no CUDA graphs"), std::logic_error);
  CHECK_THROWS_WITH_AS(inference->replay_graph(), doctest::Contains("needs the CUDA backend"),
                       std::logic_error);
  CHECK_FALSE(inference->has_graph());
  CHECK_THROWS_WITH_AS(inference->set_gradient_ready_hook([](GradientRange) {}),
                       doctest::Contains("data parallelism needs the CUDA backend"), std::logic_error);
  CHECK_THROWS_AS(inference->gradient_buffer(), std::logic_error);

  // Far beyond any host's memory: reported as OutOfMemory, not a crash.
  RunConfig huge = little_run(Mode::step);
  huge.model = *named_size("xl");
  huge.batch = 64;
  huge.ctx = 4096;
  try {
    make_cpu_backend(huge);
    FAIL("expected OutOfMemory");
  } catch (const OutOfMemory& oom) {
    CHECK(oom.bytes_requested > oom.bytes_free);
    CHECK(std::string(oom.what()).find("GiB") != std::string::npos);
  }
}

}  // namespace
}  // namespace transformer::cpu::test
