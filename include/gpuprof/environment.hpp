// gpuprof/environment.hpp: where a run happened, so every report and every
// benchmark file says which machine, driver, clocks and build produced it.
//
// ```cpp
// #include <gpuprof/environment.hpp>
// #include <iostream>
// int main() {
//   gpuprof::Environment env = gpuprof::capture_environment();
//   std::cout << gpuprof::environment_summary(env) << '\n';  // GPU, driver, clocks, host, build ...
// }
// ```
//
// The build's facts (flags, build type, git revision) are compile-time
// definitions (GPUPROF_BUILD_CXX_FLAGS, GPUPROF_BUILD_TYPE,
// GPUPROF_GIT_REVISION) that the gpuprof::gpuprof CMake target fills in for
// whoever builds with it: gpuprof's tree, add_subdirectory/FetchContent, and
// find_package consumers alike (cmake/gpuprofBuildInfo.cmake). A build
// without CMake may define them; else the flags and revision read "" and the
// build type says it is unknown.
// Clocks come from NVML (detail/nvml.hpp), loaded at run time; without it they
// are -1 and clocks_note says why.
#pragma once
#include <chrono>
#include <cstdint>
#include <ctime>
#include <string>
#include <utility>
#include <vector>

#include <unistd.h>

#include "config.hpp"
#include "detail/nvml.hpp"

#if GPUPROF_WITH_CUDA
#include <cuda_runtime_api.h>
#endif

GPUPROF_NAMESPACE_BEGIN

struct Environment {
  std::string gpu_name;            // "" without a GPU
  std::string gpu_uuid;            // "GPU-8c3b..." as nvidia-smi prints it
  std::string compute_capability;  // "9.0"
  std::string driver_version;      // NVML's "580.65.06"; "" without NVML
  int cuda_driver_version = 0;     // cudaDriverGetVersion: 13000 = CUDA 13.0; 0 unknown
  int cuda_runtime_version = 0;    // cudaRuntimeGetVersion
  int sm_clock_mhz_start = -1;     // at the run's start (the profiler's creation) ...
  int sm_clock_mhz_end = -1;       // ... and when this environment was captured
  int memory_clock_mhz_start = -1;
  int memory_clock_mhz_end = -1;
  std::uint64_t throttle_reasons_end = 0;  // throttle_reason bits at capture
  std::string clocks_note;                 // why the clocks are unknown; "" when known
  std::string host_name;
  std::string compiler;        // "GCC 12.2.0"
  std::string compiler_flags;  // as the build passed them
  std::string build_type;      // "Release", "Debug", ...
  std::string git_revision;    // the checkout the build came from; "" otherwise
  std::string time_utc;        // ISO 8601, when captured
};

namespace detail {

inline std::string utc_now_iso8601() {
  const std::time_t now = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  std::tm parts{};
  gmtime_r(&now, &parts);
  char text[32];
  std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%SZ", &parts);
  return text;
}

inline std::string compiler_description() {
  std::string text;
#if defined(__clang__)
  text = std::string("Clang ") + __clang_version__;
#elif defined(__GNUC__)
  text = std::string("GCC ") + __VERSION__;
#endif
#if defined(__NVCC__)
  text += " via nvcc " + std::to_string(__CUDACC_VER_MAJOR__) + "." + std::to_string(__CUDACC_VER_MINOR__);
#endif
  return text;
}

// The GPU facts that do not change during a run; clocks are read apart.
struct GpuIdentity {
  std::string name, uuid, compute_capability;
  int cuda_driver_version = 0, cuda_runtime_version = 0;
};

#if GPUPROF_WITH_CUDA
// "GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx", the form NVML and nvidia-smi use.
inline std::string format_gpu_uuid(const cudaUUID_t& uuid) {
  static const char* const hex = "0123456789abcdef";
  std::string text = "GPU-";
  for (int i = 0; i < 16; ++i) {
    if (i == 4 || i == 6 || i == 8 || i == 10) text += '-';
    const auto byte = static_cast<unsigned char>(uuid.bytes[i]);
    text += hex[byte >> 4];
    text += hex[byte & 0xF];
  }
  return text;
}
#endif

// The current device's identity; empty names without a usable device. Never
// leaves a CUDA error behind for the application's own checks.
inline GpuIdentity current_gpu_identity() {
  GpuIdentity identity;
#if GPUPROF_WITH_CUDA
  cudaDriverGetVersion(&identity.cuda_driver_version);
  cudaRuntimeGetVersion(&identity.cuda_runtime_version);
  int count = 0, device = 0;
  cudaDeviceProp properties{};
  if (cudaGetDeviceCount(&count) != cudaSuccess || count == 0 || cudaGetDevice(&device) != cudaSuccess ||
      cudaGetDeviceProperties(&properties, device) != cudaSuccess) {
    cudaGetLastError();
    return identity;
  }
  identity.name = properties.name;
  identity.uuid = format_gpu_uuid(properties.uuid);
  identity.compute_capability = std::to_string(properties.major) + "." + std::to_string(properties.minor);
#endif
  return identity;
}

// Reads the current GPU's clocks; `why_not` says why they are unknown.
inline ClockSample read_gpu_clocks(const std::string& uuid, std::string& why_not) {
#if GPUPROF_WITH_CUDA
  if (uuid.empty()) {
    why_not = "no usable CUDA device";
    return {};
  }
  const Nvml& nvml = Nvml::instance();
  why_not = nvml.why_not();
  return nvml.clocks(uuid);
#else
  (void)uuid;
  why_not = "built with GPUPROF_WITH_CUDA=0";
  return {};
#endif
}

}  // namespace detail

