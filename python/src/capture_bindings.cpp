// python/src/capture_bindings.cpp: gpuprof.KernelCapture,
// gpuprof.MemoryWatch and the scope hooks of gpuprof.TorchMemoryWatch,
// observers as context managers.
//
//   with gpuprof.KernelCapture() as capture:
//       step()
//   capture.report.kern_sum("forward")
//
// Entering starts the observer; leaving takes a report (everything recorded
// since the last reset, with what the observer adds) into `.report` and then
// ends the observer, so CUPTI is free again for another client. When the
// observer cannot start it says why on stderr and in `.why_inactive`, and
// scopes keep timing: `.report` is still taken.
#include <algorithm>
#include <cstdint>
#include <iostream>
#include <memory>
#include <optional>
#include <string>
#include <utility>

#include <gpuprof/memory.hpp>
#include <gpuprof/profiler.hpp>
#if GPUPROF_WITH_CUPTI
#include <gpuprof/cupti.hpp>
#endif

#include "bindings.hpp"

namespace py = pybind11;

namespace gpuprof_python {

namespace {

// What both context managers share: the entered state, the refusal, the report.
class ObserverContext {
 public:
  bool active() const { return entered_ && why_inactive_.empty(); }
  const std::string& why_inactive() const { return why_inactive_; }
  py::object report() const { return report_ ? py::cast(*report_) : py::none(); }

 protected:
  void begin() {
    if (entered_)
      throw std::runtime_error("gpuprof: this " + kind() + " was already entered; make a new one");
    entered_ = true;
  }
  void refuse(const std::string& why) {
    why_inactive_ = why;
    std::cerr << "gpuprof: " << kind() << " is off: " << why << ". Scopes keep timing.\n";
  }
  void finish(bool adopt_other_threads) { report_ = take_report(adopt_other_threads); }
  virtual std::string kind() const = 0;
  virtual ~ObserverContext() = default;

  bool entered_ = false;
  std::string why_inactive_;
  std::optional<gpuprof::Report> report_;
};

class PyKernelCapture : public ObserverContext {
 public:
  PyKernelCapture(bool copies, bool driver_api, bool launch_callbacks, bool allocations,
                  std::size_t buffer_bytes) {
#if GPUPROF_WITH_CUPTI
    options_.copies = copies;
    options_.driver_api = driver_api;
    options_.launch_callbacks = launch_callbacks;
    options_.allocations = allocations;
    options_.buffer_bytes = buffer_bytes;
#else
    (void)copies, (void)driver_api, (void)launch_callbacks, (void)allocations, (void)buffer_bytes;
#endif
  }

  void enter() {
    begin();
    // No CUPTI to load (gpuprof.load_cupti says what it tried), or another
    // CUPTI client in this process that gpuprof cannot see from CUPTI's side
    // (torch.profiler while it records): gpuprof._cupti_refusal asks torch,
    // if torch is imported.
    const std::string refusal = py::module_::import("gpuprof").attr("_cupti_refusal")().cast<std::string>();
    if (!refusal.empty()) return refuse(refusal);
#if GPUPROF_WITH_CUPTI
    capture_ = std::make_unique<gpuprof::KernelCapture>(options_);  // says on stderr why it is off
    if (!capture_->active()) {
      why_inactive_ = capture_->why_inactive();
      capture_.reset();
      // Kineto subscribes without a name and keeps its subscription once it has run.
      if (why_inactive_.find("another CUPTI client") != std::string::npos &&
          PyDict_GetItemString(PyImport_GetModuleDict(), "torch")) {
        const std::string hint =
            "torch.profiler keeps CUPTI once it has run in a process: capture in another process";
        why_inactive_ += " (" + hint + ")";
        std::cerr << "gpuprof: " << hint << "\n";
      }
    }
#endif
  }
  void exit() {
#if GPUPROF_WITH_CUPTI
    if (capture_) {
      py::gil_scoped_release release;
      capture_->stop();
    }
#endif
    finish(true);
#if GPUPROF_WITH_CUPTI
    py::gil_scoped_release release;
    capture_.reset();  // unsubscribes: CUPTI is free for the next client
#endif
  }
  std::vector<gpuprof::KernelRecord> records() {
#if GPUPROF_WITH_CUPTI
    if (capture_) {
      py::gil_scoped_release release;
      return capture_->records();
    }
#endif
    return {};
  }
  std::uint64_t dropped() {
#if GPUPROF_WITH_CUPTI
    if (capture_) return capture_->dropped();
#endif
    return report_ ? report_->dropped_kernel_records : 0;
  }
  // None while no capture runs (not entered, off, or left).
  py::object uses_launch_callbacks() const {
#if GPUPROF_WITH_CUPTI
    if (capture_) return py::bool_(capture_->uses_launch_callbacks());
#endif
    return py::none();
  }
  void clear() {
#if GPUPROF_WITH_CUPTI
    if (capture_) {
      py::gil_scoped_release release;
      capture_->clear();
    }
#endif
  }

 private:
  std::string kind() const override { return "kernel capture"; }
#if GPUPROF_WITH_CUPTI
  gpuprof::KernelCaptureOptions options_;
  std::unique_ptr<gpuprof::KernelCapture> capture_;
#endif
};

class PyMemoryWatch : public ObserverContext {
 public:
  void enter() {
    begin();
#if GPUPROF_WITH_CUDA
    watch_ = std::make_unique<gpuprof::MemoryWatch>();  // says on stderr why it is off
    if (!watch_->active()) {
      why_inactive_ = watch_->why_inactive();
      watch_.reset();
    }
#else
    refuse("this gpuprof module was built without CUDA");
#endif
  }
  void exit() {
    finish(true);
#if GPUPROF_WITH_CUDA
    watch_.reset();
#endif
  }

