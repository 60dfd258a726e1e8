// python/src/report_bindings.cpp: gpuprof.report(), the Report and its
// writers, the nsys-style kernel summaries, and gpuprof.compare().
//
// Python gets the C++ structures themselves (read-only attributes); every
// number comes from the same functions the C++ tools call.
#include <string>
#include <variant>
#include <vector>

#include <gpuprof/compare.hpp>
#include <gpuprof/kernel_summary.hpp>
#include <gpuprof/launch_attribution.hpp>
#include <gpuprof/profiler.hpp>
#include <gpuprof/report.hpp>
#include <gpuprof/report/kernel_summary_writers.hpp>
#include <gpuprof/report/read_bench_json.hpp>
#include <gpuprof/report/read_json.hpp>

#include "bindings.hpp"

namespace py = pybind11;

namespace gpuprof_python {

namespace {

gpuprof::KernelGrouping grouping_of(const std::string& grouping) {
  if (grouping == "name") return gpuprof::KernelGrouping::name;
  if (grouping == "base_name") return gpuprof::KernelGrouping::base_name;
  throw py::value_error("gpuprof: grouping must be 'name' or 'base_name', got '" + grouping + "'");
}

gpuprof::ScopeView view_of(const std::string& view) {
  if (view == "inclusive") return gpuprof::ScopeView::inclusive;
  if (view == "innermost") return gpuprof::ScopeView::innermost;
  throw py::value_error("gpuprof: view must be 'inclusive' or 'innermost', got '" + view + "'");
}

// A side of gpuprof.compare: a Report, or the path of any file gpuprof-compare reads.
gpuprof::MeasuredRun measured_run_of(const std::variant<gpuprof::Report, std::string>& side) {
  if (const auto* report = std::get_if<gpuprof::Report>(&side)) return gpuprof::measured_run(*report);
  return gpuprof::read_measured_run(std::get<std::string>(side));
}

}  // namespace

gpuprof::Report take_report(bool adopt_other_threads) {
  gpuprof::Report report;
  {
    py::gil_scoped_release release;  // may wait for the device
    report = gpuprof::profiler().report();
  }
  if (adopt_other_threads) gpuprof::adopt_by_launch_time(report);
  return report;
}

py::dict summary_dict(const gpuprof::Summary& s) {
  py::dict d;
  d["n"] = s.n;
  d["mean"] = s.mean;
  d["stddev"] = s.stddev;
  d["min"] = s.min;
  d["max"] = s.max;
  d["median"] = s.median;
  d["q1"] = s.q1;
  d["q3"] = s.q3;
  d["cv"] = s.cv;
  d["ci95_low"] = s.ci95_low;
  d["ci95_high"] = s.ci95_high;
  d["unstable"] = s.unstable;
  d["unstable_reason"] = s.unstable_reason;
  d["note"] = s.note;
  d["samples"] = s.sorted;
  return d;
}

void bind_summary(py::module_& m) {
  py::class_<gpuprof::Summary>(m, "Summary",
                               "Statistics of a set of samples (milliseconds unless said otherwise)")
      .def_readonly("n", &gpuprof::Summary::n)
      .def_readonly("mean", &gpuprof::Summary::mean)
      .def_readonly("stddev", &gpuprof::Summary::stddev)
      .def_readonly("min", &gpuprof::Summary::min)
      .def_readonly("max", &gpuprof::Summary::max)
      .def_readonly("median", &gpuprof::Summary::median)
      .def_readonly("q1", &gpuprof::Summary::q1)
      .def_readonly("q3", &gpuprof::Summary::q3)
      .def_readonly("iqr", &gpuprof::Summary::iqr)
      .def_readonly("cv", &gpuprof::Summary::cv)
      .def_readonly("ci95_low", &gpuprof::Summary::ci95_low)
      .def_readonly("ci95_high", &gpuprof::Summary::ci95_high)
      .def_readonly("outliers", &gpuprof::Summary::outliers)
      .def_readonly("unstable", &gpuprof::Summary::unstable)
      .def_readonly("unstable_reason", &gpuprof::Summary::unstable_reason)
      .def_readonly("note", &gpuprof::Summary::note)
      .def_readonly("samples", &gpuprof::Summary::sorted, "the finite samples, ascending")
      .def("percentile", &gpuprof::Summary::percentile, py::arg("p"))
      .def("to_dict", &summary_dict);
  m.def(
      "summarize", [](const std::vector<double>& samples) { return gpuprof::summarize(samples); },
      py::arg("samples"), "A Summary of the samples (NaN and infinities are dropped and counted)");
}

void bind_reports(py::module_& m) {
  using gpuprof::Report;
  py::class_<gpuprof::ScopeNode>(m, "ScopeNode", "One node of the scope tree: every instance of a path")
      .def_readonly("path", &gpuprof::ScopeNode::path)
      .def_readonly("name", &gpuprof::ScopeNode::name)
      .def_readonly("parent", &gpuprof::ScopeNode::parent)
      .def_readonly("depth", &gpuprof::ScopeNode::depth)
      .def_readonly("count", &gpuprof::ScopeNode::count)
      .def_readonly("host_ms", &gpuprof::ScopeNode::host_ms)
      .def_readonly("gpu_ms", &gpuprof::ScopeNode::gpu_ms)
      .def_readonly("work", &gpuprof::ScopeNode::work)
      .def_readonly("peak_device_bytes", &gpuprof::ScopeNode::peak_device_bytes)
      .def_readonly("peak_allocated_bytes", &gpuprof::ScopeNode::peak_allocated_bytes)
      .def_readonly("reserved_bytes", &gpuprof::ScopeNode::reserved_bytes)
      .def_readonly("open_instances", &gpuprof::ScopeNode::open_instances)
      .def_readonly("cold_ms", &gpuprof::ScopeNode::cold_ms,
                    "The first instance left out as warm-up (profiler().set_warmup), ms; -1: none")
      .def_property_readonly("gpu_timed", &gpuprof::ScopeNode::gpu_timed)
      .def_property_readonly("primary_ms", &gpuprof::ScopeNode::primary_ms)
      .def_property_readonly("total_ms", &gpuprof::ScopeNode::total_ms)
      .def_property_readonly("tflop_per_s", &gpuprof::ScopeNode::tflop_per_s)
      .def_property_readonly("gb_per_s", &gpuprof::ScopeNode::gb_per_s)
      .def_property_readonly("tokens_per_s", &gpuprof::ScopeNode::tokens_per_s)
      .def("__repr__", [](const gpuprof::ScopeNode& n) {
        return "<gpuprof.ScopeNode " + n.path + " n=" + std::to_string(n.count) + ">";
      });
  py::class_<gpuprof::ScopeInstance>(m, "ScopeInstance", "One execution of a scope")
      .def_readonly("id", &gpuprof::ScopeInstance::id)
      .def_readonly("node", &gpuprof::ScopeInstance::node)
      .def_readonly("thread", &gpuprof::ScopeInstance::thread)
      .def_readonly("host_begin_ns", &gpuprof::ScopeInstance::host_begin_ns)
      .def_readonly("host_end_ns", &gpuprof::ScopeInstance::host_end_ns)
      .def_readonly("gpu_ms", &gpuprof::ScopeInstance::gpu_ms);
  py::class_<gpuprof::KernelRecord>(m, "KernelRecord", "One captured GPU activity (kernel, copy or memset)")
      .def_property_readonly(
          "kind", [](const gpuprof::KernelRecord& k) { return gpuprof::activity_kind_name(k.kind); })
      .def_readonly("name", &gpuprof::KernelRecord::name)
      .def_readonly("base_name", &gpuprof::KernelRecord::base_name)
      .def_readonly("category", &gpuprof::KernelRecord::category)
      .def_readonly("start_ns", &gpuprof::KernelRecord::start_ns)
      .def_readonly("end_ns", &gpuprof::KernelRecord::end_ns)
      .def_readonly("launch_ns", &gpuprof::KernelRecord::launch_ns)
      .def_property_readonly("duration_ns", &gpuprof::KernelRecord::duration_ns)
      .def_readonly("device", &gpuprof::KernelRecord::device)
      .def_readonly("stream", &gpuprof::KernelRecord::stream)
      .def_readonly("correlation_id", &gpuprof::KernelRecord::correlation_id)
      .def_readonly("scope_instance", &gpuprof::KernelRecord::scope_instance)
      .def_readonly("scope_node", &gpuprof::KernelRecord::scope_node)
      .def_readonly("graph_launch", &gpuprof::KernelRecord::graph_launch)
      .def_readonly("bytes", &gpuprof::KernelRecord::bytes);

  py::class_<gpuprof::KernelSummaryRow>(m, "KernelSummaryRow", "A row of nsys cuda_gpu_kern_sum")
      .def_readonly("name", &gpuprof::KernelSummaryRow::name)
      .def_readonly("category", &gpuprof::KernelSummaryRow::category)
      .def_readonly("time_percent", &gpuprof::KernelSummaryRow::time_percent)
      .def_readonly("total_ns", &gpuprof::KernelSummaryRow::total_ns)
      .def_readonly("instances", &gpuprof::KernelSummaryRow::instances)
      .def_readonly("avg_ns", &gpuprof::KernelSummaryRow::avg_ns)
      .def_readonly("median_ns", &gpuprof::KernelSummaryRow::median_ns)
      .def_readonly("min_ns", &gpuprof::KernelSummaryRow::min_ns)
      .def_readonly("max_ns", &gpuprof::KernelSummaryRow::max_ns)
      .def_readonly("stddev_ns", &gpuprof::KernelSummaryRow::stddev_ns);
  py::class_<gpuprof::KernelAggregate>(m, "KernelAggregate",
                                       "Every captured record of one name in one scope path (innermost)")
      .def_readonly("scope_path", &gpuprof::KernelAggregate::scope_path)
      .def_property_readonly(
          "kind", [](const gpuprof::KernelAggregate& a) { return gpuprof::activity_kind_name(a.kind); })
      .def_readonly("name", &gpuprof::KernelAggregate::name)
      .def_readonly("base_name", &gpuprof::KernelAggregate::base_name)
      .def_readonly("category", &gpuprof::KernelAggregate::category)
      .def_readonly("count", &gpuprof::KernelAggregate::count)
      .def_readonly("total_ns", &gpuprof::KernelAggregate::total_ns)
      .def_readonly("min_ns", &gpuprof::KernelAggregate::min_ns)
      .def_readonly("max_ns", &gpuprof::KernelAggregate::max_ns);
  py::class_<gpuprof::ScopeKernelRow>(m, "ScopeKernelRow",
                                      "A row of nsys nvtx_kern_sum: a kernel within a scope")
      .def_readonly("range", &gpuprof::ScopeKernelRow::range)
      .def_property_readonly("view",
                             [](const gpuprof::ScopeKernelRow& r) { return gpuprof::to_string(r.view); })
      .def_readonly("scope_instances", &gpuprof::ScopeKernelRow::scope_instances)
      .def_readonly("kernel", &gpuprof::ScopeKernelRow::kernel);
  py::class_<gpuprof::CategoryShare>(m, "CategoryShare")
      .def_readonly("category", &gpuprof::CategoryShare::category)
      .def_readonly("total_ns", &gpuprof::CategoryShare::total_ns)
      .def_readonly("percent", &gpuprof::CategoryShare::percent);
  py::class_<gpuprof::ScopeGpuSummary>(m, "ScopeGpuSummary", "GPU time of one scope over all its executions")
      .def_readonly("path", &gpuprof::ScopeGpuSummary::path)
      .def_readonly("instances", &gpuprof::ScopeGpuSummary::instances)
      .def_readonly("activities", &gpuprof::ScopeGpuSummary::activities)
      .def_readonly("projection_ns", &gpuprof::ScopeGpuSummary::projection_ns)
      .def_readonly("summed_ns", &gpuprof::ScopeGpuSummary::summed_ns)
      .def_readonly("event_ms", &gpuprof::ScopeGpuSummary::event_ms)
      .def_readonly("categories", &gpuprof::ScopeGpuSummary::categories);

  py::class_<Report>(m, "Report", "A snapshot: the scope tree, every instance and every captured kernel")
      .def_property_readonly("timing_source",
                             [](const Report& r) { return gpuprof::timing_source_name(r.timing_source); })
      .def_readonly("timing_note", &Report::timing_note)
      .def_readonly("device_name", &Report::device_name)
      .def_readonly("nodes", &Report::nodes)
      .def_readonly("instances", &Report::instances)
      .def_readonly("kernels", &Report::kernels)
      .def_readonly("recorded_kernels", &Report::recorded_kernels,
                    "Every record capture folded; kernels holds the newest (0: kernels is all of them)")
      .def_readonly("kernel_aggregates", &Report::kernel_aggregates)
      .def_property_readonly("kernel_note", &Report::kernel_note,
                             "'kernels: last N of M records' when records left the window, else ''")
      .def_readonly("dropped_kernel_records", &Report::dropped_kernel_records)
      .def_readonly("warmup_instances_left_out", &Report::warmup_instances_left_out)
      .def_readonly("warmup_root_instances", &Report::warmup_root_instances)
      .def(
          "node",
          [](const Report& r, const std::string& path) -> py::object {
            for (const gpuprof::ScopeNode& node : r.nodes)
              if (node.path == path) return py::cast(node);
            return py::none();
          },
          py::arg("path"), "The node with this path, or None")
      .def(
          "table", [](const Report& r) { return gpuprof::to_table(r); },
          "The terminal table of the scope tree")
      .def("markdown", [](const Report& r) { return gpuprof::to_markdown(r); })
      .def(
          "json", [](const Report& r) { return gpuprof::to_json(r); },
          "The report as JSON text (schema: docs/report-schema.md)")
      .def(
          "write_json", [](const Report& r, const std::string& path) { gpuprof::write_json(r, path); },
          py::arg("path"))
      .def(
          "write_csv", [](const Report& r, const std::string& path) { gpuprof::write_csv(r, path); },
          py::arg("path"))
      .def(
          "write_markdown",
          [](const Report& r, const std::string& path) { gpuprof::write_markdown(r, path); }, py::arg("path"))
      .def(
          "write_chrome_trace",
          [](const Report& r, const std::string& path) { gpuprof::write_chrome_trace(r, path); },
          py::arg("path"))
      .def(
          "write_html",
          [](const Report& r, const std::string& path, const std::string& title) {
            gpuprof::write_html(r, path, {title});
          },
          py::arg("path"), py::arg("title") = "gpuprof report")
      .def(
          "kern_sum",
          [](const Report& r, const std::string& filter, const std::string& grouping) {
            return gpuprof::kern_sum(r, filter, grouping_of(grouping));
          },
          py::arg("scope") = "", py::arg("grouping") = "name",
          "nsys cuda_gpu_kern_sum over the kernels of every matching scope (inclusive); '' = the whole run")
      .def(
          "scope_kern_sum",
          [](const Report& r, const std::string& filter, const std::string& grouping) {
            return gpuprof::scope_kern_sum(r, filter, grouping_of(grouping));
          },
          py::arg("scope") = "", py::arg("grouping") = "name", "nsys nvtx_kern_sum: kernels per scope")
      .def("scope_gpu_summary", &gpuprof::scope_gpu_summary, py::arg("scope") = "",
           "Per scope: GPU projection, summed kernel time, CUDA-event time, category shares")
      .def(
          "kernels_in",
          [](const Report& r, const std::string& filter, const std::string& view, bool copies) {
            return gpuprof::select_kernels(r, filter, view_of(view),
                                           copies ? gpuprof::Activities::all : gpuprof::Activities::kernels);
          },
          py::arg("scope") = "", py::arg("view") = "inclusive", py::arg("copies") = false,
          "The captured records of the matching scopes")
      .def("kernel_nodes", &gpuprof::kernel_nodes, "Per record of kernels: its scope node index (-1: none)")
      .def("adopt_by_launch_time", &gpuprof::adopt_by_launch_time,
           "Charge records launched by threads without an open scope to the deepest scope open at launch; "
           "returns how many")
      .def("__repr__", [](const Report& r) {
        return "<gpuprof.Report " + std::to_string(r.nodes.size()) + " scopes, " +
               std::to_string(r.kernels.size()) + " kernels, " +
               gpuprof::timing_source_name(r.timing_source) + ">";
      });

  m.def("report", &take_report, py::arg("adopt_other_threads") = true,
        "Resolve pending GPU times and return a Report of everything recorded since the start or the last "
        "reset(). adopt_other_threads: kernels launched by threads without an open scope (PyTorch's autograd "
        "threads) go to the deepest scope open at their launch.");
  m.def("read_report", &gpuprof::read_report_json, py::arg("path"),
        "A Report from a JSON file write_json wrote");
  m.def("category_breakdown", &gpuprof::category_breakdown, py::arg("records"),
        "Time per kernel category of the records");
  m.def(
      "kern_sum",
      [](const std::vector<gpuprof::KernelRecord>& records, const std::string& grouping) {
        return gpuprof::kern_sum(records, grouping_of(grouping));
      },
      py::arg("records"), py::arg("grouping") = "name", "nsys cuda_gpu_kern_sum over the records");
  m.def(
      "write_kern_sum",
      [](const std::vector<gpuprof::KernelSummaryRow>& rows, const std::string& path) {
        gpuprof::write(rows, path);
      },
      py::arg("rows"), py::arg("path"), "Writes kern_sum rows: .json, .csv or .md, by the path's extension");

  py::class_<gpuprof::ComparisonRow>(m, "ComparisonRow")
      .def_readonly("kind", &gpuprof::ComparisonRow::kind)
      .def_readonly("key", &gpuprof::ComparisonRow::key)
      .def_property_readonly("base_median_ms",
                             [](const gpuprof::ComparisonRow& r) -> py::object {
                               return r.base ? py::cast(r.base->median_ms) : py::none();
                             })
      .def_property_readonly("new_median_ms",
                             [](const gpuprof::ComparisonRow& r) -> py::object {
                               return r.next ? py::cast(r.next->median_ms) : py::none();
                             })
      .def_readonly("ratio", &gpuprof::ComparisonRow::ratio)
      .def_readonly("ratio_low", &gpuprof::ComparisonRow::ratio_low)    // over rounds (ab): the interval
      .def_readonly("ratio_high", &gpuprof::ComparisonRow::ratio_high)  // NaN for one pair of runs
      .def_readonly("p_value", &gpuprof::ComparisonRow::p_value)
      .def_readonly("test", &gpuprof::ComparisonRow::test)
      .def_property_readonly("verdict",
                             [](const gpuprof::ComparisonRow& r) { return gpuprof::verdict_name(r.verdict); })
      .def_readonly("note", &gpuprof::ComparisonRow::note);
  py::class_<gpuprof::Comparison>(m, "Comparison", "Two runs compared row by row, with a verdict per row")
      .def_readonly("rows", &gpuprof::Comparison::rows)
      .def_readonly("warnings", &gpuprof::Comparison::warnings)
      .def_readonly("rounds", &gpuprof::Comparison::rounds)
      .def("regressed", &gpuprof::Comparison::regressed)
      .def("text", [](const gpuprof::Comparison& c) { return gpuprof::to_table(c); })
      .def("markdown", [](const gpuprof::Comparison& c) { return gpuprof::to_markdown(c); });
  m.def(
      "compare",
      [](const std::variant<Report, std::string>& base, const std::variant<Report, std::string>& next,
         double threshold, double alpha, std::size_t min_samples) {
        gpuprof::CompareOptions options;
        options.threshold = threshold;
        options.alpha = alpha;
        options.min_samples = min_samples;
        const auto* a = std::get_if<Report>(&base);
        const auto* b = std::get_if<Report>(&next);
        if (a && b) return gpuprof::compare(*a, *b, options);  // adds the timing-source warning
        return gpuprof::compare_runs(measured_run_of(base), measured_run_of(next), options);
      },
      py::arg("base"), py::arg("new"), py::kw_only(), py::arg("threshold") = 0.05, py::arg("alpha") = 0.05,
      py::arg("min_samples") = 5,
      "Compare two runs (Reports, or paths of files gpuprof-compare reads): scopes by path, kernels by name, "
      "with the Mann-Whitney U test and a verdict per row");
}

}  // namespace gpuprof_python
