// profile/report_markdown.hpp: ProfileResults as the markdown report
// (DIR/profile.md): a summary across configurations for (a), (b) and (d),
// then one section per configuration answering (a)-(e), then the memory table.
#pragma once
#include <ostream>
#include <string>
#include <vector>

#include "profile/profile_results.hpp"

namespace transformer::profile {

std::string profile_markdown(const ProfileResults& results);

// "- Note: ..." lines (what could not run and why), then a blank line; nothing
// without notes. Every markdown file of the profile lists its notes so.
void write_notes_markdown(std::ostream& out, const std::vector<std::string>& notes);

// "forward-only step 1.234 -> 1.300 ms (+5.3%), train step ...": what kernel
// capture cost the configuration's runs (also printed while profiling).
std::string capture_overhead_text(const ConfigurationProfile& c);

}  // namespace transformer::profile
