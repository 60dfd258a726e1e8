// profile/report_json.hpp: ProfileResults as JSON (DIR/profile.json), the
// same numbers as the markdown report at full precision, for scripts such
// as scripts/plot_profile.py. Schema "gpuprof.transformer_profile", version 1,
// described in docs/profiling.md. Times in ms, sizes in bytes, shares in %.
#pragma once
#include <optional>
#include <string>
#include <vector>

#include <gpuprof/json_writer.hpp>

#include "harness/output.hpp"
#include "profile/profile_results.hpp"

namespace transformer::profile {

inline constexpr const char* json_schema_name = "gpuprof.transformer_profile";
inline constexpr int json_schema_version = 1;

std::string profile_json(const ProfileResults& results);

// Pieces the idle study's JSON shares with profile.json:
// "notes": [...], what could not run and why.
void write_notes(gpuprof::JsonWriter& json, const std::vector<std::string>& notes);
// A StepTimes object.
void write_step_times(gpuprof::JsonWriter& json, const char* name, const StepTimes& times);
// A value or null (shared with transformer_bench's and transformer_ddp's JSON).
using harness::write_optional;
// The header every result file of the profile begins with (Results:
// ProfileResults, IdleStudy: device, cudnn (null without one), batch, warmup,
// steps), opening the document's object.
template <class Results>
void begin_results_json(gpuprof::JsonWriter& json, const char* schema, int version, const Results& results) {
  json.begin_object().member("schema", schema).member("version", version).member("device", results.device);
  write_optional(json, "cudnn", results.cudnn);
  json.member("batch", results.batch).member("warmup", results.warmup).member("steps", results.steps);
}

}  // namespace transformer::profile
