// Untrusted text, paths and sizes in the library: terminal_safe() and
// markdown cells, output paths judged whole before the work (name lengths,
// links in every directory), temporaries removed on a signal, and the
// communication/computation figures of deep trees and many steps computed
// as the plain definitions give them.
#include <doctest/doctest.h>

#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include <gpuprof/atomic_file.hpp>
#include <gpuprof/comm_overlap.hpp>
#include <gpuprof_cli/output_paths.hpp>
#include <gpuprof/table.hpp>

#include "support/temporary_directory.hpp"

namespace fs = std::filesystem;
using gpuprof_test::TemporaryDirectory;

namespace {

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

std::string refusal_of(const std::vector<gpuprof::OutputFile>& outputs) {
  try {
    gpuprof::check_output_files(outputs);
  } catch (const gpuprof::Error& error) {
    return error.what();
  }
  return "";
}

gpuprof::KernelRecord kernel_at(std::int64_t start, std::int64_t end, bool communication, int node = -1) {
  gpuprof::KernelRecord kernel;
  kernel.start_ns = start;
  kernel.end_ns = end;
  kernel.category = communication ? "communication" : "gemm";
  kernel.scope_node = node;
  return kernel;
}

}  // namespace

TEST_CASE("terminal_safe: control, bidi and invalid bytes escaped; printable text kept; idempotent") {
  using gpuprof::terminal_safe;
  CHECK(terminal_safe("a\x1b]0;x\x07") == "a\\x1b]0;x\\x07");
  CHECK(terminal_safe("\xe2\x80\xae"
                      "exe.txt") == "\\u202eexe.txt");  // right-to-left override
  CHECK(terminal_safe("\xe2\x81\xa6 \xd8\x9c \xe2\x80\x8f") == "\\u2066 \\u061c \\u200f");
  CHECK(terminal_safe("\xed\xa0\x80") == "\\xed\\xa0\\x80");  // a surrogate is not UTF-8
  CHECK(terminal_safe("\xc0\xaf") == "\\xc0\\xaf");           // nor an overlong form
  CHECK(terminal_safe("ok \xc2\xb1 \xe2\x86\x92 \\ done") == "ok \xc2\xb1 \xe2\x86\x92 \\ done");
  const std::string once = terminal_safe("\x1b[2J\xe2\x80\xae\xff");
  CHECK(terminal_safe(once) == once);
}

TEST_CASE("markdown cells: links, images and bare URLs in names stay text") {
  const std::string cell = gpuprof::detail::markdown_cell("![t](https://e.x/p.png) [c](http://e.x)");
  CHECK(cell == "!\\[t\\](https:\\//e.x/p.png) \\[c\\](http:\\//e.x)");
  CHECK_FALSE(contains(cell, "://"));
}

TEST_CASE("a long output name: one within NAME_MAX is written, a longer one refused before the work") {
  TemporaryDirectory dir;
  const std::string fits = dir.file(std::string(250, 'n'));
  CHECK(refusal_of({{"-o", fits}}).empty());
  gpuprof::write_file_atomically(fits, "whole");
  CHECK(fs::file_size(fits) == 5);
  CHECK(dir.entries().size() == 1);  // no temporary left

  const std::string too_long = dir.file(std::string(256, 'n'));
  CHECK(contains(refusal_of({{"-o", too_long}}), "NAME_MAX"));
  std::string deep = dir.path().string();
  while (deep.size() < PATH_MAX) deep += "/.";
  CHECK(contains(refusal_of({{"-o", deep + "/out.json"}}), "PATH_MAX"));
}

TEST_CASE("the temporary's name fits NAME_MAX whatever the file's name") {
  const std::string name(255, 'n');
  const std::string temporary = gpuprof::detail::temporary_name_beside("/some/dir/" + name);
  CHECK(temporary.rfind("/some/dir/", 0) == 0);
  CHECK(temporary.size() - std::string("/some/dir/").size() <= NAME_MAX);
  CHECK(contains(temporary, ".tmp-"));
}

