// profile/one_step.hpp: a Report cut down to one timed step, for a Chrome
// trace that opens quickly and shows a single forward/backward/optimizer step.
#pragma once
#include <string>

#include <gpuprof/report_model.hpp>

namespace transformer::profile {

// The scope instances of the first timed step of the run under `root` (from
// the begin of its first <root>/forward execution to the begin of the next
// one, or to the end of the run), the activities they launched, and graph
// work that ran in that window. The scope tree (nodes) is kept whole. Throws std::runtime_error when the run
// has no timed forward scope.
gpuprof::Report one_step_report(const gpuprof::Report& report, const std::string& root);

}  // namespace transformer::profile
