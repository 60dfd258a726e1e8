// bench/output_paths.hpp: checks, before any measurement, that every output
// the user asked for can be written, so a long sweep is never lost to a typo
// in a path.
#pragma once
#include <string>

namespace transformer::bench {

// Throws UsageError naming the flag, the path and the system's reason when a
// file cannot be created at `path` (missing directory, no permission, a
// directory of that name). Leaves nothing behind.
void check_output_file(const std::string& flag, const std::string& path);

// Creates `directory` (and parents) if needed and checks it is writable.
void prepare_output_directory(const std::string& flag, const std::string& directory);

}  // namespace transformer::bench
