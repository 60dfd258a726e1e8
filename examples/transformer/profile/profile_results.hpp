// profile/profile_results.hpp: everything transformer_profile measured, the
// one input of its markdown and JSON renderings.
#pragma once
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "model/backend.hpp"
#include "profile/questions.hpp"

namespace transformer::profile {

// Mean and spread of the timed steps of one run (bench's protocol).
struct StepTimes {
  double mean_ms = 0;
  double std_ms = 0;
  std::size_t steps = 0;
  std::string clock;  // "cuda_events" or "host_clock"
};

// (on - off) / off in percent: how much slower kernel capture makes a step.
double capture_overhead_percent(const StepTimes& off, const StepTimes& on);

enum class RunStatus { ok, oom, error };
const char* to_string(RunStatus status);

// One size x ctx x precision x attention.
struct ConfigurationProfile {
  std::string size;
  int ctx = 0;
  Precision precision = Precision::bf16;
  Attention attention = Attention::naive;
  RunStatus status = RunStatus::ok;
  std::string note;                           // why it failed (error)
  std::optional<Mode> oom_mode;               // the mode whose backend did not fit
  std::optional<std::size_t> bytes_needed;    // what that backend needed
  StepTimes plain_forward, plain_step;        // capture off
  StepTimes captured_forward, captured_step;  // capture on (these runs are analysed)
  std::optional<ProfileAnswers> answers;

  std::string label() const;  // "small ctx 128 bf16 fused"
  std::string slug() const;   // "small-ctx128-bf16-fused", for file names
};

// The kern_sum CSVs written per configuration: the inference run's forward
// pass, and the train run's whole step (forward, backward, optimizer).
std::string inference_kern_sum_file(const ConfigurationProfile& configuration);
std::string train_kern_sum_file(const ConfigurationProfile& configuration);

// Bytes of one fp32 residual-stream tensor, [batch, ctx, d_model].
std::size_t residual_stream_bytes(int batch, int ctx, int d_model);

struct MemoryRow {
  int ctx = 0;
  Mode mode = Mode::fwd;
  Precision precision = Precision::fp32;
  Attention attention = Attention::naive;
  RunStatus status = RunStatus::ok;
  std::string note;
  std::optional<std::int64_t> peak_bytes;      // device memory in use at the peak, minus before the backend
  std::optional<std::size_t> allocated_bytes;  // Backend::allocated_bytes()
  std::optional<std::size_t> bytes_needed;     // oom rows
  std::size_t residual_stream_bytes = 0;
};

struct MemoryTable {
  std::string model;  // "2.7B"
  int d_model = 0;
  int batch = 0;
  std::vector<MemoryRow> rows;
};

struct ProfileResults {
  std::string device;
  std::optional<std::string> cudnn;  // the cuDNN loaded at run time ("9.14.0")
  int batch = 0, warmup = 0, steps = 0;
  bool graph = false;  // --graph: the profiled steps were replays of one CUDA graph
  std::uint64_t seed = 0;
  std::vector<std::string> notes;  // caveats that apply to the whole run
  std::vector<ConfigurationProfile> configurations;
  std::optional<MemoryTable> memory;
};

}  // namespace transformer::profile
