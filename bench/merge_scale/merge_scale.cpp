// merge_scale: what gpuprof-merge costs on the inputs that were once
// quadratic, against a budget each must meet:
//   deep chain      20,000 scopes, each inside the one before (two ranks):
//                   indentation and inclusive figures once grew with depth
//   steps x kernels 100,000 step instances and 100,000 kernels launched
//                   between steps (two ranks): each kernel once searched
//                   every step
//   flat, same size the same numbers of scopes / kernels in the ordinary
//                   shape, for reference
// Each case runs in a child process, so its peak memory (ru_maxrss) is its
// own: the reports are written as JSON files, then read back, merged,
// printed as text and written as merged JSON and a merged trace, exactly as
// gpuprof-merge does. The budget: time within 2x the case of the same size in
// the ordinary shape (a quadratic case is many times slower; a shared
// machine's speed cancels out), peak memory within 1 GiB, and output (text,
// JSON and trace together) within 4x the input. Exit 1 when a case misses it.
// Usage: merge_scale [--json PATH]
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <functional>
#include <iostream>
#include <string>
#include <vector>

#include <gpuprof/atomic_file.hpp>
#include <gpuprof/json_writer.hpp>
#include <gpuprof/merge.hpp>
#include <gpuprof/report.hpp>
#include <gpuprof/report/merged.hpp>
#include <gpuprof/report/read_json.hpp>
#include <gpuprof/table.hpp>

namespace {

constexpr double budget_time_ratio = 2;
constexpr double budget_mib = 1024;
constexpr double budget_output_ratio = 4;

gpuprof::ScopeNode node(const std::string& name, int parent, int depth) {
  gpuprof::ScopeNode scope;
  scope.name = scope.path = name;
  scope.parent = parent;
  scope.depth = depth;
  scope.count = 1;
  scope.host_ms = gpuprof::summarize({1.0});
  return scope;
}

gpuprof::ScopeInstance instance(std::uint64_t id, int node_index, std::int64_t begin, std::int64_t end) {
  gpuprof::ScopeInstance scope;
  scope.id = id;
  scope.node = node_index;
  scope.host_begin_ns = begin;
  scope.host_end_ns = end;
  return scope;
}

// `nested`: each scope inside the one before; else all at the top level.
gpuprof::Report scopes(int count, bool nested, int rank) {
  gpuprof::Report report;
  report.rank = {rank, 2, -1};
  for (int i = 0; i < count; ++i) {
    report.nodes.push_back(node("n" + std::to_string(i), nested ? i - 1 : -1, nested ? i : 0));
    const std::int64_t begin = nested ? i : 10 * i, end = nested ? 2 * count - i + rank : 10 * i + 5 + rank;
    report.instances.push_back(instance(static_cast<std::uint64_t>(i) + 1, i, begin, end));
  }
  return report;
}

// `count` instances of one step scope and `count` kernels; `between`: each
// kernel launched in the gap after a step (no step holds it), else inside.
gpuprof::Report steps_and_kernels(int count, bool between, int rank) {
  gpuprof::Report report;
  report.rank = {rank, 2, -1};
  report.nodes.push_back(node("step", -1, 0));
  report.nodes[0].count = static_cast<std::uint64_t>(count);
  for (int i = 0; i < count; ++i) {
    const std::int64_t begin = 1000 * (i + 1);
    report.instances.push_back(instance(static_cast<std::uint64_t>(i) + 1, 0, begin, begin + 500 + rank));
    gpuprof::KernelRecord kernel;
    kernel.name = kernel.base_name = "gemm";
    kernel.category = i % 4 == 0 ? "communication" : "gemm";
    kernel.launch_ns = begin + (between ? 700 : 100);
    kernel.start_ns = kernel.launch_ns + 10;
    kernel.end_ns = kernel.start_ns + 300;
    report.kernels.push_back(kernel);
  }
  return report;
}

struct Case {
  std::string name;
  std::function<gpuprof::Report(int rank)> make;
  int reference = -1;  // the ordinary case of the same size (index), -1 for those
};

struct Result {
  double seconds = 0;
  double peak_mib = 0;
  double input_bytes = 0;
  double output_bytes = 0;
  bool ok = false;
};

double file_bytes(const std::string& path) {
  struct stat status {};
  return ::stat(path.c_str(), &status) == 0 ? static_cast<double>(status.st_size) : 0;
}

// In a child: write both ranks' files, then time gpuprof-merge's work on them.
Result run_case(const Case& c, const std::string& directory) {
  int pipe_ends[2];
  if (::pipe(pipe_ends) != 0) throw std::runtime_error("pipe failed");
  const pid_t child = ::fork();
  if (child < 0) throw std::runtime_error("fork failed");
  if (child == 0) {
    ::close(pipe_ends[0]);
    Result result;
    try {
      std::vector<std::string> files;
      for (int rank = 0; rank < 2; ++rank) {
        files.push_back(directory + "/rank" + std::to_string(rank) + ".json");
        gpuprof::write_json(c.make(rank), files.back());
        result.input_bytes += file_bytes(files.back());
      }
      const auto start = std::chrono::steady_clock::now();
      std::vector<gpuprof::Report> reports;
      for (const std::string& file : files) reports.push_back(gpuprof::read_report_json(file));
      const gpuprof::MergedReport merged = gpuprof::merge(reports);
      const std::string text = gpuprof::to_table(merged);
      gpuprof::write_json(merged, directory + "/merged.json");
      gpuprof::write_chrome_trace(merged, reports, directory + "/trace.json");
      result.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      result.output_bytes = static_cast<double>(text.size()) + file_bytes(directory + "/merged.json") +
                            file_bytes(directory + "/trace.json");
      struct rusage usage {};
      ::getrusage(RUSAGE_SELF, &usage);
      result.peak_mib = static_cast<double>(usage.ru_maxrss) / 1024;  // KiB on Linux
      result.ok = true;
    } catch (const std::exception& error) {
      std::fprintf(stderr, "merge_scale: %s: %s\n", c.name.c_str(), error.what());
    }
    const ssize_t sent = ::write(pipe_ends[1], &result, sizeof result);
    ::_exit(sent == static_cast<ssize_t>(sizeof result) ? 0 : 1);
  }
  ::close(pipe_ends[1]);
  Result result;
  const ssize_t got = ::read(pipe_ends[0], &result, sizeof result);
  ::close(pipe_ends[0]);
  int status = 0;
  ::waitpid(child, &status, 0);
  if (got != static_cast<ssize_t>(sizeof result) || !WIFEXITED(status) || WEXITSTATUS(status) != 0)
    result.ok = false;
  return result;
}

}  // namespace

