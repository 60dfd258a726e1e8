// profile/report_json.hpp: ProfileResults as JSON (DIR/profile.json), the
// same numbers as the markdown report at full precision, for scripts such
// as scripts/plot_profile.py. Schema "gpuprof.transformer_profile", version 1,
// described in docs/profiling.md. Times in ms, sizes in bytes, shares in %.
#pragma once
#include <string>

#include "profile/profile_results.hpp"

namespace transformer::profile {

inline constexpr const char* json_schema_name = "gpuprof.transformer_profile";
inline constexpr int json_schema_version = 1;

std::string profile_json(const ProfileResults& results);

}  // namespace transformer::profile
