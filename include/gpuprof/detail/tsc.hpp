// gpuprof/detail/tsc.hpp: the raw time stamp a scope stores, the TSC where it
// is invariant, steady_clock ns otherwise (tick_clock.hpp converts ticks).
#pragma once
#include <cstdint>

#include "../clock.hpp"
#include "../config.hpp"

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define GPUPROF_DETAIL_HAVE_TSC 1
#include <cpuid.h>
#else
#define GPUPROF_DETAIL_HAVE_TSC 0
#endif

GPUPROF_NAMESPACE_BEGIN
namespace detail {

#if GPUPROF_DETAIL_HAVE_TSC
// The compiler's builtins, not <x86intrin.h>: that header declares every x86
// intrinsic and alone costs a translation unit more than the rest of scope.hpp.
inline std::int64_t read_tsc() noexcept { return static_cast<std::int64_t>(__builtin_ia32_rdtsc()); }
inline void load_fence() noexcept { __builtin_ia32_lfence(); }
#endif

// Whether host_ticks() reads the TSC; decided once per process, so every tick
// a process stores has the same unit.
inline bool ticks_are_tsc() noexcept {
#if GPUPROF_DETAIL_HAVE_TSC
  static const bool invariant_tsc = [] {
    unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
    if (__get_cpuid(0x80000000u, &eax, &ebx, &ecx, &edx) == 0 || eax < 0x80000007u) return false;
    __get_cpuid(0x80000007u, &eax, &ebx, &ecx, &edx);
    return (edx & (1u << 8)) != 0;
  }();
  return invariant_tsc;
#else
  return false;
#endif
}

// The time stamp a scope stores: TSC ticks or steady_clock ns (see above).
// rdtsc is not ordered with the surrounding code; the few cycles it may move
// are far below the conversion's error.
inline std::int64_t host_ticks() noexcept {
#if GPUPROF_DETAIL_HAVE_TSC
  if (ticks_are_tsc()) return read_tsc();
#endif
  return host_now_ns();
}

}  // namespace detail
GPUPROF_NAMESPACE_END
