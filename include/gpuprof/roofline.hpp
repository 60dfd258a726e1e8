// gpuprof/roofline.hpp: what a roofline reads off hardware counters. From
// one CounterRange (counter_data.hpp): FLOPs per pipe, DRAM bytes, time,
// arithmetic intensity and achieved FLOP/s; against a card's ceilings
// (peak FLOP/s per pipe, DRAM bandwidth: device_ceilings.hpp tables them,
// a caller may measure them): memory- or compute-bound, and how far below its roof; and the
// work a scope declared (work.hpp) checked against the measured work.
//
// ```cpp
// #include <gpuprof/roofline.hpp>
// gpuprof::Bound bound(const gpuprof::CounterRange& range, const gpuprof::RooflineCeilings& ceilings) {
//   gpuprof::RangeMeasures m = gpuprof::measure_range(range);
//   gpuprof::RooflinePlacement p = gpuprof::place_on_roofline(m, ceilings);
//   return p.bound;  // memory or compute; p.percent_of_roof says how far below the roof
// }
// ```
//
// Plain arithmetic, no CUPTI: the collection side, the reports and their
// CPU tests share it.
#pragma once
#include <cmath>
#include <string>
#include <vector>

#include "config.hpp"
#include "counter_data.hpp"

GPUPROF_NAMESPACE_BEGIN

// One counter that contributes FLOPs: each count is `flops_per_count` FLOPs.
struct FlopTerm {
  const char* metric;
  double flops_per_count;
};

// An execution pipe whose FLOPs a roofline ceiling bounds.
struct FlopPipe {
  const char* name;  // "tensor bf16", "fp32": the key of its ceiling
  std::vector<FlopTerm> terms;
};

// The pipes and the ncu metrics (counter_data.hpp's metric::, all in
// default_counter_metrics()) that count their FLOPs: the one place FLOPs are
// derived from counters. Tensor "math ops" are already FLOPs (ncu's tensor
// roofline plots them unscaled); an FFMA thread instruction is a multiply and
// an add, two FLOPs. FP16 inputs have one counter on Hopper and one per
// accumulator type on Ampere; a chip has only its own, so they add up.
inline const std::vector<FlopPipe>& flop_pipes() {
  static const std::vector<FlopPipe> pipes = {
      {"tensor bf16", {{metric::tensor_bf16_ops, 1}}},
      {"tensor fp16",
       {{metric::tensor_fp16_ops, 1},
        {metric::tensor_fp16_dst_fp16_ops, 1},
        {metric::tensor_fp16_dst_fp32_ops, 1}}},
      {"tensor tf32", {{metric::tensor_tf32_ops, 1}}},
      {"fp32", {{metric::fp32_ffma, 2}, {metric::fp32_fadd, 1}, {metric::fp32_fmul, 1}}},
  };
  return pipes;
}

// Every metric flop_pipes() reads, for a collection's metric set.
inline std::vector<std::string> flop_metrics() {
  std::vector<std::string> names;
  for (const FlopPipe& pipe : flop_pipes())
    for (const FlopTerm& term : pipe.terms) names.emplace_back(term.metric);
  return names;
}

struct PipeFlops {
  std::string pipe;
  double flops = 0;
};

// What one range measured, totals over the range. Negative means "not
// collected" for the optional values.
struct RangeMeasures {
  std::vector<PipeFlops> pipes;  // pipes with at least one metric collected
  double flops = -1;             // all pipes; -1 when no FLOP metric was collected
  double dram_bytes = -1;        // read + written; -1 when neither was collected
  double seconds = -1;           // gpu__time_duration
  double l2_hit_pct = -1;
  double occupancy_pct = -1;  // achieved, % of the peak warps per SM

  // FLOPs per DRAM byte; 0 when either is unknown or zero.
  double intensity() const { return flops > 0 && dram_bytes > 0 ? flops / dram_bytes : 0.0; }
  double flop_per_s() const { return flops > 0 && seconds > 0 ? flops / seconds : 0.0; }
  double dram_bytes_per_s() const { return dram_bytes > 0 && seconds > 0 ? dram_bytes / seconds : 0.0; }
  // The pipe that did most of the FLOPs (its ceiling is the range's roof); "" if none did any.
  std::string dominant_pipe() const {
    const PipeFlops* best = nullptr;
    for (const PipeFlops& p : pipes)
      if (p.flops > 0 && (best == nullptr || p.flops > best->flops)) best = &p;
    return best ? best->pipe : std::string();
  }
};

