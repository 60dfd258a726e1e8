// transformer_ddp_gpu_tests --world N: data-parallel training is correct.
//
// N ranks (forked by the launcher, one per GPU) train the tiny model for a
// few steps on their own batches; then, in this process, one GPU trains the
// same model on the ranks' batches stacked (ddp/batches.hpp). Checked, in
// fp32 and bf16: after the first backward the averaged gradients equal the
// single run's (AdamW divides out a gradient's scale, so only the gradients
// show a missing average); after every step all ranks hold bit-identical
// parameters, whose change from the initial ones equals the single run's
// within tolerance; and the buckets reduced are those buckets.hpp plans for
// the backend's announced ranges. World 1 runs NCCL with one rank against a
// plain backend. Exit 77 (skipped) where no GPU can exist
// (support/gpu_probe.hpp) or with fewer than N GPUs; any other error fails.
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <stdexcept>
#include <string>
#include <vector>

#include <cuda_runtime_api.h>

#include "common/cuda_check.hpp"
#include "ddp/batches.hpp"
#include "ddp/buckets.hpp"
#include "ddp/communicator.hpp"
#include "ddp/launcher.hpp"
#include "ddp/rank_run.hpp"
#include "ddp/trainer.hpp"
#include "support/gpu_probe.hpp"
#include "support/temporary_directory.hpp"

namespace {

using namespace transformer;
using namespace transformer::ddp;

constexpr int kSteps = 3;
constexpr std::size_t kBucketCap = 64 * 1024;  // elements: several buckets for the tiny model

struct Tolerance {
  double gradients, updates;  // relative L2 errors
};

RunConfig per_rank_config(Precision precision) {
  RunConfig config;
  config.model = *named_size("tiny");
  config.precision = precision;
  config.mode = Mode::step;
  // tiny's d_head 16 has no kernel of ours: naive attention, deterministic
  // (no atomics), so the ranks' comparison sees only the reduction's rounding.
  config.batch = 2;
  config.ctx = 64;
  config.attention = default_attention(precision, config.model, config.ctx, /*cudnn_built=*/false);
  config.seed = 7;
  return config;
}

void save(const std::string& path, const std::vector<float>& values) {
  std::ofstream out(path, std::ios::binary);
  out.write(reinterpret_cast<const char*>(values.data()),
            static_cast<std::streamsize>(values.size() * sizeof(float)));
  if (!out.flush()) throw std::runtime_error("cannot write " + path);
}

std::vector<float> load(const std::string& path, std::size_t count) {
  std::vector<float> values(count);
  std::ifstream in(path, std::ios::binary);
  in.read(reinterpret_cast<char*>(values.data()), static_cast<std::streamsize>(count * sizeof(float)));
  if (!in) throw std::runtime_error("cannot read " + path);
  return values;
}

// ‖a − b‖ / ‖b‖ (b − base and a − base when a base is given).
double relative_error(const std::vector<float>& a, const std::vector<float>& b,
                      const std::vector<float>* base = nullptr) {
  double diff = 0, norm = 0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    const double origin = base ? (*base)[i] : 0.0;
    diff += (static_cast<double>(a[i]) - b[i]) * (static_cast<double>(a[i]) - b[i]);
    norm += (b[i] - origin) * (b[i] - origin);
  }
  return norm > 0 ? std::sqrt(diff / norm) : std::sqrt(diff);
}

// One rank: gradients after the first backward, parameters after kSteps.
int rank_main(const RunConfig& config, int rank, int world, IdChannel& ids,
              const gpuprof_test::TemporaryDirectory& dir) {
  GPUPROF_CUDA_CHECK(cudaSetDevice(rank));
  const std::unique_ptr<Backend> backend = make_cuda_backend(config);
  Communicator comm(ids, rank, world);
  const harness::TokenBatch batch = rank_batch(config, rank);
  backend->set_batch(batch.tokens, batch.targets);
  {
    DataParallelTrainer trainer(*backend, comm, kBucketCap);
    trainer.forward_backward();
    const std::vector<GradientRange> planned =
        plan_buckets(backward_gradient_ranges(config.model, backend->gradient_buffer().count),
                     backend->gradient_buffer().count, kBucketCap);
    const std::vector<GradientRange>& reduced = trainer.last_buckets();
    bool same = planned.size() == reduced.size() && planned.size() > 1;
    for (std::size_t i = 0; same && i < planned.size(); ++i)
      same = planned[i].begin == reduced[i].begin && planned[i].end == reduced[i].end;
    if (!same) {
      std::fprintf(stderr, "rank %d: reduced %zu bucket(s), planned %zu (want > 1, equal)\n", rank,
                   reduced.size(), planned.size());
      return 1;
    }
    save(dir.file("grads." + std::to_string(rank)), backend->gradients());
    backend->optimizer_step();
    for (int step = 1; step < kSteps; ++step) trainer.step();
    save(dir.file("params." + std::to_string(rank)), backend->parameters());
  }
  comm.finalize();
  return 0;
}

// The ranks' run of `config`, its files left in `dir`.
bool run_ranks(const RunConfig& config, int world, const gpuprof_test::TemporaryDirectory& dir) {
  LaunchOptions launch;
  launch.world = world;
  launch.timeout = std::chrono::minutes(3);
  return launch_forked(
             launch, [&](int rank, IdChannel& ids) { return rank_main(config, rank, world, ids, dir); }) == 0;
}

