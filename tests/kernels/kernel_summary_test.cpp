// Kernel joins and nsys-style summaries on a synthetic report: two threads,
// nested scopes, kernels inside and outside scopes, a copy; then CUDA-graph
// work (node ids mapped to capture scopes through clones, one execution per
// graph launch). Every expected number below is worked out by hand.
#include <doctest/doctest.h>

#include <gpuprof/detail/cupti_join.hpp>
#include <gpuprof/kernel_summary.hpp>
#include <gpuprof/report/kernel_summary_writers.hpp>

#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include "support/json_parse.hpp"

using namespace gpuprof;

namespace {
ScopeNode node(const std::string& path, int parent, int depth, std::uint64_t count) {
  ScopeNode n;
  n.path = path;
  n.name = path.substr(path.rfind('/') == std::string::npos ? 0 : path.rfind('/') + 1);
  n.parent = parent;
  n.depth = depth;
  n.count = count;
  return n;
}

ScopeInstance instance(std::uint64_t id, int node_index, std::uint32_t thread, std::int64_t begin,
                       std::int64_t end) {
  ScopeInstance i;
  i.id = id;
  i.node = node_index;
  i.thread = thread;
  i.host_begin_ns = begin;
  i.host_end_ns = end;
  return i;
}

KernelRecord kernel(const std::string& name, const std::string& category, std::uint64_t scope,
                    std::int64_t start, std::int64_t end, ActivityKind kind = ActivityKind::kernel) {
  KernelRecord k;
  k.kind = kind;
  k.name = name + "(float*)";
  k.base_name = name;
  k.category = category;
  k.scope_instance = scope;
  k.start_ns = start;
  k.end_ns = end;
  return k;
}

//   thread 0: step#1 [forward#2 [attention#3], backward#4], step#5 [forward#6 [attention#7], backward#8],
//             eval#9 [forward#10]
//   thread 1: step#11 [forward#12], overlapping step#1 in time
Report make_report() {
  Report r;
  r.nodes = {
      node("step", -1, 0, 3),         node("step/forward", 0, 1, 3), node("step/forward/attention", 1, 2, 2),
      node("step/backward", 0, 1, 2), node("eval", -1, 0, 1),        node("eval/forward", 4, 1, 1)};
  r.nodes[2].gpu_ms = summarize({0.5, 1.0});
  r.instances = {
      instance(1, 0, 0, 0, 1000),    instance(11, 0, 1, 20, 950),   instance(2, 1, 0, 10, 500),
      instance(12, 1, 1, 30, 600),   instance(3, 2, 0, 100, 400),   instance(4, 3, 0, 510, 990),
      instance(5, 0, 0, 2000, 3000), instance(6, 1, 0, 2010, 2500), instance(7, 2, 0, 2100, 2400),
      instance(8, 3, 0, 2510, 2990), instance(9, 4, 0, 4000, 5000), instance(10, 5, 0, 4010, 4900)};
  r.instances[4].gpu_ms = 0.25;
  r.kernels = {kernel("gemm_k", "gemm", 2, 20, 120),
               kernel("gemm_k", "gemm", 3, 150, 350),
               kernel("softmax_k", "softmax", 3, 360, 410),
               kernel("gemm_k", "gemm", 6, 2020, 2420),
               kernel("gemm_k", "gemm", 7, 2430, 3330),
               kernel("softmax_k", "softmax", 7, 3340, 3430),
               kernel("add_k", "elementwise", 4, 600, 630),
               kernel("add_k", "elementwise", 8, 3500, 3540),
               kernel("gemm_k", "gemm", 10, 4100, 4110),
               kernel("add_k", "elementwise", 0, 5000, 5005),
               kernel("gemm_k", "gemm", 12, 700, 760),
               kernel("[CUDA memcpy Host-to-Device]", "memory", 2, 130, 140, ActivityKind::memcpy)};
  return r;
}

const KernelSummaryRow& row_named(const std::vector<KernelSummaryRow>& rows, const std::string& name) {
  for (const KernelSummaryRow& row : rows)
    if (row.name == name) return row;
  FAIL("no row " << name);
  return rows.front();
}

std::uint64_t count_instances(const std::vector<KernelSummaryRow>& rows) {
  std::uint64_t n = 0;
  for (const KernelSummaryRow& row : rows) n += row.instances;
  return n;
}
}  // namespace

TEST_CASE("join: correlation ids give each record its scope instance and launch time") {
  detail::CorrelationTables tables;
  tables.add_external(7, 42);
  tables.add_external(8, 43);
  tables.add_api_call(7, 1000);  // runtime call
  tables.add_api_call(7, 1010);  // the driver call inside it: the earlier start wins
  tables.add_api_call(9, 2000);  // launched outside any scope
  std::vector<KernelRecord> records(4);
  records[0].correlation_id = 7;
  records[1].correlation_id = 8;
  records[2].correlation_id = 9;
  records[3].correlation_id = 10;  // its API record was lost
  CHECK(detail::join_correlations(records, tables) == 2);
  CHECK(records[0].scope_instance == 42);
  CHECK(records[0].launch_ns == 1000);
  CHECK(records[1].scope_instance == 43);
  CHECK(records[1].launch_ns == 0);
  CHECK(records[2].scope_instance == 0);
  CHECK(records[2].launch_ns == 2000);
  CHECK(records[3].scope_instance == 0);
}

