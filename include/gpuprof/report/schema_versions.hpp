// gpuprof/report/schema_versions.hpp: the versions of the files gpuprof
// writes, in one small header that writers and readers both include (a
// reader needs the number it accepts, not the writer's code).
#pragma once
#include "../config.hpp"

GPUPROF_NAMESPACE_BEGIN

constexpr int report_json_version = 2;  // "gpuprof.report" (json.hpp, read_json.hpp)
constexpr int bench_json_version = 1;   // "gpuprof.bench" (bench_json.hpp, read_bench_json.hpp)

GPUPROF_NAMESPACE_END
