// cpu/cpu_backend.cpp: make_cpu_backend, the Backend over CpuModel<float>:
// the fallback when there is no GPU (and a host-side check of the driver).
#include <limits>
#include <unistd.h>

#include <fstream>
#include <sstream>
#include <stdexcept>

#include "cpu/checks.hpp"
#include "cpu/model.hpp"
#include "model/backend.hpp"

namespace transformer {
namespace {

// Bytes the kernel says can be allocated without swapping (MemAvailable),
// falling back to free pages where /proc is not readable.
std::size_t available_host_bytes() {
  std::ifstream meminfo("/proc/meminfo");
  std::string line;
  while (std::getline(meminfo, line)) {
    std::istringstream fields(line);
    std::string key;
    std::size_t kib = 0;
    if (fields >> key >> kib && key == "MemAvailable:") return kib * 1024;
  }
  const long pages = sysconf(_SC_AVPHYS_PAGES), page_size = sysconf(_SC_PAGESIZE);
  return pages > 0 && page_size > 0 ? static_cast<std::size_t>(pages) * static_cast<std::size_t>(page_size)
                                    : 0;
}

bool wants_training_state(Mode mode) { return mode != Mode::fwd; }

// Everything the constructor must reject before allocating.
const RunConfig& checked(const RunConfig& config) {
  if (config.precision != Precision::fp32)
    throw std::invalid_argument(std::string("cpu backend: precision ") + to_string(config.precision) +
                                " is not supported (the CPU computes in fp32 only)");
  if (config.attention != Attention::naive)
    throw std::invalid_argument(std::string("cpu backend: attention ") + to_string(config.attention) +
                                " is not supported (the CPU has the naive attention only)");
  if (config.batch <= 0 || config.ctx <= 0)
    throw std::invalid_argument("cpu backend: batch and ctx must be > 0");
  config.model.validate();
  // The model's buffers, plus the batch's token and target ids set_batch keeps.
  // Added up in long double and capped (as required_bytes does): never wraps.
  const long double ids = static_cast<long double>(config.batch) * config.ctx;
  const long double wide = static_cast<long double>(cpu::CpuModel<float>::required_bytes(
                               config.model, config.batch, config.ctx, wants_training_state(config.mode))) +
                           2 * ids * sizeof(std::int32_t);
  const std::size_t most = std::numeric_limits<std::size_t>::max();
  const std::size_t needed = wide >= static_cast<long double>(most) ? most : static_cast<std::size_t>(wide);
  const std::size_t available = available_host_bytes();
  if (needed > available) throw OutOfMemory(needed, available);
  return config;
}

class CpuBackend final : public Backend {
 public:
  explicit CpuBackend(const RunConfig& config)
      : config_(checked(config)),
        model_(config_.model, config_.batch, config_.ctx, wants_training_state(config_.mode)) {
    model_.init_parameters(config_.seed);
  }

  std::string name() const override { return "cpu"; }
  const RunConfig& config() const override { return config_; }

  std::vector<float> parameters() override { return to_std(model_.parameters()); }
  void set_parameters(const std::vector<float>& values) override { model_.set_parameters(values); }

  void set_batch(const std::vector<std::int32_t>& tokens, const std::vector<std::int32_t>& targets) override {
    const Eigen::Index n = static_cast<Eigen::Index>(config_.batch) * config_.ctx;
    cpu::require_ids("cpu backend set_batch (tokens)", tokens, n, config_.model.vocab);
    cpu::require_ids("cpu backend set_batch (targets)", targets, n, config_.model.vocab);
    tokens_ = tokens;
    targets_ = targets;
  }

  void forward() override {
    if (tokens_.empty()) throw std::logic_error("cpu backend: forward before set_batch");
    if (config_.poison_buffers) model_.poison_buffers();
    model_.forward(tokens_, targets_);
  }
  void backward() override { model_.backward(); }
  void optimizer_step() override { model_.optimizer_step(config_.adamw); }
  void synchronize() override {}  // every call above has finished when it returns

  float loss() override { return model_.loss(); }
  std::vector<float> logits() override {
    const cpu::Matrix<float>& logits = model_.logits();
    return std::vector<float>(logits.data(), logits.data() + logits.size());
  }
  std::vector<float> gradients() override {
    if (!wants_training_state(config_.mode))
      throw std::logic_error("cpu backend: mode fwd keeps no gradients");
    return to_std(model_.gradients());
  }

  std::size_t allocated_bytes() const override { return model_.allocated_bytes(); }

 private:
  static std::vector<float> to_std(const cpu::Vector<float>& v) {
    return std::vector<float>(v.data(), v.data() + v.size());
  }

  RunConfig config_;
  cpu::CpuModel<float> model_;
  std::vector<std::int32_t> tokens_, targets_;
};

}  // namespace

std::unique_ptr<Backend> make_cpu_backend(const RunConfig& config) {
  return std::make_unique<CpuBackend>(config);
}

}  // namespace transformer
