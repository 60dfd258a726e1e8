// gpuprof/clock.hpp: the host clock every gpuprof time stamp is taken with.
//
// One time axis for scopes, bench and kernel records (std::chrono::steady_clock,
// in integer nanoseconds), so host intervals and GPU activity line up. Scopes
// take a cheaper stamp and are converted onto it (detail/tick_clock.hpp).
#pragma once
#include <chrono>
#include <cstdint>

#include "config.hpp"

GPUPROF_NAMESPACE_BEGIN

// Nanoseconds of std::chrono::steady_clock: monotonic, never adjusted.
inline std::int64_t host_now_ns() noexcept {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

inline double ns_to_ms(std::int64_t nanoseconds) noexcept { return static_cast<double>(nanoseconds) * 1e-6; }

GPUPROF_NAMESPACE_END