TEST_CASE("scope index recovers instance nesting per thread") {
  const Report r = make_report();
  const detail::ScopeIndex index(r);
  const auto parent_id = [&](std::size_t i) {
    const int p = index.parent_instance(static_cast<int>(i));
    return p < 0 ? std::uint64_t{0} : r.instances[static_cast<std::size_t>(p)].id;
  };
  CHECK(parent_id(0) == 0);   // step#1
  CHECK(parent_id(2) == 1);   // forward#2 in step#1
  CHECK(parent_id(3) == 11);  // forward#12 is thread 1's: in step#11, not step#1
  CHECK(parent_id(4) == 2);   // attention#3
  CHECK(parent_id(8) == 6);   // attention#7
  CHECK(parent_id(11) == 9);  // eval/forward#10
}

TEST_CASE("kern_sum: every nsys column, even-count median, sample stddev") {
  const Report r = make_report();
  // "forward" matches step/forward and eval/forward; inclusive adds attention.
  const std::vector<KernelSummaryRow> rows = kern_sum(r, "forward");
  REQUIRE(rows.size() == 2);
  const KernelSummaryRow& gemm = rows[0];  // sorted by total time
  CHECK(gemm.name == "gemm_k(float*)");
  CHECK(gemm.category == "gemm");
  CHECK(gemm.instances == 6);  // 100, 200, 400, 900, 10, 60
  CHECK(gemm.total_ns == 1670);
  CHECK(gemm.avg_ns == doctest::Approx(1670.0 / 6));
  CHECK(gemm.median_ns == doctest::Approx(150));  // (100 + 200) / 2
  CHECK(gemm.min_ns == 10);
  CHECK(gemm.max_ns == 900);
  CHECK(gemm.stddev_ns == doctest::Approx(334.3300).epsilon(1e-6));  // sqrt(558883.33 / 5)
  CHECK(gemm.time_percent == doctest::Approx(100.0 * 1670 / 1810));
  const KernelSummaryRow& softmax = rows[1];
  CHECK(softmax.instances == 2);
  CHECK(softmax.total_ns == 140);
  CHECK(softmax.median_ns == doctest::Approx(70));
  CHECK(softmax.stddev_ns == doctest::Approx(std::sqrt(2 * 20.0 * 20.0)));  // |50 - 90| / sqrt(2)
  CHECK(gemm.time_percent + softmax.time_percent == doctest::Approx(100));

  // One instance: stddev 0, median = the value.
  const std::vector<KernelSummaryRow> eval = kern_sum(r, "eval");
  REQUIRE(eval.size() == 1);
  CHECK(eval[0].instances == 1);
  CHECK(eval[0].median_ns == doctest::Approx(10));
  CHECK(eval[0].stddev_ns == 0);
}

TEST_CASE("selection: whole run, exact path, innermost vs inclusive, copies") {
  const Report r = make_report();
  CHECK(select_kernels(r).size() == 11);  // kernels only, outside scopes too
  CHECK(select_kernels(r, "", ScopeView::inclusive, Activities::all).size() == 12);
  CHECK(count_instances(kern_sum(r)) == 11);
  CHECK(row_named(kern_sum(r), "add_k(float*)").instances == 3);  // includes the unscoped one

  CHECK(select_kernels(r, "step/forward").size() == 7);                        // not eval/forward's
  CHECK(select_kernels(r, "step/forward", ScopeView::innermost).size() == 3);  // 100, 400, 60
  CHECK(select_kernels(r, "step/forward", ScopeView::innermost, Activities::all).size() == 4);
  CHECK(select_kernels(r, "step").size() == 9);
  CHECK(select_kernels(r, "step", ScopeView::innermost).empty());
  CHECK(select_kernels(r, "attention").size() == 4);
  CHECK(select_kernels(r, "ward").empty());  // suffixes match whole components only
  CHECK(select_kernels(r, "no/such/scope").empty());

  const auto by_base = kern_sum(select_kernels(r, "step"), KernelGrouping::base_name);
  CHECK(row_named(by_base, "gemm_k").instances == 5);
}

