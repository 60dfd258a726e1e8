// gpuprof/device.hpp: can gpuprof time on a CUDA device here, and which one?
//
// The same answer the profiler acts on: when the device is not usable, scopes
// and bench() time with the host clock, and `reason` says why. Asking leaves no
// CUDA error behind for the application's own checks.
#pragma once
#include "config.hpp"
#include "detail/device_probe.hpp"

GPUPROF_NAMESPACE_BEGIN

// DeviceStatus: usable, name ("NVIDIA H100 80GB HBM3"), reason (a phrase,
// "" when usable); defined beside the probe.
inline DeviceStatus device_status() { return detail::probe_device(); }

GPUPROF_NAMESPACE_END
