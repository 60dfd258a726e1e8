// profile/profile_results.cpp: the small derived values of profile_results.hpp.
#include "profile/profile_results.hpp"

namespace transformer::profile {

double capture_overhead_percent(const StepTimes& off, const StepTimes& on) {
  return off.mean_ms > 0 ? 100.0 * (on.mean_ms - off.mean_ms) / off.mean_ms : 0.0;
}

const char* to_string(RunStatus status) {
  switch (status) {
    case RunStatus::ok: return "ok";
    case RunStatus::oom: return "oom";
    case RunStatus::error: return "error";
  }
  return "error";
}

std::string ConfigurationProfile::label() const {
  return size + " ctx " + std::to_string(ctx) + " " + to_string(precision) + " " + to_string(attention);
}

std::string ConfigurationProfile::slug() const {
  return size + "-ctx" + std::to_string(ctx) + "-" + to_string(precision) + "-" + to_string(attention);
}

std::string inference_kern_sum_file(const ConfigurationProfile& configuration) {
  return "kern_sum/" + configuration.slug() + "-inference-forward.csv";
}

std::string train_kern_sum_file(const ConfigurationProfile& configuration) {
  return "kern_sum/" + configuration.slug() + "-train-step.csv";
}

std::size_t residual_stream_bytes(int batch, int ctx, int d_model) {
  return static_cast<std::size_t>(batch) * static_cast<std::size_t>(ctx) * static_cast<std::size_t>(d_model) *
         sizeof(float);
}

}  // namespace transformer::profile