TEST_CASE("scope_kern_sum lists each scope's kernels in both views") {
  const Report r = make_report();
  const std::vector<ScopeKernelRow> rows = scope_kern_sum(r, "step/forward");
  // step/forward: innermost {gemm}, inclusive {gemm, softmax}; attention: {gemm, softmax} x 2 views.
  REQUIRE(rows.size() == 7);
  CHECK(rows[0].range == "step/forward");
  CHECK(rows[0].view == ScopeView::innermost);
  CHECK(rows[0].scope_instances == 3);
  CHECK(rows[0].kernel.instances == 3);
  CHECK(rows[0].kernel.total_ns == 560);
  CHECK(rows[0].kernel.time_percent == doctest::Approx(100));
  CHECK(rows[1].view == ScopeView::inclusive);
  CHECK(rows[1].kernel.total_ns == 1660);
  CHECK(rows[1].kernel.time_percent == doctest::Approx(100.0 * 1660 / 1800));
  CHECK(rows[2].kernel.name == "softmax_k(float*)");
  CHECK(rows[3].range == "step/forward/attention");
  CHECK(rows[3].kernel.total_ns == 1100);
  CHECK(rows[3].kernel.time_percent == doctest::Approx(100.0 * 1100 / 1240));

  std::uint64_t innermost_total = 0;  // innermost views partition the scoped kernels
  for (const ScopeKernelRow& row : scope_kern_sum(r))
    if (row.view == ScopeView::innermost) innermost_total += row.kernel.instances;
  CHECK(innermost_total == 10);
}

TEST_CASE("per execution: projection, summed time, event time") {
  const Report r = make_report();
  const std::vector<InstanceGpuTime> times = instance_gpu_times(r);
  REQUIRE(times.size() == r.instances.size());
  const auto of = [&](std::uint64_t id) {
    for (const InstanceGpuTime& t : times)
      if (t.instance_id == id) return t;
    FAIL("no instance " << id);
    return times.front();
  };
  CHECK(of(2).activities == 4);  // two gemms, softmax, the copy
  CHECK(of(2).first_start_ns == 20);
  CHECK(of(2).last_end_ns == 410);
  CHECK(of(2).projection_ns == 390);
  CHECK(of(2).summed_ns == 360);
  CHECK(of(1).projection_ns == 610);  // up to backward's add at 630
  CHECK(of(1).summed_ns == 390);
  CHECK(of(11).projection_ns == 60);  // only thread 1's kernel
  CHECK(of(3).event_ms == doctest::Approx(0.25));
  CHECK(of(9).activities == 1);
  CHECK(of(5).activities == 4);
}

TEST_CASE("per scope: GPU summary and category breakdown") {
  const Report r = make_report();
  const std::vector<ScopeGpuSummary> all = scope_gpu_summary(r);
  REQUIRE(all.size() == r.nodes.size());
  const ScopeGpuSummary& attention = all[2];
  CHECK(attention.path == "step/forward/attention");
  CHECK(attention.instances == 2);
  CHECK(attention.projection_ns == 260 + 1000);
  CHECK(attention.summed_ns == 1240);
  CHECK(attention.event_ms == doctest::Approx(1.5));
  CHECK(all[0].event_ms < 0);  // not GPU-timed
  REQUIRE(attention.categories.size() == kernel_categories().size());
  CHECK(attention.categories[0].category == "gemm");
  CHECK(attention.categories[0].total_ns == 1100);
  CHECK(attention.categories[0].percent == doctest::Approx(100.0 * 1100 / 1240));
  CHECK(attention.categories[2].category == "softmax");
  CHECK(attention.categories[2].percent == doctest::Approx(100.0 * 140 / 1240));

  const std::vector<ScopeGpuSummary> forward = scope_gpu_summary(r, "step/forward");
  REQUIRE(forward.size() == 2);
  double percent = 0;
  for (const CategoryShare& share : forward[0].categories) percent += share.percent;
  CHECK(percent == doctest::Approx(100));
  CHECK(forward[0].categories[6].category == "memory");
  CHECK(forward[0].categories[6].total_ns == 10);

  std::vector<KernelRecord> custom = {kernel("x", "mine", 0, 0, 10)};
  const std::vector<CategoryShare> shares = category_breakdown(custom);
  CHECK(shares.back().category == "mine");
  CHECK(shares.back().percent == doctest::Approx(100));
}

namespace {
// RFC 4180 fields of one CSV line.
std::vector<std::string> csv_fields(const std::string& line) {
  std::vector<std::string> fields(1);
  bool quoted = false;
  for (std::size_t i = 0; i < line.size(); ++i) {
    const char c = line[i];
    if (quoted && c == '"' && i + 1 < line.size() && line[i + 1] == '"') {
      fields.back() += '"';
      ++i;
    } else if (c == '"') {
      quoted = !quoted;
    } else if (c == ',' && !quoted) {
      fields.emplace_back();
    } else {
      fields.back() += c;
    }
  }
  return fields;
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::size_t at = 0;
  for (std::size_t next; (next = text.find('\n', at)) != std::string::npos; at = next + 1)
    lines.push_back(text.substr(at, next - at));
  return lines;
}

struct TempDir {
  std::filesystem::path path =
      std::filesystem::temp_directory_path() / ("gpuprof_kernel_summary_" + std::to_string(::getpid()));
  TempDir() { std::filesystem::create_directories(path); }
  ~TempDir() { std::filesystem::remove_all(path); }
};
}  // namespace

