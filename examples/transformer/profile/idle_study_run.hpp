// profile/idle_study_run.hpp: the GPU side of transformer_profile --idle-study
// (profile/idle_study.hpp says what it measures).
#pragma once
#include "profile/idle_study.hpp"
#include "profile/profile_options.hpp"

namespace transformer::profile {

// Every configuration x mode of `options`: eager and graph with capture off
// first (no CUPTI subscription exists yet), then both again under one
// KernelCapture for the idle shares. Throws harness::DeviceUnavailable
// without a GPU or CUPTI.
IdleStudy run_idle_study(const ProfileOptions& options);

}  // namespace transformer::profile
