// profile/report_markdown.hpp: ProfileResults as the markdown report
// (DIR/profile.md): a summary across configurations for (a), (b) and (d),
// then one section per configuration answering (a)-(e), then the memory table.
#pragma once
#include <string>

#include "profile/profile_results.hpp"

namespace transformer::profile {

std::string profile_markdown(const ProfileResults& results);

// "forward-only step 1.234 -> 1.300 ms (+5.3%), train step ...": what kernel
// capture cost the configuration's runs (also printed while profiling).
std::string capture_overhead_text(const ConfigurationProfile& c);

}  // namespace transformer::profile