int main(int argc, char** argv) {
  std::string json_path;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--json") == 0 && i + 1 < argc) {
      json_path = argv[++i];
    } else {
      std::cerr << "usage: merge_scale [--json PATH]\n";
      return 2;
    }
  }
  char pattern[] = "/tmp/merge_scale-XXXXXX";
  if (::mkdtemp(pattern) == nullptr) {
    std::perror("merge_scale: mkdtemp");
    return 1;
  }
  const std::string directory = pattern;
  const std::vector<Case> cases = {
      {"flat, 20000 scopes", [](int rank) { return scopes(20000, false, rank); }},
      {"deep chain, 20000 scopes", [](int rank) { return scopes(20000, true, rank); }, 0},
      {"100k steps x 100k kernels inside steps",
       [](int rank) { return steps_and_kernels(100000, false, rank); }},
      {"100k steps x 100k kernels between steps",
       [](int rank) { return steps_and_kernels(100000, true, rank); }, 2},
  };

  gpuprof::Table table({{"case (two ranks)"},
                        {"input MB", gpuprof::Align::right},
                        {"seconds", gpuprof::Align::right},
                        {"x ordinary", gpuprof::Align::right},
                        {"peak MiB", gpuprof::Align::right},
                        {"output / input", gpuprof::Align::right},
                        {"within budget"}});
  gpuprof::JsonWriter json;
  json.begin_object()
      .member("benchmark", "merge_scale")
      .member("budget_time_ratio", budget_time_ratio)
      .member("budget_peak_mib", budget_mib)
      .member("budget_output_ratio", budget_output_ratio)
      .key("cases")
      .begin_array();
  bool all_within = true;
  std::vector<Result> results;
  for (const Case& c : cases) {
    const Result r = run_case(c, directory);
    results.push_back(r);
    const double ratio = r.input_bytes > 0 ? r.output_bytes / r.input_bytes : 0;
    const double time_ratio =
        c.reference < 0 ? 1 : r.seconds / results[static_cast<std::size_t>(c.reference)].seconds;
    const bool within =
        r.ok && time_ratio <= budget_time_ratio && r.peak_mib <= budget_mib && ratio <= budget_output_ratio;
    all_within = all_within && within;
    table.add_row({c.name, gpuprof::format_fixed(r.input_bytes / 1e6, 1), gpuprof::format_fixed(r.seconds, 2),
                   c.reference < 0 ? "-" : gpuprof::format_fixed(time_ratio, 2),
                   gpuprof::format_fixed(r.peak_mib, 0), gpuprof::format_fixed(ratio, 2),
                   !r.ok    ? "failed"
                   : within ? "yes"
                            : "NO"});
    json.begin_object(gpuprof::JsonWriter::one_line)
        .member("case", c.name)
        .member("ok", r.ok)
        .member("input_bytes", r.input_bytes)
        .member("seconds", r.seconds)
        .member("seconds_over_ordinary", time_ratio)
        .member("peak_mib", r.peak_mib)
        .member("output_bytes", r.output_bytes)
        .member("within_budget", within)
        .end_object();
  }
  json.end_array().end_object();
  for (const char* file : {"rank0.json", "rank1.json", "merged.json", "trace.json"})
    ::unlink((directory + "/" + file).c_str());
  ::rmdir(directory.c_str());

  std::cout << "merge_scale: gpuprof-merge's work (read, merge, text, JSON, trace); budget "
            << budget_time_ratio << "x the ordinary case's time, " << budget_mib
            << " MiB, output <= " << budget_output_ratio << "x input\n";
  table.print(std::cout);
  if (!json_path.empty()) gpuprof::write_file_atomically(json_path, json.str() + "\n");
  return all_within ? 0 : 1;
}
