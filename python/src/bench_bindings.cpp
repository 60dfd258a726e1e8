// python/src/bench_bindings.cpp: gpuprof.bench (one function, or a row per
// point of named parameter axes), gpuprof.write_bench_json and gpuprof.ab, the
// C++ bench(), bench_axes.hpp, report/bench_json.hpp and ab.hpp.
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include <gpuprof/ab.hpp>
#include <gpuprof/axes.hpp>
#include <gpuprof/bench.hpp>
#include <gpuprof/bench_axes.hpp>
#include <gpuprof/report/bench_json.hpp>

#include "bindings.hpp"

namespace py = pybind11;

namespace gpuprof_python {
namespace {

gpuprof::BenchOptions bench_options(int warmup, double warmup_ms, int iters, bool flush_l2, bool cuda_graph,
                                    const py::object& stream) {
  gpuprof::BenchOptions options;
  options.warmup = warmup;
  options.warmup_ms = warmup_ms;
  options.iters = iters;
  options.flush_l2 = flush_l2;
  options.cuda_graph = cuda_graph;
  options.stream = stream.is_none() ? current_stream() : stream_of(stream);
  return options;
}

std::string type_name(const py::handle& value) { return py::str(py::type::of(value).attr("__name__")); }

// int, float or str; True/False would silently be 1/0, so they are refused.
gpuprof::AxisValue axis_value(const std::string& axis, const py::handle& value) {
  if (py::isinstance<py::bool_>(value) ||
      !(py::isinstance<py::int_>(value) || py::isinstance<py::float_>(value) ||
        py::isinstance<py::str>(value)))
    throw gpuprof::Error("gpuprof.bench: a value of axis " + axis + " is a " + type_name(value) +
                         ", not an int, a float or a str");
  if (py::isinstance<py::int_>(value)) return value.cast<std::int64_t>();
  if (py::isinstance<py::float_>(value)) return value.cast<double>();
  return value.cast<std::string>();
}

py::dict point_dict(const gpuprof::AxisPoint& point) {
  py::dict values;
  for (const auto& [axis, value] : point.values())
    values[py::str(axis)] = std::visit([](const auto& v) { return py::cast(v); }, value.value());
  return values;
}

gpuprof::AxisPoint point_of(const py::handle& values) {
  if (!py::isinstance<py::dict>(values))
    throw gpuprof::Error("gpuprof.bench: a point is a dict of axis values, not a " + type_name(values));
  std::vector<std::pair<std::string, gpuprof::AxisValue>> point;
  for (const auto& [axis, value] : values.cast<py::dict>()) {
    const std::string name = py::str(axis);
    point.emplace_back(name, axis_value(name, value));
  }
  return gpuprof::AxisPoint(std::move(point));
}

// axes={"n": [..], ...}: their product, in the dict's order; points=[{...}, ...]: those points.
gpuprof::Axes axes_of(const py::object& axes, const py::object& points) {
  if (!axes.is_none() && !points.is_none())
    throw gpuprof::Error("gpuprof.bench: give axes= or points=, not both");
  if (!axes.is_none()) {
    if (!py::isinstance<py::dict>(axes))
      throw gpuprof::Error("gpuprof.bench: axes= is a dict of lists of values, not a " + type_name(axes));
    std::vector<gpuprof::Axis> list;
    for (const auto& [name, values] : axes.cast<py::dict>()) {
      gpuprof::Axis axis{py::str(name), {}};
      if (py::isinstance<py::str>(values) || !py::isinstance<py::iterable>(values))
        throw gpuprof::Error("gpuprof.bench: axis " + axis.name + " needs a list of values, not a " +
                             type_name(values));
      for (const py::handle& value : values.cast<py::iterable>())
        axis.values.push_back(axis_value(axis.name, value));
      list.push_back(std::move(axis));
    }
    return gpuprof::Axes::product(list);
  }
  if (py::isinstance<py::str>(points) || !py::isinstance<py::iterable>(points))
    throw gpuprof::Error("gpuprof.bench: points= is a list of dicts, not a " + type_name(points));
  std::vector<gpuprof::AxisPoint> list;
  for (const py::handle& point : points.cast<py::iterable>()) list.push_back(point_of(point));
  return gpuprof::Axes::list(std::move(list));
}

PyObject* skip_point_type = nullptr;  // gpuprof.SkipPoint, which the module keeps alive

}  // namespace

void bind_bench(py::module_& m) {
  py::exception<gpuprof::SkipPoint>(m, "SkipPoint", m.attr("Error"));
  skip_point_type = m.attr("SkipPoint").ptr();

  py::class_<gpuprof::BenchResult>(m, "BenchResult", "What gpuprof.bench measured")
      .def_readonly("gpu_ms", &gpuprof::BenchResult::gpu_ms)
      .def_readonly("host_ms", &gpuprof::BenchResult::host_ms)
      .def_readonly("gpu", &gpuprof::BenchResult::gpu)
      .def_readonly("host", &gpuprof::BenchResult::host)
      .def_property_readonly("primary", &gpuprof::BenchResult::primary)
      .def_readonly("cold_ms", &gpuprof::BenchResult::cold_ms)
      .def_readonly("warmup_calls", &gpuprof::BenchResult::warmup_calls)
      .def_property_readonly(
          "timing_source",
          [](const gpuprof::BenchResult& r) { return gpuprof::timing_source_name(r.timing_source); })
      .def_readonly("timing_note", &gpuprof::BenchResult::timing_note)
      .def_readonly("stop_reason", &gpuprof::BenchResult::stop_reason)
      .def_readonly("throttled_samples", &gpuprof::BenchResult::throttled_samples)
      .def_readonly("clocks_note", &gpuprof::BenchResult::clocks_note)
      .def("summary", &gpuprof::BenchResult::summary)
      .def("to_dict",
           [](const gpuprof::BenchResult& r) {
             py::dict d;
             d["timing_source"] = gpuprof::timing_source_name(r.timing_source);
             d["timing_note"] = r.timing_note;
             d["stop_reason"] = r.stop_reason;
             d["cold_ms"] = r.cold_ms;
             d["warmup_calls"] = r.warmup_calls;
             d["gpu_ms"] = r.gpu_ms;
             d["host_ms"] = r.host_ms;
             d["gpu"] = summary_dict(r.gpu);
             d["host"] = summary_dict(r.host);
             d["throttled_samples"] = r.throttled_samples;
             d["clocks_note"] = r.clocks_note;
             return d;
           })
      .def("__repr__",
           [](const gpuprof::BenchResult& r) { return "<gpuprof.BenchResult " + r.summary() + ">"; });

  py::class_<gpuprof::NamedBenchResult>(
      m, "BenchRow", "One point of gpuprof.bench over axes: its name, axis values and result")
      .def_readonly("name", &gpuprof::NamedBenchResult::name)
      .def_property_readonly("axes",
                             [](const gpuprof::NamedBenchResult& row) { return point_dict(row.axes); })
      .def_readonly("result", &gpuprof::NamedBenchResult::result)
      .def("__repr__", [](const gpuprof::NamedBenchResult& row) {
        return "<gpuprof.BenchRow " + row.name + ": " + row.result.summary() + ">";
      });

  m.def(
      "bench",
      [](const py::function& fn, int warmup, double warmup_ms, int iters, double budget_ms,
         double target_rel_noise, int min_iters, int max_iters, bool flush_l2, bool cuda_graph,
         const py::object& stream, const py::object& axes, const py::object& points,
         const std::string& name) -> py::object {
        gpuprof::BenchOptions options = bench_options(warmup, warmup_ms, iters, flush_l2, cuda_graph, stream);
        options.budget_ms = budget_ms;
        options.target_rel_noise = target_rel_noise;
        options.min_iters = min_iters;
        options.max_iters = max_iters;
        if (axes.is_none() && points.is_none()) return py::cast(gpuprof::bench([&fn] { fn(); }, options));
        const auto setup = [&fn, &name](const gpuprof::AxisPoint& point) -> std::function<void()> {
          py::object work;
          try {
            work = fn(**point_dict(point));
          } catch (py::error_already_set& error) {
            if (error.matches(py::handle(skip_point_type))) throw gpuprof::SkipPoint(py::str(error.value()));
            throw;
          }
          if (work.is_none()) return [&fn, &point] { fn(**point_dict(point)); };
          if (!PyCallable_Check(work.ptr()))
            throw gpuprof::Error("gpuprof.bench: fn at " + point.row_name(name) +
                                 " returned a value of type " + type_name(work) +
                                 ", not a callable (the work to time) or None (time fn itself)");
          return [work] { work(); };
        };
        return py::cast(gpuprof::bench(name, axes_of(axes, points), setup, options));
      },
      py::arg("fn"), py::kw_only(), py::arg("warmup") = 5, py::arg("warmup_ms") = 0.0, py::arg("iters") = 10,
      py::arg("budget_ms") = 0.0, py::arg("target_rel_noise") = 0.0, py::arg("min_iters") = 5,
      py::arg("max_iters") = 1000, py::arg("flush_l2") = false, py::arg("cuda_graph") = false,
      py::arg("stream") = py::none(), py::arg("axes") = py::none(), py::arg("points") = py::none(),
      py::arg("name") = "bench",
      "Time fn(): one cold call, warm-up, then samples (CUDA events on the stream and a device "
      "synchronization after each; the host clock without a GPU). Returns a BenchResult. With axes= (a dict "
      "of lists: their product) or points= (a list of dicts), fn(**point) sets up each point once, untimed, "
      "and returns the callable to time (None: fn(**point) itself is timed); returns a BenchRow per point, "
      "named name[axis=value,...]. A point whose fn raises gpuprof.SkipPoint is not measured.");

  m.def(
      "write_bench_json",
      [](const std::vector<gpuprof::NamedBenchResult>& rows, const std::string& path) {
        gpuprof::write_bench_json(rows, path, {gpuprof::capture_environment()});
      },
      py::arg("rows"), py::arg("path"),
      "Write BenchRows as a gpuprof.bench file (written whole), which gpuprof-compare reads");

  py::class_<gpuprof::AbResult>(m, "AbResult", "gpuprof.ab's verdict and the blocks it came from")
      .def_readonly("comparison", &gpuprof::AbResult::comparison)
      .def_readonly("base_blocks", &gpuprof::AbResult::base_blocks)
      .def_readonly("new_blocks", &gpuprof::AbResult::new_blocks)
      .def_readonly("base_throttled_left_out", &gpuprof::AbResult::base_throttled_left_out)
      .def_readonly("new_throttled_left_out", &gpuprof::AbResult::new_throttled_left_out)
      .def("regressed", [](const gpuprof::AbResult& r) { return r.comparison.regressed(); })
      .def("__repr__", [](const gpuprof::AbResult& r) {
        return "<gpuprof.AbResult\n" + gpuprof::to_table(r.comparison) + ">";
      });

  m.def(
      "ab",
      [](const py::function& base_fn, const py::function& new_fn, std::size_t rounds, int iters, int warmup,
         double warmup_ms, bool flush_l2, bool cuda_graph, const py::object& stream, double threshold,
         double alpha, int reference_sm_mhz, double unlocked_spread, bool leave_out_throttled,
         const std::string& name) {
        gpuprof::AbOptions options;
        options.rounds = rounds;
        options.bench = bench_options(warmup, warmup_ms, iters, flush_l2, cuda_graph, stream);
        options.compare.threshold = threshold;
        options.compare.alpha = alpha;
        options.clocks.reference_sm_mhz = reference_sm_mhz;
        options.clocks.unlocked_spread = unlocked_spread;
        options.clocks.leave_out_throttled = leave_out_throttled;
        options.name = name;
        return gpuprof::ab([&base_fn] { base_fn(); }, [&new_fn] { new_fn(); }, options);
      },
      py::arg("base_fn"), py::arg("new_fn"), py::kw_only(), py::arg("rounds") = 10, py::arg("iters") = 10,
      py::arg("warmup") = 5, py::arg("warmup_ms") = 0.0, py::arg("flush_l2") = false,
      py::arg("cuda_graph") = false, py::arg("stream") = py::none(), py::arg("threshold") = 0.05,
      py::arg("alpha") = 0.05, py::arg("reference_sm_mhz") = 0, py::arg("unlocked_spread") = 0.02,
      py::arg("leave_out_throttled") = true, py::arg("name") = "ab",
      "Compare two implementations in this process: each side warmed up, then `rounds` rounds of one block "
      "of `iters` samples a side in ABBA order; the verdict is a paired t test on the blocks' medians, with "
      "the "
      "ratio's interval (AbResult.comparison). GPU clocks: throttled samples left out and counted, a warning "
      "when the SM clock moved more than unlocked_spread within a block.");
}

}  // namespace gpuprof_python