 private:
  std::string kind() const override { return "memory watch"; }
#if GPUPROF_WITH_CUDA
  std::unique_ptr<gpuprof::MemoryWatch> watch_;
#endif
};

// Calls a Python tracker at every scope boundary while registered:
// tracker.begin(instance_id), tracker.end(instance_id), and at report time
// tracker.finished() -> {instance_id: (peak_allocated_bytes, reserved_bytes)}
// (gpuprof/torch_memory.py). Scopes on threads without the GIL take it.
class PythonTrackerObserver final : public gpuprof::ScopeObserver {
 public:
  explicit PythonTrackerObserver(py::object tracker) : tracker_(std::move(tracker)) {}
  ~PythonTrackerObserver() override {
    const py::gil_scoped_acquire gil;
    tracker_ = py::object();
  }
  void on_scope_begin(std::uint64_t instance_id) override { call("begin", instance_id); }
  void on_scope_end(std::uint64_t instance_id) override { call("end", instance_id); }
  void on_reset() override { call("clear_finished"); }
  void contribute(gpuprof::Report& report) override {
    const py::gil_scoped_acquire gil;
    if (!problem_.empty()) std::cerr << "gpuprof: torch memory watch: " << problem_ << "\n";
    problem_.clear();
    const py::dict finished = tracker_.attr("finished")();
    for (const gpuprof::ScopeInstance& instance : report.instances) {
      const py::int_ id(instance.id);
      if (instance.node < 0 || !finished.contains(id)) continue;
      const auto figures = finished[id].cast<std::pair<std::int64_t, std::int64_t>>();
      gpuprof::ScopeNode& node = report.nodes[static_cast<std::size_t>(instance.node)];
      node.peak_allocated_bytes = std::max(node.peak_allocated_bytes, figures.first);
      node.reserved_bytes = std::max(node.reserved_bytes, figures.second);
    }
  }

 private:
  // Inside scope destructors: a Python error is remembered and reported with
  // the report, never thrown through the scope.
  template <class... Args>
  void call(const char* method, Args... args) noexcept {
    const py::gil_scoped_acquire gil;
    try {
      tracker_.attr(method)(args...);
    } catch (const std::exception& error) {  // py::error_already_set included
      if (problem_.empty()) problem_ = std::string(method) + " failed: " + error.what();
    }
  }
  py::object tracker_;
  std::string problem_;  // guarded by the GIL
};

class PyScopeHooks : public ObserverContext {
 public:
  PyScopeHooks(py::object tracker, std::string why_off)
      : tracker_(std::move(tracker)), why_off_(std::move(why_off)) {}
  void enter() {
    begin();
    if (!why_off_.empty()) return refuse(why_off_);
    observer_ = std::make_unique<PythonTrackerObserver>(tracker_);
    gpuprof::profiler().add_observer(observer_.get());
  }
  void exit() {
    finish(true);
    if (!observer_) return;
    {
      // remove_observer waits for callbacks in flight, which may wait for the GIL.
      const py::gil_scoped_release release;
      gpuprof::profiler().remove_observer(observer_.get());
    }
    observer_.reset();
  }

 private:
  std::string kind() const override { return "torch memory watch"; }
  py::object tracker_;
  std::string why_off_;
  std::unique_ptr<PythonTrackerObserver> observer_;
};

template <class Context>
void bind_context(py::class_<Context>& cls) {
  cls.def("__enter__",
          [](py::object self) {
            self.cast<Context&>().enter();
            return self;
          })
      .def("__exit__",
           [](Context& c, const py::handle&, const py::handle&, const py::handle&) {
             c.exit();
             return false;
           })
      .def_property_readonly("active", &Context::active)
      .def_property_readonly("why_inactive", &Context::why_inactive)
      .def_property_readonly("report", &Context::report, "The report taken on leaving (None before)");
}

}  // namespace

void bind_captures(py::module_& m) {
  py::class_<PyKernelCapture> capture(
      m, "KernelCapture",
      "Every kernel, copy and memset (CUPTI), attributed to the gpuprof scope that launched it. "
      "One at a time per process; off (with the reason) when another CUPTI client holds CUPTI.");
  capture
      .def(py::init<bool, bool, bool, bool, std::size_t>(), py::kw_only(), py::arg("copies") = true,
           py::arg("driver_api") = true, py::arg("launch_callbacks") = true, py::arg("allocations") = false,
           py::arg("buffer_bytes") = 8u << 20)
      .def("records", &PyKernelCapture::records, "The records captured so far (flushes first)")
      .def_property_readonly("dropped", &PyKernelCapture::dropped, "records CUPTI could not store")
      .def_property_readonly(
          "uses_launch_callbacks", &PyKernelCapture::uses_launch_callbacks,
          "True: launches are tied to scopes by callbacks (launch_callbacks=True); False: by "
          "activity records; None while not capturing")
      .def("clear", &PyKernelCapture::clear, "Forget what was captured so far (e.g. after warm-up)");
  bind_context(capture);

  py::class_<PyMemoryWatch> watch(m, "MemoryWatch",
                                  "Device-memory high-water mark per scope (ScopeNode.peak_device_bytes)");
  watch.def(py::init<>());
  bind_context(watch);

  py::class_<PyScopeHooks> hooks(m, "_ScopeHooks",
                                 "Calls tracker.begin/end(instance_id) at every scope boundary while entered "
                                 "(off with the reason when why_off is given); gpuprof.TorchMemoryWatch");
  hooks.def(py::init<py::object, std::string>(), py::arg("tracker"), py::arg("why_off") = "");
  bind_context(hooks);
}

}  // namespace gpuprof_python