TEST_CASE("writers: CSV with nsys headers, JSON and markdown read back") {
  Report r = make_report();
  r.kernels[0].name = "void f<4, \"q\">(int, float)";  // commas and quotes must survive CSV
  const std::vector<KernelSummaryRow> rows = kern_sum(r, "step/forward");
  TempDir dir;

  const std::string csv_path = (dir.path / "kern_sum.csv").string();
  write(rows, csv_path);
  const std::vector<std::string> lines = lines_of(gpuprof_test::read_text_file(csv_path));
  REQUIRE(lines.size() == rows.size() + 1);
  CHECK(lines[0] ==
        "\"Time (%)\",\"Total Time (ns)\",\"Instances\",\"Avg (ns)\",\"Med (ns)\",\"Min (ns)\",\"Max (ns)\","
        "\"StdDev (ns)\",\"Name\"");
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const std::vector<std::string> fields = csv_fields(lines[i + 1]);
    REQUIRE(fields.size() == 9);
    CHECK(std::fabs(std::stod(fields[0]) - rows[i].time_percent) <= 0.05 + 1e-9);  // one decimal, like nsys
    CHECK(std::stoll(fields[1]) == rows[i].total_ns);
    CHECK(std::stoull(fields[2]) == rows[i].instances);
    CHECK(std::fabs(std::stod(fields[3]) - rows[i].avg_ns) <= 0.05 + 1e-9);
    CHECK(std::fabs(std::stod(fields[4]) - rows[i].median_ns) <= 0.05 + 1e-9);
    CHECK(std::stoll(fields[5]) == rows[i].min_ns);
    CHECK(std::stoll(fields[6]) == rows[i].max_ns);
    CHECK(std::fabs(std::stod(fields[7]) - rows[i].stddev_ns) <= 0.05 + 1e-9);
    CHECK(fields[8] == rows[i].name);
  }

  const std::string json_path = (dir.path / "kern_sum.json").string();
  write(rows, json_path);
  const gpuprof_test::Json doc = gpuprof_test::parse_json_file(json_path);
  REQUIRE(doc["kern_sum"].size() == rows.size());
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const gpuprof_test::Json& row = doc["kern_sum"][static_cast<int>(i)];
    CHECK(row["name"].as_string() == rows[i].name);
    CHECK(row["category"].as_string() == rows[i].category);
    CHECK(row["total_ns"].as_int64() == rows[i].total_ns);
    CHECK(row["instances"].as_int64() == static_cast<std::int64_t>(rows[i].instances));
    CHECK(row["median_ns"].as_number() == rows[i].median_ns);
    CHECK(row["stddev_ns"].as_number() == rows[i].stddev_ns);
    CHECK(row["time_percent"].as_number() == rows[i].time_percent);
  }

  const std::vector<ScopeKernelRow> scoped = scope_kern_sum(r);
  const std::string scoped_csv = (dir.path / "scope_kern_sum.csv").string();
  write(scoped, scoped_csv);
  const std::vector<std::string> scoped_lines = lines_of(gpuprof_test::read_text_file(scoped_csv));
  REQUIRE(scoped_lines.size() == scoped.size() + 1);
  CHECK(csv_fields(scoped_lines[0]).front() == "Range");
  CHECK(csv_fields(scoped_lines[0]).back() == "Kernel Name");
  CHECK(csv_fields(scoped_lines[1])[0] == scoped[0].range);
  CHECK(csv_fields(scoped_lines[1])[1] == "inclusive");  // "step" launches nothing itself

  const std::string scoped_json = (dir.path / "scope_kern_sum.json").string();
  write(scoped, scoped_json);
  const gpuprof_test::Json scoped_doc = gpuprof_test::parse_json_file(scoped_json);
  REQUIRE(scoped_doc["scope_kern_sum"].size() == scoped.size());
  CHECK(scoped_doc["scope_kern_sum"][0]["range"].as_string() == scoped[0].range);
  CHECK(scoped_doc["scope_kern_sum"][0]["view"].as_string() == "inclusive");

  const std::vector<ScopeGpuSummary> summaries = scope_gpu_summary(r);
  const std::string gpu_json = (dir.path / "scope_gpu.json").string();
  write(summaries, gpu_json);
  const gpuprof_test::Json gpu_doc = gpuprof_test::parse_json_file(gpu_json);
  REQUIRE(gpu_doc["scope_gpu_summary"].size() == summaries.size());
  CHECK(gpu_doc["scope_gpu_summary"][0]["event_ms"].is_null());
  CHECK(gpu_doc["scope_gpu_summary"][2]["event_ms"].as_number() == doctest::Approx(1.5));
  CHECK(gpu_doc["scope_gpu_summary"][2]["categories"][0]["total_ns"].as_int64() == 1100);

  const std::string markdown_path = (dir.path / "scope_gpu.md").string();
  write(summaries, markdown_path);
  const std::vector<std::string> md = lines_of(gpuprof_test::read_text_file(markdown_path));
  REQUIRE(md.size() == summaries.size() + 2);
  CHECK(md[0].rfind("| Scope | Instances | Event (ms) |", 0) == 0);
  CHECK(md[1].rfind("|:---|---:|", 0) == 0);

  Table piped({{"Name"}});
  piped.add_row({"a|b"});
  CHECK(piped.markdown() == "| Name |\n|:---|\n| a\\|b |\n");

  CHECK_THROWS_WITH_AS(write(rows, (dir.path / "kern_sum.txt").string()),
                       doctest::Contains("its extension names no format"), Error);
  CHECK_FALSE(std::filesystem::exists(dir.path / "kern_sum.txt"));
}

