// tools/interleaved_runs.hpp: gpuprof-compare --run, two commands run
// alternately (ABBA) for N rounds, each writing one gpuprof file.
//
// Each command is the user's own shell text, run with /bin/sh -c (as make and
// CI systems run theirs), so quoting, pipes and variables mean what they
// mean in a shell. Every {out} in it becomes a path in a private temporary
// folder, single-quoted, so the path is one word whatever it holds; nothing
// else in the text is touched. The child's standard output and error go to
// files beside its output; a failure shows its standard error.
#pragma once
#include <gpuprof/atomic_file.hpp>
#include <gpuprof/compare.hpp>
#include <gpuprof/report/read_bench_json.hpp>
#include <gpuprof/error.hpp>

#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

namespace gpuprof_tools {

// The runs of each side, in round order: base[i] and next[i] ran in round i.
struct InterleavedRuns {
  std::vector<gpuprof::MeasuredRun> base, next;
};

// A private folder under $TMPDIR (or /tmp), removed with what the runs wrote.
class ScratchFolder {
 public:
  ScratchFolder() {
    const char* tmp = std::getenv("TMPDIR");
    std::string pattern = std::string(tmp && *tmp ? tmp : "/tmp") + "/gpuprof-compare.XXXXXX";
    if (!mkdtemp(pattern.data()))
      throw gpuprof::Error("cannot make a temporary folder " + pattern + ": " + std::strerror(errno));
    path_ = pattern;
  }
  ScratchFolder(const ScratchFolder&) = delete;
  ScratchFolder& operator=(const ScratchFolder&) = delete;
  ~ScratchFolder() {
    for (const std::string& file : files_) std::remove(file.c_str());
    rmdir(path_.c_str());
  }
  // A path inside, removed with the folder.
  std::string file(const std::string& name) {
    files_.push_back(path_ + "/" + name);
    return files_.back();
  }

 private:
  std::string path_;
  std::vector<std::string> files_;
};

// `text` as one /bin/sh word: single quotes, each ' written as '\''.
inline std::string shell_quoted(const std::string& text) {
  std::string quoted = "'";
  for (char c : text) quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return quoted + "'";
}

inline std::string with_output_path(const std::string& command, const std::string& path) {
  std::string result;
  for (std::size_t at = 0;;) {
    const std::size_t found = command.find("{out}", at);
    result += command.substr(at, found == std::string::npos ? std::string::npos : found - at);
    if (found == std::string::npos) return result;
    result += shell_quoted(path);
    at = found + 5;
  }
}

inline std::string file_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// Runs `command` with /bin/sh -c, its standard output and error into files;
// throws with its standard error unless it exits 0.
inline void run_command(const std::string& command, const std::string& what, const std::string& stdout_path,
                        const std::string& stderr_path) {
  std::cout.flush();
  std::cerr.flush();
  const pid_t child = fork();
  if (child < 0) throw gpuprof::Error(what + ": cannot start a process: " + std::strerror(errno));
  if (child == 0) {
    const int out = open(stdout_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    const int err = open(stderr_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    if (out < 0 || err < 0 || dup2(out, 1) < 0 || dup2(err, 2) < 0) _exit(126);
    execl("/bin/sh", "sh", "-c", command.c_str(), static_cast<char*>(nullptr));
    _exit(127);
  }
  int status = 0;
  while (waitpid(child, &status, 0) < 0)
    if (errno != EINTR) throw gpuprof::Error(what + ": lost its process: " + std::strerror(errno));
  if (WIFEXITED(status) && WEXITSTATUS(status) == 0) return;
  std::string errors = file_text(stderr_path);
  constexpr std::size_t shown = 4000;
  if (errors.size() > shown) errors = "..." + errors.substr(errors.size() - shown);
  const std::string how = WIFEXITED(status) ? "exited with status " + std::to_string(WEXITSTATUS(status))
                                            : "was killed by signal " + std::to_string(WTERMSIG(status));
  throw gpuprof::Error(what + " " + how + ": " + command +
                       (errors.empty() ? "" : "\nits standard error:\n" + errors));
}

// N rounds, base then new in odd rounds and new then base in even ones
// (ABBA...), so a drift in the machine's load falls on both sides alike.
// With `keep_folder` set, each run's file is copied there whole (base-1.json,
// new-1.json, ...). Each file is read under `clock_rule`. Throws
// gpuprof::Error (exit 2) at the first command that fails or writes no
// readable file.
inline InterleavedRuns run_interleaved(const std::string& base_command, const std::string& new_command,
                                       std::size_t rounds, const std::string& keep_folder,
                                       const gpuprof::ClockRule& clock_rule) {
  ScratchFolder scratch;
  InterleavedRuns runs;
  for (std::size_t round = 1; round <= rounds; ++round) {
    for (const bool base_side : {round % 2 == 1, round % 2 == 0}) {
      const std::string side = base_side ? "base" : "new";
      const std::string name = side + "-" + std::to_string(round);
      const std::string what =
          side + " command (round " + std::to_string(round) + " of " + std::to_string(rounds) + ")";
      const std::string out = scratch.file(name + ".json");
      std::cerr << "gpuprof-compare: round " << round << "/" << rounds << ": " << side << "\n";
      run_command(with_output_path(base_side ? base_command : new_command, out), what,
                  scratch.file(name + ".stdout"), scratch.file(name + ".stderr"));
      struct stat written {};
      if (stat(out.c_str(), &written) != 0 || written.st_size == 0)
        throw gpuprof::Error(what + " exited 0 but wrote nothing to {out}");
      gpuprof::MeasuredRun run;
      try {
        run = gpuprof::read_measured_run(out, clock_rule);
      } catch (const gpuprof::Error& error) {
        throw gpuprof::InputError(what + " wrote a file gpuprof-compare cannot read: " + error.what());
      }
      run.source = name;
      if (!keep_folder.empty())
        gpuprof::write_file_atomically(keep_folder + "/" + name + ".json", file_text(out));
      (base_side ? runs.base : runs.next).push_back(std::move(run));
    }
  }
  return runs;
}

}  // namespace gpuprof_tools