TEST_CASE("a temporary being written is removed when SIGTERM, SIGINT or SIGHUP ends the process") {
  for (const int signal_number : {SIGTERM, SIGINT, SIGHUP}) {
    TemporaryDirectory dir;
    const std::string temporary = dir.file("out.json.tmp-test");
    const pid_t child = ::fork();
    REQUIRE(child >= 0);
    if (child == 0) {
      for (const int each : {SIGTERM, SIGINT, SIGHUP}) std::signal(each, SIG_DFL);  // as a fresh tool starts
      const gpuprof::detail::RegisteredTemporary registered(temporary);
      std::ofstream(temporary) << "half of it";
      std::raise(signal_number);
      ::_exit(0);  // not reached: the signal ends the process
    }
    int status = 0;
    REQUIRE(::waitpid(child, &status, 0) == child);
    CHECK(WIFSIGNALED(status));
    if (WIFSIGNALED(status)) CHECK(WTERMSIG(status) == signal_number);  // re-raised: the usual ending
    CHECK_FALSE(fs::exists(temporary));
  }
}

TEST_CASE("a directory link another user planted in a sticky world-writable directory is not followed") {
  if (::geteuid() != 0) {
    MESSAGE("skipped: planting a link owned by another user needs root");
    return;
  }
  TemporaryDirectory dir;
  const std::string shared = dir.file("st"), victim = dir.file("vd");
  fs::create_directory(shared);
  fs::create_directory(victim);
  REQUIRE(::chmod(shared.c_str(), 01777) == 0);
  const std::string planted = shared + "/dl";
  fs::create_directory_symlink("../vd", planted);
  REQUIRE(::lchown(planted.c_str(), 65534, 65534) == 0);  // nobody

  const std::string output = planted + "/x.html";
  CHECK(contains(refusal_of({{"-o", output}}), "owned by another user"));
  CHECK_THROWS_WITH_AS(gpuprof::write_file_atomically(output, "x"), doctest::Contains("protected_symlinks"),
                       gpuprof::Error);
  CHECK(fs::is_empty(victim));

  // A link of the writer's own is followed, in any component.
  REQUIRE(::lchown(planted.c_str(), 0, 0) == 0);
  CHECK(refusal_of({{"-o", output}}).empty());
  gpuprof::write_file_atomically(output, "mine");
  CHECK(fs::exists(victim + "/x.html"));
}

TEST_CASE("follow_symlinks resolves links in directory components and leaves plain paths as given") {
  TemporaryDirectory dir;
  fs::create_directory(dir.file("real"));
  fs::create_directory_symlink("real", dir.file("alias"));
  fs::create_symlink("../real/target", dir.file("real/file-link"));
  CHECK(gpuprof::detail::follow_symlinks(dir.file("real/x")) == dir.file("real/x"));
  CHECK(gpuprof::detail::follow_symlinks(dir.file("alias/x")) == dir.file("real/x"));
  CHECK(gpuprof::detail::follow_symlinks(dir.file("alias/file-link")) == dir.file("real/../real/target"));
}

// The definitions the fast versions must agree with: a scope's figures from
// the kernels of its subtree; a step's from the first step (in begin order)
// that holds the kernel's launch.
TEST_CASE("comm_compute_by_scope equals the union over each subtree, for random trees and a deep chain") {
  std::mt19937 random(7);
  for (int round = 0; round < 20; ++round) {
    gpuprof::Report report;
    const int nodes = round == 0 ? 3000 : 1 + static_cast<int>(random() % 40);
    for (int n = 0; n < nodes; ++n) {
      gpuprof::ScopeNode node;
      node.parent = n == 0 ? -1 : round == 0 ? n - 1 : static_cast<int>(random() % static_cast<unsigned>(n));
      node.path = std::to_string(n);
      report.nodes.push_back(node);
    }
    for (int k = 0; k < 200; ++k) {
      const std::int64_t start = random() % 1000;
      report.kernels.push_back(kernel_at(start, start + random() % 50, random() % 3 == 0,
                                         static_cast<int>(random() % static_cast<unsigned>(nodes))));
    }
    const std::vector<gpuprof::CommComputeTime> fast = gpuprof::comm_compute_by_scope(report);
    REQUIRE(fast.size() == report.nodes.size());
    for (int n = 0; n < nodes; n += round == 0 ? 97 : 1) {
      std::vector<gpuprof::KernelRecord> subtree;
      for (const gpuprof::KernelRecord& kernel : report.kernels)
        for (int at = kernel.scope_node; at >= 0; at = report.nodes[static_cast<std::size_t>(at)].parent)
          if (at == n) subtree.push_back(kernel);
      const gpuprof::CommComputeTime expected = gpuprof::comm_compute_time(subtree);
      CHECK(fast[static_cast<std::size_t>(n)].communication_ms == expected.communication_ms);
      CHECK(fast[static_cast<std::size_t>(n)].computation_ms == expected.computation_ms);
      CHECK(fast[static_cast<std::size_t>(n)].overlap_ms == expected.overlap_ms);
    }
  }
}

