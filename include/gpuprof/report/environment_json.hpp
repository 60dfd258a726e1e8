// gpuprof/report/environment_json.hpp: an Environment (environment.hpp) and a
// RankInfo (rank.hpp) as the JSON objects every report and bench file
// carries, and back. The readers sit in detail: they take the parser's
// document type, which is not part of the public interface.
#pragma once
#include <string>

#include "../config.hpp"
#include "../detail/json_reader.hpp"
#include "../detail/nvml.hpp"
#include "../environment.hpp"
#include "../error.hpp"
#include "../json_writer.hpp"
#include "../rank.hpp"

GPUPROF_NAMESPACE_BEGIN

inline void write_environment_json(JsonWriter& json, const Environment& env) {
  json.begin_object()
      .member("gpu_name", env.gpu_name)
      .member("gpu_uuid", env.gpu_uuid)
      .member("compute_capability", env.compute_capability)
      .member("driver_version", env.driver_version)
      .member("cuda_driver_version", env.cuda_driver_version)
      .member("cuda_runtime_version", env.cuda_runtime_version)
      .member("sm_clock_mhz_start", env.sm_clock_mhz_start)
      .member("sm_clock_mhz_end", env.sm_clock_mhz_end)
      .member("memory_clock_mhz_start", env.memory_clock_mhz_start)
      .member("memory_clock_mhz_end", env.memory_clock_mhz_end)
      .member("throttle_reasons_end", throttle_reason_names(env.throttle_reasons_end))
      .member("clocks_note", env.clocks_note)
      .member("host_name", env.host_name)
      .member("compiler", env.compiler)
      .member("compiler_flags", env.compiler_flags)
      .member("build_type", env.build_type)
      .member("git_revision", env.git_revision)
      .member("time_utc", env.time_utc)
      .end_object();
}

// {"rank": 1, "world_size": 4, "local_rank": 1}; unknown values are null.
inline void write_rank_json(JsonWriter& json, const RankInfo& info) {
  json.begin_object(JsonWriter::one_line);
  const auto member = [&json](const char* key, int value) {
    json.key(key);
    if (value >= 0) json.value(value);
    else json.value(nullptr);
  };
  member("rank", info.rank);
  member("world_size", info.world_size);
  member("local_rank", info.local_rank);
  json.end_object();
}

namespace detail {

// Reads what write_environment_json wrote; missing (or null) keys keep their
// defaults, so files from older writers read as "unknown". A key of the wrong
// type is an error naming it, never silently "unknown".
inline Environment environment_from_json(const Json& json) {
  Environment env;
  const auto member = [&](const char* key, auto read) {
    const Json* value = json.find(key);
    if (value == nullptr || value->is_null()) return;
    try {
      read(*value);
    } catch (const InputError& error) {
      throw InputError(std::string("environment ") + key + ": " + error.what());
    }
  };
  const auto text = [&](const char* key, std::string& out) {
    member(key, [&out](const Json& value) { out = value.as_string(); });
  };
  const auto integer = [&](const char* key, int& out) {
    member(key, [&out](const Json& value) { out = value.as_integer<int>(); });
  };
  text("gpu_name", env.gpu_name);
  text("gpu_uuid", env.gpu_uuid);
  text("compute_capability", env.compute_capability);
  text("driver_version", env.driver_version);
  integer("cuda_driver_version", env.cuda_driver_version);
  integer("cuda_runtime_version", env.cuda_runtime_version);
  integer("sm_clock_mhz_start", env.sm_clock_mhz_start);
  integer("sm_clock_mhz_end", env.sm_clock_mhz_end);
  integer("memory_clock_mhz_start", env.memory_clock_mhz_start);
  integer("memory_clock_mhz_end", env.memory_clock_mhz_end);
  text("clocks_note", env.clocks_note);
  text("host_name", env.host_name);
  text("compiler", env.compiler);
  text("compiler_flags", env.compiler_flags);
  text("build_type", env.build_type);
  text("git_revision", env.git_revision);
  text("time_utc", env.time_utc);
  return env;
}

// Reads what write_rank_json wrote. Unknown values are null; a number must
// be a non-negative int (world_size positive, rank and local_rank inside it), else
// gpuprof::InputError.
inline RankInfo rank_from_json(const Json& json) {
  const auto count = [&json](const char* key) {
    const Json* value = json.find(key);
    if (value == nullptr || value->is_null()) return -1;
    int number = 0;
    try {
      number = value->as_integer<int>();
    } catch (const InputError& error) {
      throw InputError(std::string(key) + ": " + error.what());
    }
    if (number < 0) throw InputError(std::string(key) + " " + std::to_string(number) + " is negative");
    return number;
  };
  const RankInfo info{count("rank"), count("world_size"), count("local_rank")};
  if (info.world_size == 0) throw InputError("world_size 0: a run has at least one process");
  if (info.known() && info.world_size > 0 && info.rank >= info.world_size)
    throw InputError("rank " + std::to_string(info.rank) + " is outside a world of " +
                     std::to_string(info.world_size));
  if (info.local_rank >= 0 && info.world_size > 0 && info.local_rank >= info.world_size)
    throw InputError("local_rank " + std::to_string(info.local_rank) + " is outside a world of " +
                     std::to_string(info.world_size));
  return info;
}

}  // namespace detail

GPUPROF_NAMESPACE_END
