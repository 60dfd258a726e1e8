// ddp/ddp_results.cpp: the rank figures' table and JSON.
#include "ddp/ddp_results.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include <gpuprof/json_writer.hpp>

#include "harness/output.hpp"

namespace transformer::ddp {

std::vector<double> RankFigures::to_vector() const {
  return {step_median_ms, step_mean_ms, step_min_ms, loss, communication_ms, computation_ms, overlap_ms};
}

RankFigures RankFigures::from_vector(const double* v) { return {v[0], v[1], v[2], v[3], v[4], v[5], v[6]}; }

double DdpResults::step_ms() const {
  double slowest = 0;
  for (const RankFigures& rank : ranks) slowest = std::max(slowest, rank.step_median_ms);
  return slowest;
}

double DdpResults::tokens_per_s() const {
  const double step = step_ms();
  return step > 0 ? static_cast<double>(world) * config.batch * config.ctx / (step / 1e3) : 0;
}

namespace {

std::string format(const char* pattern, double value) {
  char text[64];
  std::snprintf(text, sizeof text, pattern, value);
  return text;
}

// Communication's share of the step, and the share of it hidden behind computation.
double share(double part, double whole) { return whole > 0 ? part / whole : NAN; }

}  // namespace

std::string ddp_table(const DdpResults& r) {
  std::string text = "transformer_ddp: " + r.config.model.name + " ctx " + std::to_string(r.config.ctx) +
                     " " + to_string(r.config.precision) + " " + to_string(r.config.attention) +
                     " attention, batch " + std::to_string(r.config.batch) + " per GPU x " +
                     std::to_string(r.world) + " GPU(s), " + std::to_string(r.buckets) +
                     " bucket(s) of <= " + format("%g", r.bucket_mb) + " MiB, " +
                     harness::device_text(r.device, r.cudnn) + "\n";
  text += "rank  step median ms  mean ms  min ms    loss";
  if (r.profiled) text += "  comm ms  comp ms  overlap ms  comm share  hidden";
  text += "\n";
  for (std::size_t rank = 0; rank < r.ranks.size(); ++rank) {
    const RankFigures& f = r.ranks[rank];
    char line[256];
    std::snprintf(line, sizeof line, "%4zu  %14.3f  %7.3f  %6.3f  %6.4f", rank, f.step_median_ms,
                  f.step_mean_ms, f.step_min_ms, f.loss);
    text += line;
    if (r.profiled) {
      std::snprintf(line, sizeof line, "  %7.3f  %7.3f  %10.3f  %9.1f%%", f.communication_ms,
                    f.computation_ms, f.overlap_ms, 100 * share(f.communication_ms, f.step_median_ms));
      text += line;
      // No communication kernel ran (one rank: NCCL copies nothing): nothing to hide.
      const double hidden = share(f.overlap_ms, f.communication_ms);
      text += std::isnan(hidden) ? std::string("      -") : format("  %5.1f%%", 100 * hidden);
    }
    text += "\n";
  }
  text += "step (slowest rank's median) " + format("%.3f", r.step_ms()) + " ms, " +
          format("%.0f", r.tokens_per_s()) + " tokens/s over all GPUs\n";
  return text;
}

std::string ddp_json(const DdpResults& r) {
  gpuprof::JsonWriter json;
  json.begin_object();
  json.member("schema", "gpuprof.transformer_ddp").member("version", 1);
  json.member("device", r.device);
  harness::write_optional(json, "cudnn", r.cudnn);
  json.member("size", r.config.model.name).member("ctx", r.config.ctx);
  json.member("precision", to_string(r.config.precision));
  json.member("attention", to_string(r.config.attention));
  json.member("batch_per_gpu", r.config.batch).member("world_size", r.world);
  json.member("warmup", r.warmup).member("steps", r.steps);
  json.member("bucket_mb", r.bucket_mb).member("buckets_per_step", r.buckets);
  json.member("profiled", r.profiled);
  json.member("step_ms", r.step_ms()).member("tokens_per_s", r.tokens_per_s());
  json.key("ranks").begin_array();
  for (std::size_t rank = 0; rank < r.ranks.size(); ++rank) {
    const RankFigures& f = r.ranks[rank];
    json.begin_object(gpuprof::JsonWriter::one_line);
    json.member("rank", rank).member("step_median_ms", f.step_median_ms);
    json.member("step_mean_ms", f.step_mean_ms).member("step_min_ms", f.step_min_ms);
    json.member("loss", f.loss);
    // NaN (not profiled) is written as null.
    json.member("communication_ms", f.communication_ms).member("computation_ms", f.computation_ms);
    json.member("overlap_ms", f.overlap_ms);
    json.member("exposed_communication_ms", f.communication_ms - f.overlap_ms);
    json.member("communication_share", share(f.communication_ms, f.step_median_ms));
    json.end_object();
  }
  json.end_array();
  json.end_object();
  return json.str() + "\n";
}

}  // namespace transformer::ddp