TEST_CASE("comm_compute_by_step equals the first step holding each launch, for overlapping steps") {
  std::mt19937 random(11);
  for (int round = 0; round < 20; ++round) {
    gpuprof::Report report;
    gpuprof::ScopeNode step;
    step.path = "step";
    report.nodes.push_back(step);
    for (std::uint64_t id = 1; id <= 30; ++id) {
      gpuprof::ScopeInstance instance;
      instance.id = id;
      instance.node = 0;
      instance.thread = static_cast<std::uint32_t>(random() % 3);
      instance.host_begin_ns = 1 + static_cast<std::int64_t>(random() % 1000);
      instance.host_end_ns = instance.host_begin_ns + static_cast<std::int64_t>(random() % 200);
      report.instances.push_back(instance);
    }
    for (int k = 0; k < 300; ++k) {
      gpuprof::KernelRecord kernel = kernel_at(0, 10, random() % 2 == 0);
      kernel.start_ns = static_cast<std::int64_t>(random() % 1000);
      kernel.end_ns = kernel.start_ns + 10;
      if (random() % 2) kernel.scope_instance = 1 + random() % 30;  // launched inside a step instance
      else kernel.launch_ns = 1 + static_cast<std::int64_t>(random() % 1200);
      report.kernels.push_back(kernel);
    }
    const std::vector<const gpuprof::ScopeInstance*> steps = gpuprof::step_instances(report, "step");
    std::vector<std::vector<gpuprof::KernelRecord>> expected(steps.size());
    for (const gpuprof::KernelRecord& kernel : report.kernels) {
      const gpuprof::ScopeInstance* launcher =
          kernel.scope_instance ? &report.instances[kernel.scope_instance - 1] : nullptr;
      const auto inside = [&](const gpuprof::ScopeInstance& s) {
        return launcher ? launcher->thread == s.thread && s.host_begin_ns <= launcher->host_begin_ns &&
                              launcher->host_end_ns <= s.host_end_ns
                        : s.host_begin_ns <= kernel.launch_ns && kernel.launch_ns <= s.host_end_ns;
      };
      const std::int64_t anchor = launcher ? launcher->host_begin_ns : kernel.launch_ns;
      std::size_t last_begun = steps.size();
      for (std::size_t s = 0; s < steps.size(); ++s)
        if (steps[s]->host_begin_ns <= anchor) last_begun = s;
      std::size_t chosen = steps.size();
      if (last_begun < steps.size() && inside(*steps[last_begun])) chosen = last_begun;
      for (std::size_t s = 0; chosen == steps.size() && s < steps.size(); ++s)
        if (inside(*steps[s])) chosen = s;
      if (chosen < steps.size()) expected[chosen].push_back(kernel);
    }
    const std::vector<gpuprof::CommComputeTime> fast = gpuprof::comm_compute_by_step(report, "step");
    REQUIRE(fast.size() == steps.size());
    for (std::size_t s = 0; s < steps.size(); ++s) {
      const gpuprof::CommComputeTime want = gpuprof::comm_compute_time(expected[s]);
      CHECK(fast[s].communication_ms == want.communication_ms);
      CHECK(fast[s].computation_ms == want.computation_ms);
      CHECK(fast[s].overlap_ms == want.overlap_ms);
    }
  }
}
