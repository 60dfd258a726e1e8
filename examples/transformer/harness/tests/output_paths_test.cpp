// Tests of the up-front writability checks: bad paths are refused with the
// flag and the reason, good ones pass and leave nothing behind.
#include <doctest/doctest.h>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "harness/run_flags.hpp"
#include "harness/output.hpp"

using namespace transformer::harness;
namespace fs = std::filesystem;

namespace {

// A fresh empty directory under the system's temporary directory, removed at the end.
struct ScratchDirectory {
  fs::path path;
  ScratchDirectory() {
    path = fs::temp_directory_path() /
           ("transformer_bench_test_" + std::to_string(static_cast<long>(::getpid())));
    fs::remove_all(path);
    fs::create_directories(path);
  }
  ~ScratchDirectory() { fs::remove_all(path); }
};

void check_output_file(const std::string& flag, const std::string& path) {
  check_output_files({{flag, path}});
}

std::string usage_error_of(void (*check)(const std::string&, const std::string&), const std::string& flag,
                           const std::string& path) {
  try {
    check(flag, path);
  } catch (const UsageError& error) {
    return error.what();
  }
  return "";
}

}  // namespace

TEST_CASE("a writable file path passes and leaves the directory empty") {
  const ScratchDirectory scratch;
  CHECK_NOTHROW(check_output_file("--json", (scratch.path / "out.json").string()));
  CHECK(fs::is_empty(scratch.path));
}

TEST_CASE("standard output and devices pass: they are written in place") {
  CHECK_NOTHROW(check_output_file("--json", "-"));
  CHECK_NOTHROW(check_output_file("--csv", "/dev/null"));
}

TEST_CASE("missing directories and directory names are refused, naming the flag") {
  const ScratchDirectory scratch;
  const std::string missing =
      usage_error_of(check_output_file, "--csv", (scratch.path / "no" / "out.csv").string());
  CHECK(missing.find("--csv") != std::string::npos);
  CHECK(missing.find("no directory") != std::string::npos);

  const std::string directory = usage_error_of(check_output_file, "--json", scratch.path.string());
  CHECK(directory.find("is a directory") != std::string::npos);
}

TEST_CASE("an output naming an input or another output is a usage error") {
  const ScratchDirectory scratch;
  const std::string input = (scratch.path / "in.jsonl").string();
  { std::ofstream(input) << "{}"; }
  CHECK_THROWS_AS(check_output_files({{"--json", input}}, {input}), UsageError);
  CHECK_THROWS_AS(check_output_files({{"--json", "-"}, {"--csv", "-"}}), UsageError);
}

TEST_CASE("an output directory is created with its parents") {
  const ScratchDirectory scratch;
  const fs::path dump = scratch.path / "a" / "b";
  CHECK_NOTHROW(prepare_output_directory("--dump", dump.string()));
  CHECK(fs::is_directory(dump));
  CHECK(fs::is_empty(dump));

  // A regular file where the directory should be.
  const fs::path file = scratch.path / "file";
  { std::ofstream(file.string()) << "x"; }
  const std::string error = usage_error_of(prepare_output_directory, "--dump", file.string());
  CHECK(error.find("--dump") != std::string::npos);
}
