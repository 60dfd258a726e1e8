// model/init.hpp: deterministic parameter initialisation usable on host and
// device. Each element's value is a pure function of (seed, index), so the
// CUDA backend can initialise billions of parameters in parallel and the CPU
// backend gets the same numbers (up to float rounding of log/cos).
#pragma once
#include <cmath>
#include <cstdint>

#if defined(__CUDACC__)
#define TRANSFORMER_HD __host__ __device__
#else
#define TRANSFORMER_HD
#endif

namespace transformer {

TRANSFORMER_HD inline std::uint64_t splitmix64(std::uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

// Uniform in (0, 1): 53 random bits, never 0.
TRANSFORMER_HD inline double uniform_open01(std::uint64_t seed, std::uint64_t counter) {
  const std::uint64_t bits = splitmix64(seed ^ splitmix64(counter)) >> 11;
  return (static_cast<double>(bits) + 0.5) * (1.0 / 9007199254740992.0);
}

// Standard normal truncated to [-3, 3] for element `index`: Box–Muller on
// counter pairs, redrawn (with the next counters) until inside the cut.
TRANSFORMER_HD inline float truncated_normal(std::uint64_t seed, std::uint64_t index, double stddev) {
  // P(|z| > 3) = 0.27 %, so 64 draws all failing never happens in practice;
  // the bound only keeps the loop finite.
  for (std::uint64_t attempt = 0; attempt < 64; ++attempt) {
    const std::uint64_t counter = (index * 64u + attempt) * 2u;
    const double u1 = uniform_open01(seed, counter);
    const double u2 = uniform_open01(seed, counter + 1);
    const double z = std::sqrt(-2.0 * std::log(u1)) * std::cos(6.283185307179586 * u2);
    if (z >= -3.0 && z <= 3.0) return static_cast<float>(z * stddev);
  }
  return 0.0f;
}

}  // namespace transformer
