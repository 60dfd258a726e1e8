// gpuprof/detail/nvml.hpp: clocks, throttle reasons and the driver version
// from NVML, loaded at run time.
//
// NVML (libnvidia-ml.so.1) ships with the driver, not with the toolkit, so it
// is opened with dlopen when first asked for: a build needs neither its header
// nor its library, and a machine without a driver gets a clear "not available"
// instead of a link or load error. The few declarations used are repeated
// here with NVML's documented values.
#pragma once
#include <cstdint>
#include <string>
#include <utility>

#include "../config.hpp"

#if GPUPROF_WITH_CUDA
#include <dlfcn.h>
#endif

GPUPROF_NAMESPACE_BEGIN

// NVML's clocks-event ("throttle") reason bits (nvmlClocksEventReason*).
namespace throttle_reason {
constexpr std::uint64_t gpu_idle = 0x1;
constexpr std::uint64_t applications_clocks_setting = 0x2;
constexpr std::uint64_t sw_power_cap = 0x4;
constexpr std::uint64_t hw_slowdown = 0x8;
constexpr std::uint64_t sync_boost = 0x10;
constexpr std::uint64_t sw_thermal_slowdown = 0x20;
constexpr std::uint64_t hw_thermal_slowdown = 0x40;
constexpr std::uint64_t hw_power_brake_slowdown = 0x80;
// The reasons that mean "slower than this GPU runs unhindered": power and
// thermal limits and hardware slowdowns. Idle, application clocks and sync
// boost are settings or states, not a sample that ran slow.
constexpr std::uint64_t slows_samples =
    sw_power_cap | hw_slowdown | sw_thermal_slowdown | hw_thermal_slowdown | hw_power_brake_slowdown;
}  // namespace throttle_reason

// "sw_power_cap+hw_slowdown" for the bits of `reasons`; "" for none.
inline std::string throttle_reason_names(std::uint64_t reasons) {
  static const std::pair<std::uint64_t, const char*> names[] = {
      {throttle_reason::gpu_idle, "gpu_idle"},
      {throttle_reason::applications_clocks_setting, "applications_clocks_setting"},
      {throttle_reason::sw_power_cap, "sw_power_cap"},
      {throttle_reason::hw_slowdown, "hw_slowdown"},
      {throttle_reason::sync_boost, "sync_boost"},
      {throttle_reason::sw_thermal_slowdown, "sw_thermal_slowdown"},
      {throttle_reason::hw_thermal_slowdown, "hw_thermal_slowdown"},
      {throttle_reason::hw_power_brake_slowdown, "hw_power_brake_slowdown"}};
  std::string text;
  for (const auto& [bit, name] : names)
    if (reasons & bit) text += (text.empty() ? "" : "+") + std::string(name);
  return text;
}

// One reading of a GPU's clocks; -1 where unknown.
struct ClockSample {
  int sm_mhz = -1;
  int memory_mhz = -1;
  std::uint64_t throttle_reasons = 0;  // throttle_reason bits
  bool throttled() const { return (throttle_reasons & throttle_reason::slows_samples) != 0; }
};

namespace detail {

#if GPUPROF_WITH_CUDA
class Nvml {
 public:
  // The process-wide library, opened and initialised on first use.
  static Nvml& instance() {
    static Nvml nvml;
    return nvml;
  }
  bool available() const { return why_not_.empty(); }
  const std::string& why_not() const { return why_not_; }

  // The driver's version ("580.65.06"); "" when NVML is not available.
  std::string driver_version() const {
    char text[96] = {};
    if (!available() || system_get_driver_version_(text, sizeof text) != 0) return {};
    return text;
  }

  // Clocks of the GPU with this UUID ("GPU-8c3b...") now; unknown fields stay -1.
  ClockSample clocks(const std::string& uuid) const {
    ClockSample sample;
    void* device = nullptr;
    if (!available() || uuid.empty() || device_get_handle_by_uuid_(uuid.c_str(), &device) != 0) return sample;
    unsigned int mhz = 0;
    if (device_get_clock_info_(device, clock_sm, &mhz) == 0) sample.sm_mhz = static_cast<int>(mhz);
    if (device_get_clock_info_(device, clock_memory, &mhz) == 0) sample.memory_mhz = static_cast<int>(mhz);
    unsigned long long reasons = 0;
    if (device_get_throttle_reasons_(device, &reasons) == 0) sample.throttle_reasons = reasons;
    return sample;
  }

 private:
  static constexpr int clock_sm = 1;      // NVML_CLOCK_SM
  static constexpr int clock_memory = 2;  // NVML_CLOCK_MEM

  Nvml() {
    library_ = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
    if (library_ == nullptr) {
      const char* error = dlerror();
      why_not_ = std::string("NVML not loaded (") + (error ? error : "libnvidia-ml.so.1") + ")";
      return;
    }
    const bool found = load(init_, "nvmlInit_v2") &&
                       load(system_get_driver_version_, "nvmlSystemGetDriverVersion") &&
                       load(device_get_handle_by_uuid_, "nvmlDeviceGetHandleByUUID") &&
                       load(device_get_clock_info_, "nvmlDeviceGetClockInfo") &&
                       load(device_get_throttle_reasons_, "nvmlDeviceGetCurrentClocksThrottleReasons");
    if (!found) {
      why_not_ = "NVML lacks a function gpuprof needs (" + missing_ + ")";
      return;
    }
    if (const int status = init_(); status != 0)
      why_not_ = "nvmlInit_v2 failed with status " + std::to_string(status);
  }
  // The library stays loaded and initialised for the life of the process: a
  // report or a bench may ask at exit time.
  Nvml(const Nvml&) = delete;
  Nvml& operator=(const Nvml&) = delete;

  template <class Function>
  bool load(Function*& function, const char* name) {
    function = reinterpret_cast<Function*>(dlsym(library_, name));
    if (function == nullptr) missing_ = name;
    return function != nullptr;
  }

  void* library_ = nullptr;
  std::string why_not_;
  std::string missing_;
  int (*init_)() = nullptr;
  int (*system_get_driver_version_)(char*, unsigned int) = nullptr;
  int (*device_get_handle_by_uuid_)(const char*, void**) = nullptr;
  int (*device_get_clock_info_)(void*, int, unsigned int*) = nullptr;
  int (*device_get_throttle_reasons_)(void*, unsigned long long*) = nullptr;
};
#endif

}  // namespace detail
GPUPROF_NAMESPACE_END