// The clocks when the run started: read once, on the first call (the
// profiler calls this when it is created).
inline const ClockSample& clocks_at_start() {
  static const ClockSample start = [] {
    std::string ignored;
    return detail::read_gpu_clocks(detail::current_gpu_identity().uuid, ignored);
  }();
  return start;
}

inline Environment capture_environment() {
  Environment env;
  const detail::GpuIdentity gpu = detail::current_gpu_identity();
  env.gpu_name = gpu.name;
  env.gpu_uuid = gpu.uuid;
  env.compute_capability = gpu.compute_capability;
  env.cuda_driver_version = gpu.cuda_driver_version;
  env.cuda_runtime_version = gpu.cuda_runtime_version;
#if GPUPROF_WITH_CUDA
  if (!gpu.uuid.empty()) env.driver_version = detail::Nvml::instance().driver_version();
#endif
  const ClockSample& start = clocks_at_start();
  const ClockSample end = detail::read_gpu_clocks(gpu.uuid, env.clocks_note);
  env.sm_clock_mhz_start = start.sm_mhz;
  env.memory_clock_mhz_start = start.memory_mhz;
  env.sm_clock_mhz_end = end.sm_mhz;
  env.memory_clock_mhz_end = end.memory_mhz;
  env.throttle_reasons_end = end.throttle_reasons;

  char host[256] = {};
  if (gethostname(host, sizeof host - 1) == 0) env.host_name = host;
  env.compiler = detail::compiler_description();
#ifdef GPUPROF_BUILD_CXX_FLAGS
  env.compiler_flags = GPUPROF_BUILD_CXX_FLAGS;
#endif
#ifdef GPUPROF_BUILD_TYPE
  env.build_type = GPUPROF_BUILD_TYPE;  // CMake's configuration; "" when CMAKE_BUILD_TYPE was left empty
  if (env.build_type.empty()) env.build_type = "none (CMAKE_BUILD_TYPE empty)";
#elif defined(NDEBUG)
  env.build_type = "unknown (NDEBUG set)";
#else
  env.build_type = "unknown (NDEBUG not set)";
#endif
#ifdef GPUPROF_GIT_REVISION
  env.git_revision = GPUPROF_GIT_REVISION;
#endif
  env.time_utc = detail::utc_now_iso8601();
  return env;
}

// The environment as labelled lines, for headers of people-facing reports
// (markdown, HTML, trace metadata). Unknown values are left out.
inline std::vector<std::pair<std::string, std::string>> environment_lines(const Environment& env) {
  std::vector<std::pair<std::string, std::string>> lines;
  const auto add = [&](const char* label, const std::string& value) {
    if (!value.empty()) lines.emplace_back(label, value);
  };
  const auto clocks = [](int start, int end) {
    if (start < 0 && end < 0) return std::string();
    const auto mhz = [](int value) { return value < 0 ? std::string("?") : std::to_string(value); };
    return mhz(start) + " -> " + mhz(end) + " MHz";
  };
  const auto cuda_version = [](int version) {
    return version > 0 ? std::to_string(version / 1000) + "." + std::to_string(version % 1000 / 10)
                       : std::string();
  };
  add("GPU", env.gpu_name);
  add("GPU UUID", env.gpu_uuid);
  add("compute capability", env.compute_capability);
  add("driver", env.driver_version);
  add("CUDA driver API", cuda_version(env.cuda_driver_version));
  add("CUDA runtime", cuda_version(env.cuda_runtime_version));
  add("SM clock", clocks(env.sm_clock_mhz_start, env.sm_clock_mhz_end));
  add("memory clock", clocks(env.memory_clock_mhz_start, env.memory_clock_mhz_end));
  add("throttle reasons at end", throttle_reason_names(env.throttle_reasons_end));
  add("clocks", env.clocks_note.empty() ? "" : "unknown: " + env.clocks_note);
  add("host", env.host_name);
  add("compiler", env.compiler);
  add("flags", env.compiler_flags);
  add("build type", env.build_type);
  add("git revision", env.git_revision);
  add("time (UTC)", env.time_utc);
  return lines;
}

// The labelled lines joined into one line ("GPU: NVIDIA H100 · driver: ..."),
// "" when nothing is known.
inline std::string environment_summary(const Environment& env) {
  std::string text;
  for (const auto& [label, value] : environment_lines(env))
    text += (text.empty() ? "" : " \xC2\xB7 ") + label + ": " + value;
  return text;
}

// One difference between two runs as a phrase ("driver: 580.65.06 vs
// 575.51.03"), "?" standing for an unknown side.
inline std::string difference_text(const std::string& what, const std::string& a, const std::string& b) {
  return what + ": " + (a.empty() ? "?" : a) + " vs " + (b.empty() ? "?" : b);
}

// What differs between two runs' machines and builds, one phrase each
// ("GPU: NVIDIA H100 vs NVIDIA A100"). Revisions and times differ by design
// and are not listed; neither are clocks, which the caller may compare.
inline std::vector<std::string> environment_differences(const Environment& base, const Environment& next) {
  std::vector<std::string> differences;
  const auto check = [&](const char* what, const std::string& a, const std::string& b) {
    if (a != b) differences.push_back(difference_text(what, a, b));
  };
  check("GPU", base.gpu_name, next.gpu_name);
  check("GPU UUID", base.gpu_uuid, next.gpu_uuid);
  check("driver", base.driver_version, next.driver_version);
  check("CUDA runtime", std::to_string(base.cuda_runtime_version), std::to_string(next.cuda_runtime_version));
  check("host", base.host_name, next.host_name);
  check("compiler", base.compiler, next.compiler);
  check("flags", base.compiler_flags, next.compiler_flags);
  check("build type", base.build_type, next.build_type);
  return differences;
}

GPUPROF_NAMESPACE_END