// --- CUDA graphs ----------------------------------------------------------------

namespace {
KernelRecord graph_work(std::uint32_t launch, std::uint64_t node_id) {
  KernelRecord record;
  record.correlation_id = launch;
  record.graph_node_id = node_id;
  return record;
}
}  // namespace

TEST_CASE("graph nodes: created nodes keep their scope node, clones follow their original") {
  detail::GraphNodeScopes nodes;
  nodes.add_created(100, 5);  // captured inside global scope node 5
  nodes.add_created(101, 6);
  nodes.add_created(102, 0);  // captured outside any scope (the root)
  nodes.add_clone(200, 100);  // cudaGraphInstantiate: the exec graph's nodes are clones
  nodes.add_clone(201, 101);
  nodes.add_clone(202, 102);
  nodes.add_clone(300, 200);  // a clone of a clone (a cloned graph, instantiated)
  nodes.add_clone(203, 999);  // original never seen: created before the capture began
  CHECK(nodes.scope_of(200) == 5);
  CHECK(nodes.scope_of(201) == 6);
  CHECK(nodes.scope_of(202) == 0);
  CHECK(nodes.scope_of(300) == 5);
  CHECK(nodes.scope_of(203) == 0);
  CHECK(nodes.scope_of(12345) == 0);

  // Whichever CUPTI reports first, a clone belongs where its original was
  // captured, never to the scope around the instantiation.
  nodes.add_clone(204, 100);
  nodes.add_created(204, 9);
  CHECK(nodes.scope_of(204) == 5);
  nodes.add_created(205, 9);
  nodes.add_clone(205, 101);
  CHECK(nodes.scope_of(205) == 6);
  nodes.add_created(206, 9);
  nodes.add_clone(206, 999);
  CHECK(nodes.scope_of(206) == 0);
}

TEST_CASE("graph stamps: gpuprof's own timing kernels are recognised by name") {
  CHECK(detail::is_graph_stamp("gpuprof_graph_stamp_begin"));
  CHECK(detail::is_graph_stamp("gpuprof_graph_stamp_end"));
  CHECK(detail::is_graph_stamp("gpuprof_graph_stamp_clear"));  // zeroes a new slab of graph sites
  CHECK(detail::is_graph_stamp("gpuprof_graph_stamp_clock"));  // the clock probe of report()
  CHECK_FALSE(detail::is_graph_stamp("gpuprof_graph_stam"));
  CHECK_FALSE(detail::is_graph_stamp("_Z24gpuprof_graph_stamp_userPf"));  // a user's mangled kernel
  CHECK_FALSE(detail::is_graph_stamp("ampere_sgemm_128x64_nn"));
  CHECK_FALSE(detail::is_graph_stamp(nullptr));
}

TEST_CASE("global scope nodes map to report nodes by path") {
  const std::vector<std::string> global_paths = {"", "step", "step/layer", "eval", "step/layer/mlp", "layer"};
  const std::vector<std::string> report_paths = {"step", "step/layer", "eval", "layer"};
  CHECK(detail::report_nodes_by_path(global_paths, report_paths) == std::vector<int>{-1, 0, 1, 2, -1, 3});
  CHECK(detail::report_nodes_by_path({""}, {}) == std::vector<int>{-1});
}

