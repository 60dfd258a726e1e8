// profile/main.cpp: transformer_profile, the CS336 profiling questions (a)-(e)
// answered from kernels gpuprof captured (see --help and docs/profiling.md).
// Exit status: 0 done, 1 a configuration or an output failed, 2 bad flags,
// 3 no usable GPU or CUPTI cannot capture.
#include <gpuprof/terminal_text.hpp>
#include <gpuprof/atomic_file.hpp>
#include <gpuprof_cli/standard_output.hpp>

#include <cstdio>
#include <exception>
#include <filesystem>
#include <functional>
#include <iostream>

#include "harness/run_flags.hpp"
#include "harness/output.hpp"
#include "profile/counters_run.hpp"
#include "profile/idle_study_run.hpp"
#include "profile/profile_options.hpp"
#include "profile/profile_run.hpp"
#include "profile/report_json.hpp"
#include "profile/report_markdown.hpp"

namespace {

using namespace transformer::profile;

bool any_failed(const ProfileResults& results) {
  for (const ConfigurationProfile& c : results.configurations)
    if (c.status == RunStatus::error) return true;
  if (results.memory)
    for (const MemoryRow& row : results.memory->rows)
      if (row.status == RunStatus::error) return true;
  return false;
}

int write_memory_timeline(const ProfileOptions& options, const MemoryTimelineResults& results) {
  const std::string path = (std::filesystem::path(options.out_dir) / memory_timeline_markdown_file).string();
  gpuprof::write_file_atomically(path, memory_timeline_markdown(results));
  std::fprintf(stderr, "wrote %s and the pictures beside it\n", path.c_str());
  for (const MemoryTimelineRun& run : results.runs)
    if (run.status == RunStatus::error) return exit_run_failed;
  return exit_ok;
}

// The markdown on stdout, or DIR/<stem>.md and DIR/<stem>.json, each written whole.
void write_documents(const ProfileOptions& options, const std::string& stem, const std::string& markdown,
                     const std::function<std::string()>& json) {
  if (options.out_dir.empty()) {
    std::cout << markdown;
    return;
  }
  const std::filesystem::path dir(options.out_dir);
  const std::string markdown_path = (dir / (stem + ".md")).string(),
                    json_path = (dir / (stem + ".json")).string();
  gpuprof::write_file_atomically(markdown_path, markdown);
  gpuprof::write_file_atomically(json_path, json());
  std::fprintf(stderr, "wrote %s and %s\n", markdown_path.c_str(), json_path.c_str());
}

int write_counters(const ProfileOptions& options, const CountersResults& results) {
  write_documents(options, "roofline", counters_markdown(results), [&] { return counters_json(results); });
  for (const CountersRun& run : results.runs)
    if (run.status == RunStatus::error) return exit_run_failed;
  return exit_ok;
}

int write_outputs(const ProfileOptions& options, const ProfileResults& results) {
  write_documents(options, "profile", profile_markdown(results), [&] { return profile_json(results); });
  return any_failed(results) ? exit_run_failed : exit_ok;
}

int write_idle_study(const ProfileOptions& options, const IdleStudy& study) {
  write_documents(options, "idle_study", idle_study_markdown(study), [&] { return idle_study_json(study); });
  for (const IdleStudyRow& row : study.rows)
    if (row.status == RunStatus::error) return exit_run_failed;
  return exit_ok;
}

int run(const ProfileOptions& options) {
  // The device first: a machine without a GPU gets exit 3 and no directory.
  check_gpu();
  // Checked before any measurement, so a long run is never lost to a bad path.
  if (options.memory_timeline) {
    transformer::harness::prepare_output_directory("--out", options.out_dir);
    return write_memory_timeline(options, run_memory_timelines(options));
  }
  if (options.counters) {
    transformer::harness::prepare_output_directory("--out", options.out_dir);
    return write_counters(options, run_counters(options));
  }
  if (!options.out_dir.empty())
    transformer::harness::prepare_output_directory(
        "--out", (std::filesystem::path(options.out_dir) / (options.idle_study ? "" : "kern_sum")).string());
  if (options.idle_study) return write_idle_study(options, run_idle_study(options));
  return write_outputs(options, run_profile(options));
}

}  // namespace

int main(int argc, char** argv) {
  gpuprof::guard_standard_streams();
  try {
    const ProfileOptions options = parse_profile_options(std::vector<std::string>(argv + 1, argv + argc));
    if (options.help) {
      std::cout << profile_usage_text();
      return gpuprof::finish_standard_output("transformer_profile", exit_ok);
    }
    return gpuprof::finish_standard_output("transformer_profile", run(options));
  } catch (const transformer::harness::UsageError& error) {
    std::fprintf(stderr, "transformer_profile: %s\n(see transformer_profile --help)\n",
                 gpuprof::terminal_safe(error.what()).c_str());
    return exit_usage;
  } catch (const transformer::harness::DeviceUnavailable& error) {
    std::fprintf(stderr, "transformer_profile: %s\n", gpuprof::terminal_safe(error.what()).c_str());
    return exit_no_device;
  } catch (const std::exception& error) {
    std::fprintf(stderr, "transformer_profile: error: %s\n", gpuprof::terminal_safe(error.what()).c_str());
    return exit_run_failed;
  }
}
