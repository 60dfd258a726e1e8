// gpuprof/scope_clock.hpp: the raw stamp a scope takes, public for programs
// that measure what a scope costs (bench/overhead) against its parts.
//
// ```cpp
// #include <gpuprof/scope_clock.hpp>
// #include <cstdio>
// int main() {
//   const std::int64_t ticks = gpuprof::scope_clock_ticks();
//   std::printf("%s: %lld\n", gpuprof::scope_clock_is_tsc() ? "TSC" : "steady_clock ns",
//               static_cast<long long>(ticks));
// }
// ```
//
// Ticks are the time-stamp counter where it is invariant, steady_clock
// nanoseconds elsewhere (detail/tick_clock.hpp explains why and how report()
// converts them); the choice is made once per process.
#pragma once
#include <cstdint>

#include "config.hpp"
#include "detail/tsc.hpp"

GPUPROF_NAMESPACE_BEGIN

inline std::int64_t scope_clock_ticks() noexcept { return detail::host_ticks(); }
inline bool scope_clock_is_tsc() noexcept { return detail::ticks_are_tsc(); }

GPUPROF_NAMESPACE_END