TEST_CASE("join: graph work goes to its capture scope node, else to the launch's scope") {
  detail::GraphNodeScopes nodes;
  nodes.add_created(100, 5);  // global node 5, the report's node 1
  nodes.add_created(101, 6);  // global node 6: not in the report
  nodes.add_created(102, 0);
  nodes.add_clone(200, 100);
  nodes.add_clone(201, 101);
  nodes.add_clone(202, 102);
  const std::vector<int> report_node_of_scope = {-1, 0, -1, -1, -1, 1, -1};
  detail::CorrelationTables tables;
  tables.add_external(50, 7);  // the first cudaGraphLaunch, inside scope instance 7
  tables.add_api_call(50, 5000);
  tables.add_external(51, 8);  // an eager launch inside scope instance 8
  tables.add_api_call(51, 6000);
  tables.add_api_call(52, 7000);  // the second cudaGraphLaunch, outside any scope

  std::vector<KernelRecord> records = {graph_work(50, 200), graph_work(50, 202), graph_work(50, 777),
                                       graph_work(51, 0),   graph_work(52, 200), graph_work(52, 202),
                                       graph_work(50, 201)};
  CHECK(detail::join_correlations(records, tables, nodes, report_node_of_scope) == 1);
  CHECK(records[0].scope_node == 1);  // captured in node 5: not swallowed by the launch's scope 7
  CHECK(records[0].scope_instance == 0);
  CHECK(records[0].graph_launch == 50);
  CHECK(records[0].launch_ns == 5000);
  CHECK(records[1].scope_node == -1);  // captured outside any scope: the launch's scope
  CHECK(records[1].scope_instance == 7);
  CHECK(records[1].graph_launch == 0);
  CHECK(records[2].scope_instance == 7);  // node never seen: the launch's scope too
  CHECK(records[2].graph_launch == 0);
  CHECK(records[3].scope_instance == 8);  // eager
  CHECK(records[3].scope_node == -1);
  CHECK(records[3].graph_launch == 0);
  CHECK(records[4].scope_node == 1);  // the capture scope, whatever surrounds the launch
  CHECK(records[4].scope_instance == 0);
  CHECK(records[4].graph_launch == 52);
  CHECK(records[4].launch_ns == 7000);
  CHECK(records[5].scope_node == -1);  // captured and launched outside every scope
  CHECK(records[5].scope_instance == 0);
  CHECK(records[5].graph_launch == 0);
  CHECK(records[6].scope_node == -1);  // a capture scope the report does not hold
  CHECK(records[6].scope_instance == 7);
  CHECK(records[6].graph_launch == 0);

  SUBCASE("without a report (KernelCapture::records()) graph work keeps the launch's scope") {
    CHECK(detail::join_correlations(records, tables, nodes) == 2);
    CHECK(records[0].scope_node == -1);
    CHECK(records[0].scope_instance == 7);
    CHECK(records[0].graph_launch == 0);
    CHECK(records[0].graph_node_id == 200);
    CHECK(records[4].scope_instance == 0);
    CHECK(records[3].scope_instance == 8);
  }
}

namespace {
KernelRecord timed_graph_work(std::uint32_t launch, std::uint64_t node_id, std::int64_t start,
                              std::int64_t end) {
  KernelRecord record = graph_work(launch, node_id);
  record.start_ns = start;
  record.end_ns = end;
  return record;
}
}  // namespace

TEST_CASE(
    "graph scope intervals: first start to last end per captured instance and launch, nested included") {
  // Captured under the eager scope #1: step#10 { layer#11 { k1 } layer#12 { k2, memset } k3 },
  // and quiet#13 (inside step, no work). Node 103 was created outside every
  // captured scope (inside eager #1 only), node 104 before any scope.
  const std::vector<detail::CapturedScope> scopes = {
      {10, 1, 7, 5, 0}, {11, 10, 7, 6, 0}, {12, 10, 7, 6, 0}, {13, 10, 7, 8, 0}};
  detail::GraphNodeScopes nodes;
  nodes.add_created(100, 6, 11);
  nodes.add_created(101, 6, 12);
  nodes.add_created(102, 5, 10);
  nodes.add_created(105, 6, 12);
  nodes.add_created(103, 4, 1);
  nodes.add_created(104, 0, 0);
  for (const std::uint64_t node : {100u, 101u, 102u, 103u, 104u, 105u}) nodes.add_clone(node + 100, node);

  std::vector<KernelRecord> records;
  for (const std::uint32_t launch : {50u, 60u}) {
    const std::int64_t at = launch == 50 ? 1000 : 5000;
    records.push_back(timed_graph_work(launch, 200, at + 10, at + 100));   // k1, layer#11
    records.push_back(timed_graph_work(launch, 205, at + 150, at + 160));  // memset, layer#12
    records.push_back(timed_graph_work(launch, 201, at + 120, at + 300));  // k2, layer#12 (ends last)
    records.push_back(timed_graph_work(launch, 202, at + 310, at + 400));  // k3, step#10 itself
    records.push_back(timed_graph_work(launch, 203, at + 0, at + 5));      // not in a captured scope
    records.push_back(timed_graph_work(launch, 204, at + 500, at + 600));  // captured outside every scope
  }
  records.push_back(timed_graph_work(0, 0, 0, 50));  // eager work: no graph node

  const std::vector<detail::GraphInterval> intervals = detail::graph_scope_intervals(records, nodes, scopes);
  REQUIRE(intervals.size() == 6);
  const auto expect = [&](std::size_t i, std::uint64_t scope, std::uint32_t launch, std::int64_t begin,
                          std::int64_t end) {
    INFO("interval " << i);
    CHECK(intervals[i].scope == scope);
    CHECK(intervals[i].launch == launch);
    CHECK(intervals[i].begin_ns == begin);
    CHECK(intervals[i].end_ns == end);
  };
  for (const std::uint32_t launch : {50u, 60u}) {
    const std::int64_t at = launch == 50 ? 1000 : 5000;
    const std::size_t first = launch == 50 ? 0 : 3;
    expect(first, 10, launch, at + 10, at + 400);  // step spans its layers and its own kernel
    expect(first + 1, 11, launch, at + 10, at + 100);
    expect(first + 2, 12, launch, at + 120, at + 300);  // the memset inside does not shorten it
  }
  // The records' order does not matter: reversed, the graph work comes last
  // (a join that lost its first or its last record would show here).
  const std::vector<KernelRecord> reversed(records.rbegin(), records.rend());
  const std::vector<detail::GraphInterval> again = detail::graph_scope_intervals(reversed, nodes, scopes);
  REQUIRE(again.size() == intervals.size());
  for (std::size_t i = 0; i < again.size(); ++i) {
    INFO("interval " << i << " of the reversed records");
    CHECK(again[i].scope == intervals[i].scope);
    CHECK(again[i].launch == intervals[i].launch);
    CHECK(again[i].begin_ns == intervals[i].begin_ns);
    CHECK(again[i].end_ns == intervals[i].end_ns);
  }
  // quiet#13 ran nothing while its graph ran: said, not timed as zero.
  CHECK(detail::scopes_without_work(scopes, intervals) == 1);
  // A capture none of whose scopes ran (a graph not launched since the reset) is not counted.
  std::vector<detail::CapturedScope> with_other_capture = scopes;
  with_other_capture.push_back({20, 0, 8, 5, 0});
  CHECK(detail::scopes_without_work(with_other_capture, intervals) == 1);
  CHECK(detail::scopes_without_work(scopes, {}) == 0);
  CHECK(detail::graph_scope_intervals(records, nodes, {}).empty());
}

