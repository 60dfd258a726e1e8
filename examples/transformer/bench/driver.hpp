// bench/driver.hpp: transformer_bench from parsed flags to written files.
#pragma once
#include "bench/driver_options.hpp"

namespace transformer::bench {

// Runs everything the options ask for and returns the exit status. Throws
// UsageError for bad input found before any measurement (unwritable paths,
// --device cuda without a GPU, an unreadable --torch-jsonl).
int run_driver(DriverOptions options);

}  // namespace transformer::bench
