// profile/report_json.cpp: the JSON rendering, through gpuprof::JsonWriter.
#include "profile/report_json.hpp"

#include <gpuprof/json_writer.hpp>

namespace transformer::profile {

void write_step_times(gpuprof::JsonWriter& json, const char* name, const StepTimes& times) {
  json.key(name)
      .begin_object(gpuprof::JsonWriter::one_line)
      .member("mean_ms", times.mean_ms)
      .member("std_ms", times.std_ms)
      .member("steps", times.steps)
      .member("clock", times.clock)
      .end_object();
}

namespace {

using gpuprof::JsonWriter;

void kernel_time(JsonWriter& json, const KernelTime& k) {
  json.begin_object()
      .member("name", k.name)
      .member("base_name", k.base_name)
      .member("category", k.category)
      .member("total_ns", k.total_ns)
      .member("instances", k.instances)
      .member("percent", k.percent)
      .member("ms_per_pass", k.ms_per_pass)
      .member("instances_per_pass", k.instances_per_pass)
      .end_object();
}

void attention_part(JsonWriter& json, const char* name, const AttentionPart& part) {
  json.key(name)
      .begin_object(JsonWriter::one_line)
      .member("scope", part.scope)
      .member("kernels_per_forward", part.kernels_per_forward)
      .member("ms_per_forward", part.ms_per_forward)
      .member("flops_per_forward", part.flops_per_forward)
      .end_object();
}

void answers(JsonWriter& json, const ConfigurationProfile& c, const ProfileAnswers& a) {
  json.key("forward_time")
      .begin_object()
      .member("forwards", a.forward.forwards)
      .member("plain_mean_ms", c.plain_forward.mean_ms);
  write_optional(json, "event_ms", a.forward.event_ms);
  json.member("kernel_sum_ms", a.forward.kernel_sum_ms)
      .member("projection_ms", a.forward.projection_ms)
      .end_object();
  json.key("capture_overhead_percent")
      .begin_object(JsonWriter::one_line)
      .member("forward", capture_overhead_percent(c.plain_forward, c.captured_forward))
      .member("train_step", capture_overhead_percent(c.plain_step, c.captured_step))
      .end_object();

  json.key("top_kernel").begin_object().key("forward");
  kernel_time(json, a.top_forward);
  json.key("forward_backward");
  kernel_time(json, a.top_forward_backward);
  json.member("train_steps", a.train_steps).member("same", a.same_top_kernel()).end_object();

  json.member("non_gemm_min_percent", a.non_gemm_min_percent).key("non_gemm_forward").begin_array();
  for (const KernelTime& k : a.non_gemm_forward) kernel_time(json, k);
  json.end_array();

  json.key("categories").begin_array();
  for (const CategoryRow& row : a.categories)
    json.begin_object(JsonWriter::one_line)
        .member("category", row.category)
        .member("inference_percent", row.inference_percent)
        .member("train_step_percent", row.train_percent)
        .member("inference_ms", row.inference_ms)
        .member("train_step_ms", row.train_ms)
        .end_object();
  json.end_array();

  json.key("attention").begin_object();
  attention_part(json, "scores", a.attention.scores);
  attention_part(json, "softmax", a.attention.softmax);
  attention_part(json, "final_matmul", a.attention.final_matmul);
  json.member("softmax_flops_per_score", softmax_flops_per_score)
      .member("time_ratio", a.attention.time_ratio())
      .member("flop_ratio", a.attention.flop_ratio())
      .end_object();
  json.member("dropped_kernel_records", a.dropped_kernel_records);
  json.key("kern_sum_files")
      .begin_object(JsonWriter::one_line)
      .member("inference_forward", inference_kern_sum_file(c))
      .member("train_step", train_kern_sum_file(c))
      .end_object();
}

void configuration(JsonWriter& json, const ConfigurationProfile& c) {
  json.begin_object()
      .member("label", c.label())
      .member("size", c.size)
      .member("ctx", c.ctx)
      .member("precision", to_string(c.precision))
      .member("attention_path", to_string(c.attention))  // "attention" is question (e)
      .member("status", to_string(c.status))
      .member("note", c.note);
  json.key("oom_mode");
  if (c.oom_mode) json.value(to_string(*c.oom_mode));
  else json.value(nullptr);
  write_optional(json, "bytes_needed", c.bytes_needed);
  if (c.answers) {
    json.key("plain").begin_object();
    write_step_times(json, "forward", c.plain_forward);
    write_step_times(json, "train_step", c.plain_step);
    json.end_object().key("captured").begin_object();
    write_step_times(json, "forward", c.captured_forward);
    write_step_times(json, "train_step", c.captured_step);
    json.end_object();
    answers(json, c, *c.answers);
  }
  json.end_object();
}

void memory_table(JsonWriter& json, const MemoryTable& memory) {
  json.key("memory")
      .begin_object()
      .member("model", memory.model)
      .member("d_model", memory.d_model)
      .member("batch", memory.batch)
      .key("rows")
      .begin_array();
  for (const MemoryRow& row : memory.rows) {
    json.begin_object(JsonWriter::one_line)
        .member("ctx", row.ctx)
        .member("mode", to_string(row.mode))
        .member("precision", to_string(row.precision))
        .member("attention", to_string(row.attention))
        .member("status", to_string(row.status))
        .member("note", row.note);
    write_optional(json, "peak_bytes", row.peak_bytes);
    write_optional(json, "allocated_bytes", row.allocated_bytes);
    write_optional(json, "bytes_needed", row.bytes_needed);
    json.member("residual_stream_bytes", row.residual_stream_bytes).end_object();
  }
  json.end_array().end_object();
}

}  // namespace

void write_notes(JsonWriter& json, const std::vector<std::string>& notes) {
  json.key("notes").begin_array();
  for (const std::string& note : notes) json.value(note);
  json.end_array();
}

std::string profile_json(const ProfileResults& results) {
  JsonWriter json;
  begin_results_json(json, json_schema_name, json_schema_version, results);
  json.member("graph", results.graph).member("seed", results.seed);
  write_notes(json, results.notes);
  json.key("configurations").begin_array();
  for (const ConfigurationProfile& c : results.configurations) configuration(json, c);
  json.end_array();
  if (results.memory) memory_table(json, *results.memory);
  else json.member("memory", nullptr);
  json.end_object();
  return json.str() + "\n";
}

}  // namespace transformer::profile