TEST_CASE(
    "graph scope intervals: a replay derived twice (kept at stop(), derived again after a restart) counts "
    "once") {
  std::vector<detail::GraphInterval> kept = {{10, 50, 1000, 1400}, {11, 50, 1010, 1100}};
  // A restarted capture still holds launch 50's records and derives it again, plus launch 60.
  const std::vector<detail::GraphInterval> derived = {
      {10, 50, 1000, 1400}, {11, 50, 1010, 1100}, {10, 60, 5000, 5400}, {11, 60, 5010, 5100}};
  detail::add_new_intervals(kept, derived);
  REQUIRE(kept.size() == 4);
  CHECK(kept[2].scope == 10);
  CHECK(kept[2].launch == 60);
  CHECK(kept[3].scope == 11);
  CHECK(kept[3].launch == 60);
  // The same scope in another launch, or another scope in the same launch, is new.
  detail::add_new_intervals(kept, {{12, 50, 1200, 1300}, {10, 70, 9000, 9400}, {10, 60, 5000, 5400}});
  CHECK(kept.size() == 6);
  detail::add_new_intervals(kept, {});
  CHECK(kept.size() == 6);
}

TEST_CASE("graph nodes remember the scope instance they were created in, through clones") {
  detail::GraphNodeScopes nodes;
  nodes.add_created(100, 5, 42);
  nodes.add_clone(200, 100);
  nodes.add_clone(300, 200);
  nodes.add_created(300, 9, 77);  // reported as created after the clone: the original decides
  CHECK(nodes.instance_of(200) == 42);
  CHECK(nodes.instance_of(300) == 42);
  CHECK(nodes.scope_of(300) == 5);
  CHECK(nodes.instance_of(999) == 0);
}

namespace {
KernelRecord captured(KernelRecord record, int scope_node, std::uint32_t launch) {
  record.scope_instance = 0;
  record.scope_node = scope_node;
  record.graph_launch = launch;
  record.graph_node_id = 1;
  return record;
}

//   step [layer] captured into a graph, launched twice (launches 50 and 52)
//   inside the eager scope replay#3, which also runs one eager kernel and one
//   graph kernel captured outside any scope (charged to replay#3 by the join).
//   The recorder's replay instances: step#11, #13 and layer#12, #14, timed by
//   their stamps (gpu_ms), launching nothing themselves.
Report graph_report() {
  Report r;
  r.nodes = {node("step", -1, 0, 2), node("step/layer", 0, 1, 2), node("replay", -1, 0, 1)};
  r.instances = {instance(3, 2, 0, 200, 10000), instance(11, 0, 0, 890, 1310), instance(12, 1, 0, 995, 1305),
                 instance(13, 0, 0, 1890, 2310), instance(14, 1, 0, 1995, 2305)};
  for (ScopeInstance& replay : r.instances)
    if (replay.id != 3) replay.gpu_ms = static_cast<double>(replay.host_end_ns - replay.host_begin_ns) / 1e6;
  for (const std::uint32_t launch : {50u, 52u}) {
    const std::int64_t at = launch == 50 ? 900 : 1900;
    r.kernels.push_back(captured(kernel("add_k", "elementwise", 0, at, at + 100), 0, launch));
    r.kernels.push_back(captured(kernel("gemm_k", "gemm", 0, at + 100, at + 200), 1, launch));
    r.kernels.push_back(captured(kernel("gemm_k", "gemm", 0, at + 200, at + 400), 1, launch));
  }
  r.kernels.push_back(kernel("add_k", "elementwise", 3, 3000, 3050));
  KernelRecord fallback = kernel("add_k", "elementwise", 3, 3100, 3200);
  fallback.graph_node_id = 2;
  r.kernels.push_back(fallback);
  return r;
}
}  // namespace

