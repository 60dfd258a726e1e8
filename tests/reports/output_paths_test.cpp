// Tests of gpuprof::check_output_files (output_paths.hpp) and of the
// protected-symlinks rule of write_file_atomically: outputs that would land
// on an input or on each other are refused before any work, and a link
// planted by another user in a sticky world-writable directory is not followed.
#include <doctest/doctest.h>

#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include <gpuprof/atomic_file.hpp>
#include <gpuprof_cli/output_paths.hpp>

#include "support/json_parse.hpp"
#include "support/temporary_directory.hpp"

namespace fs = std::filesystem;
using gpuprof_test::read_text_file;
using gpuprof_test::TemporaryDirectory;

namespace {

std::string refusal_of(const std::vector<gpuprof::OutputFile>& outputs,
                       const std::vector<std::string>& inputs = {}) {
  try {
    gpuprof::check_output_files(outputs, inputs);
  } catch (const gpuprof::Error& error) {
    return error.what();
  }
  return "";
}

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

}  // namespace

TEST_CASE("an output that names an input is refused, however it is spelled") {
  TemporaryDirectory dir;
  const std::string input = dir.file("in.json");
  { std::ofstream(input) << "{}"; }
  CHECK(contains(refusal_of({{"-o", input}}, {input}), "is the input"));
  CHECK(contains(refusal_of({{"-o", dir.file("./in.json")}}, {input}), "is the input"));
  fs::create_hard_link(input, dir.file("hard.json"));
  CHECK(contains(refusal_of({{"-o", dir.file("hard.json")}}, {input}), "is the input " + input));
  fs::create_symlink("in.json", dir.file("link.json"));
  CHECK(contains(refusal_of({{"-o", dir.file("link.json")}}, {input}), "is the input"));
  CHECK(read_text_file(input) == "{}");
  CHECK(refusal_of({{"-o", dir.file("other.json")}}, {input}).empty());
  // A missing input is its reader's to report, not a reason to refuse an output.
  CHECK(refusal_of({{"-o", dir.file("other.json")}}, {dir.file("missing.json")}).empty());
}

TEST_CASE("two outputs with one path are refused, existing or not") {
  TemporaryDirectory dir;
  CHECK(contains(refusal_of({{"--json", dir.file("x")}, {"--csv", dir.file("x")}}),
                 "--csv '" + dir.file("x") + "': is also the output of --json"));
  CHECK(
      contains(refusal_of({{"--json", dir.file("x")},
                           {"--csv", dir.path().string() + "/../" + dir.path().filename().string() + "/x"}}),
               "is also the output of --json"));
  { std::ofstream(dir.file("y")) << "old"; }
  CHECK(contains(refusal_of({{"--json", dir.file("y")}, {"--trace", dir.file("y")}}), "is also the output"));
  CHECK(contains(refusal_of({{"--json", "-"}, {"--csv", "-"}}), "is also the output of --json '-'"));
  CHECK(refusal_of({{"--json", dir.file("a")}, {"--csv", dir.file("b")}, {"--trace", ""}}).empty());
  // Devices are written in place: /dev/null twice loses nothing.
  CHECK(refusal_of({{"--json", "/dev/null"}, {"--csv", "/dev/null"}}).empty());
  CHECK(dir.entries() == std::vector<std::string>{"y"});  // the checks leave nothing behind
}

TEST_CASE("directories, missing directories, loops of links are refused before any work") {
  TemporaryDirectory dir;
  CHECK(contains(refusal_of({{"--json", dir.path().string()}}), "is a directory"));
  CHECK(contains(refusal_of({{"--json", dir.file("no/x.json")}}), "no directory"));
  fs::create_symlink("loop-b", dir.file("loop-a"));
  fs::create_symlink("loop-a", dir.file("loop-b"));
  CHECK(contains(refusal_of({{"--json", dir.file("loop-a")}}), "--json '" + dir.file("loop-a") + "'"));
  // A dangling link into a missing directory: the write would fail at the end.
  fs::create_symlink("missing/run.json", dir.file("dangling"));
  CHECK(contains(refusal_of({{"--json", dir.file("dangling")}}), "no directory"));
  // A dangling link into a directory that exists creates its target, as the writer does.
  fs::create_symlink("run.json", dir.file("to-create"));
  CHECK(refusal_of({{"--json", dir.file("to-create")}}).empty());
  // ...and that target is the same file as a plain path to it.
  CHECK(contains(refusal_of({{"--json", dir.file("to-create")}, {"--csv", dir.file("run.json")}}),
                 "also the output"));
}

TEST_CASE("the protected-symlinks rule: who may follow a link in a sticky world-writable directory") {
  struct stat link {
  }, directory{};
  directory.st_mode = S_IFDIR | 01777;  // /tmp
  directory.st_uid = 0;
  link.st_uid = 1000;
  CHECK(gpuprof::detail::may_follow_link(link, directory, 1000));     // the link's owner
  CHECK_FALSE(gpuprof::detail::may_follow_link(link, directory, 0));  // root, someone else's link
  CHECK_FALSE(gpuprof::detail::may_follow_link(link, directory, 1001));
  link.st_uid = 0;
  CHECK(gpuprof::detail::may_follow_link(link, directory, 1001));  // owned by the directory's owner
  directory.st_mode = S_IFDIR | 0777;                              // not sticky: the rule does not apply
  link.st_uid = 1000;
  CHECK(gpuprof::detail::may_follow_link(link, directory, 0));
  directory.st_mode = S_IFDIR | 01755;  // sticky, not world-writable
  CHECK(gpuprof::detail::may_follow_link(link, directory, 0));
}

TEST_CASE("a link another user planted in a sticky world-writable directory is not followed") {
  if (::geteuid() != 0) {
    MESSAGE("skipped: planting a link owned by another user needs root");
    return;
  }
  TemporaryDirectory dir;
  const std::string shared = dir.file("shared");
  fs::create_directory(shared);
  REQUIRE(::chmod(shared.c_str(), 01777) == 0);
  const std::string victim = dir.file("victim.txt");
  { std::ofstream(victim) << "precious"; }
  const std::string planted = shared + "/report.json";
  fs::create_symlink(victim, planted);
  REQUIRE(::lchown(planted.c_str(), 65534, 65534) == 0);  // nobody

  CHECK(contains(refusal_of({{"--json", planted}}), "owned by another user"));
  try {
    gpuprof::write_file_atomically(planted, "overwritten");
    FAIL("the planted link was followed");
  } catch (const gpuprof::Error& error) {
    CHECK(contains(error.what(), "protected_symlinks"));
  }
  CHECK(read_text_file(victim) == "precious");
  CHECK(fs::is_symlink(planted));

  // The writer's own link in the same directory is followed as before.
  REQUIRE(::lchown(planted.c_str(), 0, 0) == 0);
  CHECK(refusal_of({{"--json", planted}}).empty());
  gpuprof::write_file_atomically(planted, "mine");
  CHECK(read_text_file(victim) == "mine");
}

TEST_CASE("any_to_standard_output: only \"-\" sends the human text to stderr") {
  CHECK(gpuprof::any_to_standard_output({{"--json", "x"}, {"--csv", "-"}}));
  CHECK_FALSE(gpuprof::any_to_standard_output({{"--json", "x"}, {"--csv", ""}}));
}
