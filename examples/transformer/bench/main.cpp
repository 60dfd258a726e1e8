// bench/main.cpp: transformer_bench, the CS336 end-to-end benchmark of the
// Transformer LM (see --help). Exit status: 0 done, 1 a run failed or an
// output (standard output included) could not be written, 2 bad input,
// 3 --device cuda without a usable GPU.
#include <gpuprof/terminal_text.hpp>
#include <gpuprof_cli/standard_output.hpp>

#include <cstdio>
#include <exception>
#include <iostream>

#include "bench/driver.hpp"
#include "bench/driver_options.hpp"
#include "harness/device.hpp"

int main(int argc, char** argv) {
  using namespace transformer::bench;
  gpuprof::guard_standard_streams();
  try {
    DriverOptions options = parse_options(argc, argv);
    if (options.help) {
      std::cout << usage_text();
      return gpuprof::finish_standard_output("transformer_bench", 0);
    }
    return gpuprof::finish_standard_output("transformer_bench", run_driver(std::move(options)));
  } catch (const transformer::harness::UsageError& error) {
    std::fprintf(stderr, "transformer_bench: %s\n(see transformer_bench --help)\n",
                 gpuprof::terminal_safe(error.what()).c_str());
    return 2;
  } catch (const transformer::harness::DeviceUnavailable& error) {
    std::fprintf(stderr, "transformer_bench: %s\n", gpuprof::terminal_safe(error.what()).c_str());
    return 3;
  } catch (const std::exception& error) {
    std::fprintf(stderr, "transformer_bench: error: %s\n", gpuprof::terminal_safe(error.what()).c_str());
    return 1;
  }
}
