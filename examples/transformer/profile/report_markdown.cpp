// profile/report_markdown.cpp: the markdown report. Tables go through
// gpuprof::Table::markdown, which escapes the '|' in C++ kernel names.
#include "profile/report_markdown.hpp"

#include <cstdio>
#include <sstream>

#include <gpuprof/table.hpp>

#include "harness/cells.hpp"
#include "harness/output.hpp"

namespace transformer::profile {
namespace {

using harness::fixed;

constexpr double bytes_per_gib = 1024.0 * 1024.0 * 1024.0;
constexpr double bytes_per_mib = 1024.0 * 1024.0;

std::string signed_percent(double percent) {
  char text[32];
  std::snprintf(text, sizeof text, "%+.1f%%", percent);
  return text;
}

std::string code(const std::string& text) { return "`" + text + "`"; }

std::string oom_text(std::size_t bytes_needed) {
  return "OOM (needs " + fixed(static_cast<double>(bytes_needed) / bytes_per_gib, 2) + " GiB)";
}

// Why a configuration has no answers, in a few words.
std::string failure_text(const ConfigurationProfile& c) {
  if (c.status == RunStatus::oom)
    return oom_text(c.bytes_needed.value_or(0)) + " in mode " + to_string(c.oom_mode.value_or(Mode::step));
  return "failed: " + c.note;
}

gpuprof::Table table(const std::vector<std::string>& headers, const std::vector<bool>& numeric) {
  gpuprof::Table t;
  for (std::size_t c = 0; c < headers.size(); ++c)
    t.add_column({headers[c], numeric[c] ? gpuprof::Align::right : gpuprof::Align::left});
  return t;
}

std::string times_text(const StepTimes& times) {
  return fixed(times.mean_ms, 3) + " ± " + fixed(times.std_ms, 3) + " (n=" + std::to_string(times.steps) +
         ", " + times.clock + ")";
}

void summary(std::ostream& out, const ProfileResults& results) {
  gpuprof::Table timing = table(
      {"configuration", "plain forward (ms)", "forward, CUDA events (ms)", "forward, kernel sum (ms)",
       "forward, GPU projection (ms)", "capture overhead, forward (%)", "capture overhead, train step (%)"},
      {false, true, true, true, true, true, true});
  gpuprof::Table top = table({"configuration", "top forward kernel", "category", "% of forward",
                              "per forward", "top forward+backward kernel", "per train step", "same?"},
                             {false, false, false, true, true, false, true, false});
  gpuprof::Table gemm =
      table({"configuration", "GEMM % inference", "GEMM % train step"}, {false, true, true});
  for (const ConfigurationProfile& c : results.configurations) {
    if (!c.answers) {
      const std::string why = failure_text(c);
      timing.add_row({c.label(), why, "", "", "", "", ""});
      top.add_row({c.label(), why, "", "", "", "", "", ""});
      gemm.add_row({c.label(), why, ""});
      continue;
    }
    const ProfileAnswers& a = *c.answers;
    timing.add_row({c.label(), fixed(c.plain_forward.mean_ms, 3), fixed(a.forward.event_ms, 3),
                    fixed(a.forward.kernel_sum_ms, 3), fixed(a.forward.projection_ms, 3),
                    signed_percent(capture_overhead_percent(c.plain_forward, c.captured_forward)),
                    signed_percent(capture_overhead_percent(c.plain_step, c.captured_step))});
    top.add_row({c.label(), code(a.top_forward.base_name), a.top_forward.category,
                 fixed(a.top_forward.percent, 1), fixed(a.top_forward.instances_per_pass, 1),
                 code(a.top_forward_backward.base_name), fixed(a.top_forward_backward.instances_per_pass, 1),
                 a.same_top_kernel() ? "same" : "different"});
    double inference_gemm = 0, train_gemm = 0;
    for (const CategoryRow& row : a.categories)
      if (row.category == "gemm") {
        inference_gemm = row.inference_percent;
        train_gemm = row.train_percent;
      }
    gemm.add_row({c.label(), fixed(inference_gemm, 1), fixed(train_gemm, 1)});
  }
  out << "## Summary\n\n### (a) Forward time, and what capture costs\n\n"
      << "Plain forward: mean of the forward-only benchmark with capture off. The other forward columns "
         "are per forward pass of the captured forward-only run. Capture overhead: mean step time with "
         "capture on vs off (the goal is at most 10% on the small model's train step, 5% with --graph; "
         "reported, not enforced).\n\n"
      << timing.markdown()
      << "\n### (b) Kernel with the most GPU time\n\n"
         "Grouped by full kernel name (as nsys's kern_sum); the tables show base names.\n\n"
      << top.markdown() << "\n### (d) GEMM share of GPU time\n\n"
      << gemm.markdown() << "\n";
}

void forward_time_section(std::ostream& out, const ConfigurationProfile& c, const ProfileAnswers& a) {
  gpuprof::Table t = table({"forward pass measured by", "ms"}, {false, true});
  t.add_row({"plain benchmark, capture off (mean ± std)", times_text(c.plain_forward)});
  t.add_row({"\"forward\" scope, CUDA events, capture on",
             a.forward.event_ms ? fixed(a.forward.event_ms, 3) : "- (not GPU-timed)"});
  t.add_row({"summed kernel time per forward", fixed(a.forward.kernel_sum_ms, 3)});
  t.add_row(
      {"GPU projection per forward (first kernel start to last end)", fixed(a.forward.projection_ms, 3)});
  out << "### (a) Forward time\n\n"
      << t.markdown() << "\nOver " << a.forward.forwards << " profiled forward passes. Kernel sum vs plain "
      << "benchmark: " << signed_percent(100.0 * (a.forward.kernel_sum_ms / c.plain_forward.mean_ms - 1))
      << " (the plain timing also covers launch gaps and host work between kernels).\n\n"
      << "Capture overhead: " << capture_overhead_text(c) << ".\n\n";
}

void kernel_line(std::ostream& out, const KernelTime& k, const char* pass) {
  out << code(k.base_name) << " (" << k.category << "): " << fixed(k.ms_per_pass, 3) << " ms per " << pass
      << ", " << fixed(k.percent, 1) << "% of its kernel time, " << fixed(k.instances_per_pass, 1)
      << " instances per " << pass << ".\n  Full name: " << code(k.name) << "\n";
}

void top_kernel_section(std::ostream& out, const ProfileAnswers& a) {
  out << "### (b) Top kernel\n\n- Forward pass (inference run): ";
  kernel_line(out, a.top_forward, "forward");
  out << "- Forward + backward (train run): ";
  kernel_line(out, a.top_forward_backward, "train step");
  out << "- " << (a.same_top_kernel() ? "The same kernel" : "A different kernel")
      << " leads once backward is included.\n\n";
}

void non_gemm_section(std::ostream& out, const ProfileAnswers& a) {
  out << "### (c) Non-GEMM kernels above " << fixed(a.non_gemm_min_percent, 0)
      << "% of forward kernel time\n\n";
  if (a.non_gemm_forward.empty()) {
    out << "None.\n\n";
    return;
  }
  gpuprof::Table t =
      table({"kernel (base name)", "category", "% of forward", "ms per forward", "per forward"},
            {false, false, true, true, true});
  for (const KernelTime& k : a.non_gemm_forward)
    t.add_row({code(k.base_name), k.category, fixed(k.percent, 1), fixed(k.ms_per_pass, 3),
               fixed(k.instances_per_pass, 1)});
  out << t.markdown() << "\n";
}

void category_section(std::ostream& out, const ProfileAnswers& a) {
  gpuprof::Table t =
      table({"category", "inference %", "train step %", "inference ms / forward", "train ms / step"},
            {false, true, true, true, true});
  for (const CategoryRow& row : a.categories)
    t.add_row({row.category, fixed(row.inference_percent, 1), fixed(row.train_percent, 1),
               fixed(row.inference_ms, 3), fixed(row.train_ms, 3)});
  out << "### (d) GPU time by category: inference vs train step\n\n"
         "Inference: the forward passes of the forward-only run. Train step: forward, backward and "
         "optimizer step of the train run. Copies and memsets count as memory.\n\n"
      << t.markdown() << "\n";
}

void attention_section(std::ostream& out, const ProfileAnswers& a) {
  gpuprof::Table t = table({"scope", "kernels per forward", "ms per forward", "GFLOP per forward", "TFLOP/s"},
                           {false, true, true, true, true});
  for (const AttentionPart* part : {&a.attention.scores, &a.attention.softmax, &a.attention.final_matmul})
    t.add_row({"\"" + part->scope + "\"", fixed(part->kernels_per_forward, 1), fixed(part->ms_per_forward, 3),
               fixed(part->flops_per_forward / 1e9, 3), fixed(part->tflop_per_s(), 2)});
  const double time_ratio = a.attention.time_ratio(), flop_ratio = a.attention.flop_ratio();
  out << "### (e) Softmax vs the attention matmuls (forward pass)\n\n"
      << t.markdown() << "\nSoftmax / (scores + final matmul): time " << fixed(time_ratio, 3) << ", FLOPs "
      << fixed(flop_ratio, 4) << "; per FLOP the softmax takes "
      << fixed(flop_ratio > 0 ? time_ratio / flop_ratio : 0, 1)
      << "x the time of the matmuls. FLOPs: each matmul 2·B·H·T²·d_head per layer; softmax "
      << fixed(softmax_flops_per_score, 0)
      << " FLOPs per score element (max, subtract, exp, sum, divide: an assumption); causal masking not "
         "discounted.\n\n";
}

void configuration_section(std::ostream& out, const ConfigurationProfile& c) {
  out << "## " << c.label() << "\n\n";
  if (!c.answers) {
    out << failure_text(c) << "\n\n";
    return;
  }
  const ProfileAnswers& a = *c.answers;
  if (a.dropped_kernel_records > 0)
    out << "**Warning:** CUPTI dropped " << a.dropped_kernel_records
        << " activity records: the kernel times below are too low.\n\n";
  forward_time_section(out, c, a);
  top_kernel_section(out, a);
  non_gemm_section(out, a);
  category_section(out, a);
  if (c.attention == Attention::naive) attention_section(out, a);
  else
    out << "### (e) Softmax vs the attention matmuls\n\nNot measurable here: the " << to_string(c.attention)
        << " attention computes the scores, the softmax and P·V in one kernel (scope \"scaled dot "
           "product attention\"). Run with --attention naive to time them apart.\n\n";
  out << "Kernel tables (nsys cuda_gpu_kern_sum columns): " << code(inference_kern_sum_file(c)) << ", "
      << code(train_kern_sum_file(c)) << ".\n\n";
}

void memory_section(std::ostream& out, const MemoryTable& memory) {
  gpuprof::Table t = table({"ctx", "mode", "precision", "attention", "peak device memory (GiB)",
                            "allocated by backend (GiB)", "fp32 residual-stream tensor (MiB)"},
                           {true, false, false, false, true, true, true});
  for (const MemoryRow& row : memory.rows) {
    std::string peak;
    if (row.status == RunStatus::oom) peak = oom_text(row.bytes_needed.value_or(0));
    else if (row.status == RunStatus::error) peak = "failed: " + row.note;
    else
      peak =
          fixed(row.peak_bytes ? std::optional<double>(static_cast<double>(*row.peak_bytes) / bytes_per_gib)
                               : std::nullopt,
                2);
    t.add_row(
        {std::to_string(row.ctx), to_string(row.mode), to_string(row.precision), to_string(row.attention),
         peak,
         harness::gib(row.allocated_bytes ? std::optional<double>(static_cast<double>(*row.allocated_bytes))
                                          : std::nullopt),
         fixed(static_cast<double>(row.residual_stream_bytes) / bytes_per_mib, 1)});
  }
  out << "## Memory: " << memory.model << " model, batch " << memory.batch << "\n\n"
      << "Peak device memory: cudaMemGetInfo's memory in use, sampled at every scope boundary (gpuprof "
         "MemoryWatch), highest value minus the value before the backend existed (so it includes cuBLAS's "
         "and the CUDA context's growth). Allocated: the backend's arena (all its regions). Residual-stream "
         "tensor: "
         "batch·ctx·d_model·4 bytes, d_model "
      << memory.d_model << ".\n\n"
      << t.markdown() << "\n";
}

}  // namespace

std::string capture_overhead_text(const ConfigurationProfile& c) {
  return "forward-only step " + fixed(c.plain_forward.mean_ms, 3) + " -> " +
         fixed(c.captured_forward.mean_ms, 3) + " ms (" +
         signed_percent(capture_overhead_percent(c.plain_forward, c.captured_forward)) + "), train step " +
         fixed(c.plain_step.mean_ms, 3) + " -> " + fixed(c.captured_step.mean_ms, 3) + " ms (" +
         signed_percent(capture_overhead_percent(c.plain_step, c.captured_step)) + ")";
}

void write_notes_markdown(std::ostream& out, const std::vector<std::string>& notes) {
  for (const std::string& note : notes) out << "- Note: " << note << "\n";
  if (!notes.empty()) out << "\n";
}

std::string profile_markdown(const ProfileResults& results) {
  std::ostringstream out;
  out << "# Transformer LM profile\n\n"
      << "Device: " << harness::device_text(results.device, results.cudnn) << ". Batch " << results.batch
      << ", " << results.warmup << " warm-up steps (left out) and " << results.steps
      << " profiled steps per run"
      << (results.graph ? " (each one replay of the step captured as a CUDA graph)" : "") << ", seed "
      << results.seed
      << ". Kernels captured with gpuprof::KernelCapture (CUPTI) and attributed to gpuprof scopes; every "
         "number below is measured. Each configuration runs four times on fresh backends: forward-only "
         "and train step with capture off (plain benchmark), then the same with capture on (analysed).\n\n";
  write_notes_markdown(out, results.notes);
  if (!results.configurations.empty()) summary(out, results);
  for (const ConfigurationProfile& c : results.configurations) configuration_section(out, c);
  if (results.memory) memory_section(out, *results.memory);
  return out.str();
}

}  // namespace transformer::profile