inline RangeMeasures measure_range(const CounterRange& range) {
  // Non-finite or negative counter values (a damaged file) count as not collected.
  const auto get = [&range](const char* name) {
    const double* v = range.find(name);
    return v != nullptr && std::isfinite(*v) && *v >= 0 ? *v : -1.0;
  };
  RangeMeasures m;
  for (const FlopPipe& pipe : flop_pipes()) {
    bool collected = false;
    double flops = 0;
    for (const FlopTerm& term : pipe.terms)
      if (const double count = get(term.metric); count >= 0) {
        collected = true;
        flops += count * term.flops_per_count;
      }
    if (!collected) continue;
    m.pipes.push_back({pipe.name, flops});
    m.flops = (m.flops < 0 ? 0 : m.flops) + flops;
  }
  const double read = get(metric::dram_bytes_read), written = get(metric::dram_bytes_written);
  if (read >= 0 || written >= 0) m.dram_bytes = (read > 0 ? read : 0) + (written > 0 ? written : 0);
  if (const double ns = get(metric::duration_ns); ns >= 0) m.seconds = ns / 1e9;
  m.l2_hit_pct = get(metric::l2_hit_rate_pct);
  m.occupancy_pct = get(metric::achieved_occupancy_pct);
  return m;
}

struct PipeCeiling {
  std::string pipe;  // a FlopPipe name
  double flop_per_s = 0;
};

// The card's roofs and where they came from. CounterCapture contributes its
// GPU's (device_ceilings.hpp) to the report; a caller may set others.
struct RooflineCeilings {
  std::vector<PipeCeiling> pipes;
  double dram_bytes_per_s = 0;
  // "table: NVIDIA H200 data sheet", "measured" or "user"; with no roofs,
  // why there are none ("" when nobody said).
  std::string source;

  const PipeCeiling* find(const std::string& pipe) const {
    for (const PipeCeiling& c : pipes)
      if (c.pipe == pipe && c.flop_per_s > 0) return &c;
    return nullptr;
  }
  // FLOPs per byte where the pipe's roof meets the bandwidth slope; 0 if either is unknown.
  double ridge(const PipeCeiling& c) const {
    return dram_bytes_per_s > 0 ? c.flop_per_s / dram_bytes_per_s : 0.0;
  }
  bool empty() const { return pipes.empty() && dram_bytes_per_s <= 0; }
};

enum class Bound { unknown, memory, compute };

inline const char* bound_name(Bound bound) {
  switch (bound) {
    case Bound::memory: return "memory";
    case Bound::compute: return "compute";
    case Bound::unknown: break;
  }
  return "unknown";
}

// Where a range sits under its roof.
struct RooflinePlacement {
  Bound bound = Bound::unknown;
  std::string pipe;             // whose ceiling applies ("" for a range without FLOPs)
  double roof_flop_per_s = 0;   // min(peak, bandwidth × intensity); 0 without FLOPs
  double percent_of_roof = -1;  // achieved / roof; -1 when unknown
};

// Left of the ridge a range is memory-bound and its roof is the bandwidth
// slope: achieved/roof is then its DRAM bandwidth over the card's, which
// also places a range that did no FLOPs (a copy). Right of it, the pipe's peak.
inline RooflinePlacement place_on_roofline(const RangeMeasures& m, const RooflineCeilings& ceilings) {
  RooflinePlacement p;
  if (ceilings.dram_bytes_per_s <= 0 || m.seconds <= 0) return p;
  p.pipe = m.dominant_pipe();
  if (p.pipe.empty()) {
    if (m.dram_bytes <= 0 || m.flops < 0) return p;  // no FLOP counters: nothing to say
    p.bound = Bound::memory;
    p.percent_of_roof = 100 * m.dram_bytes_per_s() / ceilings.dram_bytes_per_s;
    return p;
  }
  const PipeCeiling* ceiling = ceilings.find(p.pipe);
  if (ceiling == nullptr || m.dram_bytes < 0) return p;
  const double intensity = m.dram_bytes > 0 ? m.intensity() : INFINITY;
  p.bound = intensity < ceilings.ridge(*ceiling) ? Bound::memory : Bound::compute;
  p.roof_flop_per_s = p.bound == Bound::memory ? ceilings.dram_bytes_per_s * intensity : ceiling->flop_per_s;
  p.percent_of_roof = 100 * m.flop_per_s() / p.roof_flop_per_s;
  return p;
}

// A declared amount (Work::flops or Work::bytes per instance) against the
// measured one; flagged when they differ by more than 20 % of the measured
// amount (a FLOP formula off by a factor is a common mistake).
inline constexpr double declared_work_tolerance = 0.20;

struct WorkCheck {
  double declared = 0;
  double measured = 0;
  bool known() const { return declared > 0 && measured > 0; }
  // (declared - measured) / measured in percent; 0 unless known.
  double difference_pct() const { return known() ? 100 * (declared - measured) / measured : 0.0; }
  bool flagged() const {
    return known() && std::fabs(declared - measured) > declared_work_tolerance * measured;
  }
};

GPUPROF_NAMESPACE_END
