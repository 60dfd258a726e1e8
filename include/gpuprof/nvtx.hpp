// gpuprof/nvtx.hpp: NVTX3 ranges in gpuprof's own domain.
//
// Every range is pushed in the domain "gpuprof" with a registered string (the
// tool hashes the text once, at registration, not per range) and an ARGB
// colour derived from the name by a stable hash, so "forward" has the same
// colour in every run and every tool. Without NVTX (GPUPROF_WITH_NVTX=0) the
// functions compile to nothing.
#pragma once
#include <cstdint>
#include <string>
#include <string_view>

#include "config.hpp"

#if GPUPROF_WITH_NVTX
#include <nvtx3/nvToolsExt.h>
#endif

GPUPROF_NAMESPACE_BEGIN

inline constexpr const char* nvtx_domain_name = "gpuprof";

// Opaque ARGB (alpha 0xFF) for a range name: hue from the 32-bit FNV-1a hash
// of the text, fixed saturation and value so every colour is readable on a
// timeline. Stable across runs, platforms and compilers.
constexpr std::uint32_t nvtx_colour(std::string_view name) noexcept {
  std::uint32_t hash = 2166136261u;
  for (char c : name) {
    hash ^= static_cast<unsigned char>(c);
    hash *= 16777619u;
  }
  // HSV -> RGB with S = 0.65, V = 0.90 in integer arithmetic; hue in [0, 1536).
  constexpr std::uint32_t value = 230, low = 230 * 35 / 100;  // V and V * (1 - S)
  const std::uint32_t hue = hash % 1536u, sector = hue / 256u, rise = hue % 256u;
  const std::uint32_t up = low + (value - low) * rise / 255u;
  const std::uint32_t down = value - (value - low) * rise / 255u;
  std::uint32_t r = 0, g = 0, b = 0;
  switch (sector) {
    case 0:
      r = value;
      g = up;
      b = low;
      break;
    case 1:
      r = down;
      g = value;
      b = low;
      break;
    case 2:
      r = low;
      g = value;
      b = up;
      break;
    case 3:
      r = low;
      g = down;
      b = value;
      break;
    case 4:
      r = up;
      g = low;
      b = value;
      break;
    default:
      r = value;
      g = low;
      b = down;
      break;
  }
  return 0xFF000000u | (r << 16) | (g << 8) | b;
}

#if GPUPROF_WITH_NVTX

namespace detail {
inline nvtxDomainHandle_t nvtx_domain() {
  static const nvtxDomainHandle_t domain = nvtxDomainCreateA(nvtx_domain_name);
  return domain;
}
// A range's attributes but its message: version, size and the colour.
inline nvtxEventAttributes_t nvtx_attributes(std::uint32_t argb) noexcept {
  nvtxEventAttributes_t attributes{};
  attributes.version = NVTX_VERSION;
  attributes.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
  attributes.colorType = NVTX_COLOR_ARGB;
  attributes.color = argb;
  return attributes;
}
}  // namespace detail

// A range name registered once with the NVTX tool (if one is attached) plus
// its colour. Create one per distinct name and keep it: registration is the
// expensive part, pushing it afterwards is not.
class NvtxName {
 public:
  explicit NvtxName(const std::string& text)
      : domain_(detail::nvtx_domain()), attributes_(detail::nvtx_attributes(nvtx_colour(text))) {
    attributes_.messageType = NVTX_MESSAGE_TYPE_REGISTERED;
    attributes_.message.registered = nvtxDomainRegisterStringA(domain_, text.c_str());
  }
  std::uint32_t argb() const noexcept { return attributes_.color; }

  // The attributes are built once, here: a push is the NVTX call and nothing
  // else (a scope pushes one per instance).
  void push() const noexcept { nvtxDomainRangePushEx(domain_, &attributes_); }

 private:
  nvtxDomainHandle_t domain_;
  nvtxEventAttributes_t attributes_;
};

// A range named by its text, unregistered (the tool copies the text): for
// a scope in a program with no recorder, which keeps no registered names
// (detail/scope_state.hpp). Same domain and colour as an NvtxName's.
inline void nvtx_push_text(const char* text) noexcept {
  nvtxEventAttributes_t attributes = detail::nvtx_attributes(nvtx_colour(text));
  attributes.messageType = NVTX_MESSAGE_TYPE_ASCII;
  attributes.message.ascii = text;
  nvtxDomainRangePushEx(detail::nvtx_domain(), &attributes);
}

inline void nvtx_pop() noexcept { nvtxDomainRangePop(detail::nvtx_domain()); }

#else  // no NVTX: same interface, no code

class NvtxName {
 public:
  explicit NvtxName(const std::string& text) : argb_(nvtx_colour(text)) {}
  std::uint32_t argb() const noexcept { return argb_; }
  void push() const noexcept {}

 private:
  std::uint32_t argb_;
};

inline void nvtx_push_text(const char*) noexcept {}
inline void nvtx_pop() noexcept {}

#endif

GPUPROF_NAMESPACE_END