// The single GPU's run against the ranks' files.
bool compare(const RunConfig& config, int world, const gpuprof_test::TemporaryDirectory& dir,
             Tolerance tolerance) {
  const Precision precision = config.precision;
  RunConfig global = config;
  global.batch = config.batch * world;
  const std::unique_ptr<Backend> single = make_cuda_backend(global);
  const std::vector<float> initial = single->parameters();
  const harness::TokenBatch batch = global_batch(config, world);
  single->set_batch(batch.tokens, batch.targets);
  // The ranges the backend announces are those backward_gradient_ranges()
  // (and so the bucket plans) assume.
  std::vector<GradientRange> announced;
  single->set_gradient_ready_hook([&announced](GradientRange range) { announced.push_back(range); });
  single->forward();
  single->backward();
  single->set_gradient_ready_hook({});
  const std::size_t padded = single->gradient_buffer().count;
  const std::vector<GradientRange> expected = backward_gradient_ranges(config.model, padded);
  bool ranges_ok = announced.size() == expected.size();
  for (std::size_t i = 0; ranges_ok && i < announced.size(); ++i)
    ranges_ok = announced[i].begin == expected[i].begin && announced[i].end == expected[i].end;
  std::printf("%s %s: the backend announced %zu gradient range(s), %zu expected\n",
              ranges_ok ? "ok  " : "FAIL", to_string(precision), announced.size(), expected.size());
  const std::vector<float> grads = single->gradients();
  single->optimizer_step();
  for (int step = 1; step < kSteps; ++step) single->train_step();
  const std::vector<float> params = single->parameters();

  bool ok = ranges_ok;
  const std::vector<float> rank0 = load(dir.file("params.0"), params.size());
  for (int rank = 0; rank < world; ++rank) {
    const std::vector<float> mine = load(dir.file("params." + std::to_string(rank)), params.size());
    if (std::memcmp(mine.data(), rank0.data(), mine.size() * sizeof(float)) != 0) {
      std::printf("FAIL %s world %d: rank %d's parameters differ from rank 0's\n", to_string(precision),
                  world, rank);
      ok = false;
    }
    const double grad_error =
        relative_error(load(dir.file("grads." + std::to_string(rank)), grads.size()), grads);
    const double update_error = relative_error(mine, params, &initial);
    const bool good = grad_error <= tolerance.gradients && update_error <= tolerance.updates;
    std::printf(
        "%s %s world %d rank %d: gradient error %.3g (<= %.3g), update error after %d "
        "steps %.3g (<= %.3g)\n",
        good ? "ok  " : "FAIL", to_string(precision), world, rank, grad_error, tolerance.gradients, kSteps,
        update_error, tolerance.updates);
    ok = ok && good;
  }
  return ok;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3 || std::string(argv[1]) != "--world") {
    std::fprintf(stderr, "usage: transformer_ddp_gpu_tests --world N\n");
    return 2;
  }
  const int world = std::atoi(argv[2]);
  if (world < 1) {
    std::fprintf(stderr, "--world '%s': must be a whole number >= 1\n", argv[2]);
    return 2;
  }
  // Asked in a child: this process must not start CUDA before it forks. A
  // failure to ask (the child crashed, say) is an error, never a skip.
  try {
    const std::string answer = run_in_child([] {
      const gpuprof_test::GpuProbe probe = gpuprof_test::probe_gpu();
      if (probe.verdict != gpuprof_test::GpuProbe::usable)
        return std::string(probe.verdict == gpuprof_test::GpuProbe::absent ? "absent:" : "broken:") +
               probe.reason;
      std::string why_not;
      return cuda_backend_available(&why_not) ? std::string() : "backend:" + why_not;
    });
    if (answer.rfind("backend:", 0) == 0) {
      std::fprintf(stderr, "FAILED: a GPU is present but the CUDA backend cannot use it: %s\n",
                   answer.c_str() + 8);
      return 1;
    }
    if (!answer.empty()) {
      const bool absent = answer.rfind("absent:", 0) == 0;
      return gpuprof_test::gpu_test_gate(
          {absent ? gpuprof_test::GpuProbe::absent : gpuprof_test::GpuProbe::broken,
           answer.substr(answer.find(':') + 1)});
    }
    // The one documented skip on a GPU machine: a world larger than its GPUs.
    const int visible = visible_gpus();
    if (visible < world) {
      std::printf("SKIPPED: world %d needs %d GPUs, %d visible\n", world, world, visible);
      return gpuprof_test::kSkipExitCode;
    }
  } catch (const std::exception& error) {
    std::fprintf(stderr, "error: cannot tell whether a GPU is usable: %s\n", error.what());
    return 1;
  }
  try {
    // Every fork before this process starts CUDA (for the single-GPU runs):
    // a child of a process that initialised CUDA cannot use it.
    const RunConfig fp32 = per_rank_config(Precision::fp32), bf16 = per_rank_config(Precision::bf16);
    const gpuprof_test::TemporaryDirectory fp32_dir, bf16_dir;
    if (!run_ranks(fp32, world, fp32_dir) || !run_ranks(bf16, world, bf16_dir)) return 1;
    // fp32: the same arithmetic up to summation order; bf16: bf16 activations
    // of a differently shaped batch round differently.
    const bool fp32_ok = compare(fp32, world, fp32_dir, {1e-4, 1e-3});
    const bool bf16_ok = compare(bf16, world, bf16_dir, {5e-2, 0.25});
    return fp32_ok && bf16_ok ? 0 : 1;
  } catch (const std::exception& error) {
    std::fprintf(stderr, "error: %s\n", error.what());
    return 1;
  }
}