TEST_CASE("graph work counts for the scope node it was captured in") {
  const Report r = graph_report();
  CHECK(kernel_nodes(r) == std::vector<int>{0, 1, 1, 0, 1, 1, 2, 2});

  // The launch's scope does not swallow what was captured elsewhere.
  const std::vector<KernelSummaryRow> replay = kern_sum(r, "replay");
  REQUIRE(replay.size() == 1);
  CHECK(replay[0].instances == 2);
  const std::vector<KernelSummaryRow> layer = kern_sum(r, "step/layer");
  REQUIRE(layer.size() == 1);
  CHECK(layer[0].name == "gemm_k(float*)");
  CHECK(layer[0].instances == 4);
  CHECK(layer[0].total_ns == 600);
  const std::vector<KernelSummaryRow> step = kern_sum(r, "step");  // inclusive: layer's too
  REQUIRE(step.size() == 2);
  CHECK(step[0].name == "gemm_k(float*)");
  CHECK(step[1].name == "add_k(float*)");
  CHECK(step[1].instances == 2);
  CHECK(select_kernels(r, "step", ScopeView::innermost).size() == 2);
  CHECK(select_kernels(r, "layer", ScopeView::inclusive).size() == 4);  // suffix filter

  const std::vector<ScopeKernelRow> rows = scope_kern_sum(r, "step");
  // step: innermost add_k; inclusive gemm_k, add_k. layer: gemm_k in both views.
  REQUIRE(rows.size() == 5);
  CHECK(rows[0].range == "step");
  CHECK(rows[0].view == ScopeView::innermost);
  CHECK(rows[0].scope_instances == 2);  // the replays
  CHECK(rows[0].kernel.name == "add_k(float*)");
  CHECK(rows[3].range == "step/layer");

  SUBCASE("a scope_node outside the report's nodes counts nowhere") {
    Report broken = r;
    broken.kernels[0].scope_node = 7;
    CHECK(kernel_nodes(broken)[0] == -1);
    CHECK(kern_sum(broken, "step").size() == 2);
    CHECK(kern_sum(broken, "step")[1].instances == 1);
  }
  SUBCASE("a record with both a scope node and an instance counts for the node only") {
    Report both = r;
    both.kernels[0].scope_instance = 3;
    CHECK(kernel_nodes(both)[0] == 0);
    CHECK(kern_sum(both, "replay")[0].instances == 2);
    CHECK(instance_gpu_times(both)[0].activities == 2);
  }
}

TEST_CASE("each graph launch is one execution of the scope nodes captured into it") {
  const Report r = graph_report();
  const std::vector<InstanceGpuTime> times = instance_gpu_times(r);
  // The five instances, then step and layer once per launch.
  REQUIRE(times.size() == 9);
  CHECK(times[0].instance_id == 3);
  CHECK(times[0].graph_launch == 0);
  CHECK(times[0].activities == 2);  // its eager kernel and the graph kernel captured outside scopes
  CHECK(times[0].projection_ns == 200);
  CHECK(times[0].summed_ns == 150);
  CHECK(times[0].event_ms < 0);
  for (std::size_t i = 1; i < 5; ++i) {  // the replays: timed, but they launch nothing
    INFO("instance entry " << i);
    CHECK(times[i].instance_id == r.instances[i].id);
    CHECK(times[i].node == r.instances[i].node);
    CHECK(times[i].activities == 0);
    CHECK(times[i].event_ms == doctest::Approx(r.instances[i].gpu_ms));
  }
  const auto expect = [&](std::size_t i, int node, std::uint32_t launch, std::uint64_t activities,
                          std::int64_t first_start, std::int64_t projection, std::int64_t summed) {
    INFO("graph entry " << i);
    CHECK(times[i].instance_id == 0);
    CHECK(times[i].node == node);
    CHECK(times[i].graph_launch == launch);
    CHECK(times[i].activities == activities);
    CHECK(times[i].first_start_ns == first_start);
    CHECK(times[i].projection_ns == projection);  // per launch: not 1400 across both
    CHECK(times[i].summed_ns == summed);
    CHECK(times[i].event_ms < 0);
  };
  expect(5, 0, 50, 3, 900, 400, 400);
  expect(6, 0, 52, 3, 1900, 400, 400);
  expect(7, 1, 50, 2, 1000, 300, 300);
  expect(8, 1, 52, 2, 2000, 300, 300);

  const std::vector<ScopeGpuSummary> summaries = scope_gpu_summary(r);
  REQUIRE(summaries.size() == 3);
  CHECK(summaries[0].instances == 2);
  CHECK(summaries[0].projection_ns == 800);
  CHECK(summaries[0].activities == 6);
  CHECK(summaries[1].projection_ns == 600);
  CHECK(summaries[1].activities == 4);
  CHECK(summaries[1].categories[0].category == "gemm");
  CHECK(summaries[1].categories[0].percent == doctest::Approx(100));
  CHECK(summaries[2].projection_ns == 200);
  CHECK(summaries[2].activities == 2);
}
