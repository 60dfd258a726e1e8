// ddp/main.cpp: transformer_ddp, data-parallel training of the Transformer LM
// over NCCL (see --help). Exit status: 0 done, 1 a rank failed or standard
// output could not be written, 2 bad input, 3 no usable GPU.
#include <gpuprof/terminal_text.hpp>
#include <gpuprof_cli/standard_output.hpp>

#include <chrono>
#include <cstdio>
#include <exception>
#include <iostream>

#include "ddp/launcher.hpp"
#include "ddp/ddp_options.hpp"
#include "ddp/rank_run.hpp"
#include "harness/output.hpp"

int main(int argc, char** argv) {
  using namespace transformer;
  using namespace transformer::ddp;
  gpuprof::guard_standard_streams();
  try {
    const DdpOptions options = parse_ddp_options(std::vector<std::string>(argv + 1, argv + argc));
    if (options.help) {
      std::cout << ddp_usage_text();
      return gpuprof::finish_standard_output("transformer_ddp", 0);
    }
    harness::check_output_files({{"--json", options.json_path}}, {});
    if (!options.report_dir.empty()) harness::prepare_output_directory("--reports", options.report_dir);
    const std::chrono::seconds timeout(options.timeout_s);

    if (options.launched_rank) {
      FileIdChannel ids(options.id_file, timeout);
      return gpuprof::finish_standard_output("transformer_ddp",
                                             run_rank(options, *options.launched_rank, ids));
    }
    const int visible = visible_gpus();
    if (visible == 0) {
      std::fprintf(stderr, "transformer_ddp: no usable GPU (no CUDA device visible)\n");
      return 3;
    }
    if (options.gpus > visible)
      throw harness::UsageError("--gpus " + std::to_string(options.gpus) + ": only " +
                                std::to_string(visible) + " GPU(s) visible");
    LaunchOptions launch;
    launch.world = options.gpus > 0 ? options.gpus : visible;
    launch.timeout = timeout;
    const int status = launch_forked(launch, [&](int rank, IdChannel& ids) {
      return gpuprof::finish_standard_output(
          "transformer_ddp", run_rank(options, gpuprof::RankInfo{rank, launch.world, rank}, ids));
    });
    return gpuprof::finish_standard_output("transformer_ddp", status);
  } catch (const harness::UsageError& error) {
    std::fprintf(stderr, "transformer_ddp: %s\n(see transformer_ddp --help)\n",
                 gpuprof::terminal_safe(error.what()).c_str());
    return 2;
  } catch (const std::exception& error) {
    std::fprintf(stderr, "transformer_ddp: error: %s\n", gpuprof::terminal_safe(error.what()).c_str());
    return 1;
  }
}
