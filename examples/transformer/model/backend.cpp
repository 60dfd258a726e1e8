// model/backend.cpp: the backend-independent pieces of backend.hpp (names of
// the enums, the OOM error, Backend::run, the refusal of graphs by backends
// that have none, and of data parallelism by backends without device gradients).
#include "model/backend.hpp"

#include <cstdio>

namespace transformer {
namespace {

std::string out_of_memory_message(std::size_t requested, std::size_t free_bytes) {
  constexpr double gib = 1024.0 * 1024.0 * 1024.0;
  char text[160];
  std::snprintf(text, sizeof text, "out of memory: needs %.2f GiB (%zu bytes), %.2f GiB free",
                static_cast<double>(requested) / gib, requested, static_cast<double>(free_bytes) / gib);
  return text;
}

[[noreturn]] void refuse_graphs(const Backend& backend) {
  throw std::logic_error("the " + backend.name() +
                         " backend has no CUDA graphs: graph mode needs the CUDA backend");
}

[[noreturn]] void refuse_data_parallel(const Backend& backend) {
  throw std::logic_error("the " + backend.name() +
                         " backend has no device gradients to reduce: data parallelism needs the "
                         "CUDA backend");
}

}  // namespace

const char* to_string(Precision p) {
  switch (p) {
    case Precision::fp32: return "fp32";
    case Precision::tf32: return "tf32";
    case Precision::bf16: return "bf16";
  }
  return "?";
}

const char* to_string(Mode m) {
  switch (m) {
    case Mode::fwd: return "fwd";
    case Mode::fwdbwd: return "fwdbwd";
    case Mode::step: return "step";
  }
  return "?";
}

const char* to_string(Attention a) {
  switch (a) {
    case Attention::naive: return "naive";
    case Attention::fused: return "fused";
    case Attention::cudnn: return "cudnn";
  }
  return "?";
}

std::optional<Precision> parse_precision(const std::string& s) {
  for (Precision p : {Precision::fp32, Precision::tf32, Precision::bf16})
    if (s == to_string(p)) return p;
  return std::nullopt;
}

std::optional<Mode> parse_mode(const std::string& s) {
  for (Mode m : {Mode::fwd, Mode::fwdbwd, Mode::step})
    if (s == to_string(m)) return m;
  return std::nullopt;
}

std::optional<Attention> parse_attention(const std::string& s) {
  for (Attention a : {Attention::naive, Attention::fused, Attention::cudnn})
    if (s == to_string(a)) return a;
  return std::nullopt;
}

bool fused_attention_supports(const ModelConfig& model) {
  const int d_head = model.d_head();
  return d_head == 64 || d_head == 80 || d_head == 96 || d_head == 128;
}

bool cudnn_attention_available() { return TRANSFORMER_HAVE_CUDNN != 0; }

std::string cudnn_version_text(std::size_t version) {
  const std::size_t major_unit = version >= 90000 ? 10000 : 1000;
  const std::size_t rest = version % major_unit;
  return std::to_string(version / major_unit) + "." + std::to_string(rest / 100) + "." +
         std::to_string(rest % 100);
}

bool cudnn_attention_supports(const ModelConfig& model) {
  const int d_head = model.d_head();
  return d_head > 0 && d_head % 8 == 0 && d_head <= 128;
}

Attention default_attention(Precision p, const ModelConfig& model, int ctx, bool cudnn_built) {
  if (p != Precision::bf16) return Attention::naive;
  const bool short_context = ctx <= kFusedDefaultMaxCtx && model.d_head() == 64;
  if (cudnn_built && cudnn_attention_supports(model) && !short_context) return Attention::cudnn;
  return fused_attention_supports(model) ? Attention::fused : Attention::naive;
}

OutOfMemory::OutOfMemory(std::size_t requested, std::size_t free_bytes)
    : std::runtime_error(out_of_memory_message(requested, free_bytes)),
      bytes_requested(requested),
      bytes_free(free_bytes) {}

void Backend::run(Mode mode) {
  switch (mode) {
    case Mode::fwd: forward(); return;
    case Mode::fwdbwd:
      forward();
      backward();
      return;
    case Mode::step: train_step(); return;
  }
}

void Backend::capture(const std::function<void()>&) { refuse_graphs(*this); }
void Backend::replay_graph() { refuse_graphs(*this); }
void Backend::set_gradient_ready_hook(GradientReadyHook) { refuse_data_parallel(*this); }
DeviceGradients Backend::gradient_buffer() { refuse_data_parallel(*this); }
void Backend::gradients_final_after(GradientRange, CUevent_st*) { refuse_data_parallel(*this); }

}  // namespace transformer
