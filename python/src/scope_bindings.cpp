// python/src/scope_bindings.cpp: gpuprof.scope, gpuprof.begin_scope,
// gpuprof.Work and the profiler switches (gpuprof.profiler()).
//
// A scope is this C++ class, its __enter__ and __exit__ open and close a
// gpuprof::Scope directly: no Python frame runs between the `with` and the
// recorder. The stream is resolved at entry and only when the scope records
// CUDA events: NVTX-only and host-clock scopes never ask torch for it.
// begin_scope returns a gpuprof::ScopeHandle, ended by .end() or when the
// object is collected.
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <unordered_map>
#include <utility>
#include <vector>

#include <gpuprof/profiler.hpp>
#include <gpuprof/scope.hpp>
#include <gpuprof/scope_handle.hpp>
#include <gpuprof/step_schedule.hpp>

#include "bindings.hpp"

namespace py = pybind11;

namespace gpuprof_python {

gpuprof::Stream stream_of(const py::handle& stream) {
  if (stream.is_none()) return nullptr;
  py::object handle = py::reinterpret_borrow<py::object>(stream);
  if (!py::isinstance<py::int_>(handle)) {
    if (!py::hasattr(handle, "cuda_stream"))
      throw py::type_error(
          "gpuprof: stream must be None, an integer handle or have .cuda_stream (torch.cuda.Stream)");
    handle = handle.attr("cuda_stream");
  }
  return reinterpret_cast<gpuprof::Stream>(handle.cast<std::uintptr_t>());
}

namespace {

// torch._C's raw-stream getters, found once torch is imported and has
// initialised CUDA (both stay true). Leaked on purpose: the interpreter may be
// gone when static destructors run.
struct TorchStreams {
  PyObject* current_raw_stream = nullptr;  // torch._C._cuda_getCurrentRawStream(device) -> int
  PyObject* current_device = nullptr;      // torch._C._cuda_getDevice() -> int
  PyObject* current_stream = nullptr;      // fallback: torch.cuda.current_stream
};

const TorchStreams* torch_streams() {
  static TorchStreams* found = nullptr;
  if (found) return found;
  PyObject* torch = PyDict_GetItemString(PyImport_GetModuleDict(), "torch");  // borrowed; no import
  if (!torch) return nullptr;
  // A module named torch without these (a test's stand-in, another package)
  // gives no stream: scopes then use the default stream.
  py::object module = py::reinterpret_borrow<py::object>(torch);
  py::object cuda = py::getattr(module, "cuda", py::none());
  py::object initialized = cuda.is_none() ? py::none() : py::getattr(cuda, "is_initialized", py::none());
  if (initialized.is_none() || !initialized().cast<bool>()) return nullptr;
  py::object c = py::getattr(module, "_C", py::none());
  auto* streams = new TorchStreams;
  if (!c.is_none() && py::hasattr(c, "_cuda_getCurrentRawStream") && py::hasattr(c, "_cuda_getDevice")) {
    streams->current_raw_stream = py::object(c.attr("_cuda_getCurrentRawStream")).release().ptr();
    streams->current_device = py::object(c.attr("_cuda_getDevice")).release().ptr();
  } else if (py::hasattr(cuda, "current_stream")) {
    streams->current_stream = py::object(cuda.attr("current_stream")).release().ptr();
  } else {
    delete streams;
    return nullptr;
  }
  found = streams;
  return found;
}

}  // namespace

gpuprof::Stream current_stream() {
  const TorchStreams* torch = torch_streams();
  if (!torch) return nullptr;
  if (torch->current_raw_stream) {
    py::object device = py::reinterpret_steal<py::object>(PyObject_CallNoArgs(torch->current_device));
    if (!device) throw py::error_already_set();
    py::object raw =
        py::reinterpret_steal<py::object>(PyObject_CallOneArg(torch->current_raw_stream, device.ptr()));
    if (!raw) throw py::error_already_set();
    return reinterpret_cast<gpuprof::Stream>(raw.cast<std::uintptr_t>());
  }
  return stream_of(py::reinterpret_borrow<py::object>(torch->current_stream)());
}

namespace {

// One call site per scope name for the whole process: a call site binds its
// name once and keeps that binding forever, so sites are interned, not made
// per scope object.
gpuprof::CallSite& call_site(const std::string& name) {
  static std::mutex mutex;
  static auto* sites = new std::unordered_map<std::string, std::unique_ptr<gpuprof::CallSite>>;
  const std::lock_guard<std::mutex> lock(mutex);
  std::unique_ptr<gpuprof::CallSite>& site = (*sites)[name];
  if (!site) site = std::make_unique<gpuprof::CallSite>();
  return *site;
}

gpuprof::Work work_of(const py::handle& work) {
  if (work.is_none()) return {};
  if (py::isinstance<gpuprof::Work>(work)) return work.cast<gpuprof::Work>();
  if (py::isinstance<py::dict>(work)) {
    gpuprof::Work result;
    for (const auto& [key, value] : work.cast<py::dict>()) {
      const std::string field = key.cast<std::string>();
      const double amount = value.cast<double>();
      if (field == "flops") result.flops = amount;
      else if (field == "bytes") result.bytes = amount;
      else if (field == "tokens") result.tokens = amount;
      else throw py::value_error("gpuprof: unknown work field '" + field + "' (flops, bytes, tokens)");
    }
    return result;
  }
  throw py::type_error("gpuprof: work must be None, a gpuprof.Work or a dict with flops/bytes/tokens");
}

bool records_events() { return gpuprof::profiler().scopes_record_events(); }

// The stream a scope opened now records on: the given one, or with None the
// current torch stream when it records CUDA events.
gpuprof::Stream scope_stream(bool current, gpuprof::Stream given) {
  return current && records_events() ? current_stream() : given;
}

class PyScope {
 public:
  PyScope(std::string name, const py::object& stream, const py::object& work)
      : name_(std::move(name)),
        site_(&call_site(name_)),
        stream_(stream_of(stream)),
        current_stream_(stream.is_none()),
        work_(work_of(work)),
        has_work_(!work.is_none()) {}

  // A scope object may be entered again while open (recursion), on the
  // thread that holds it open: a gpuprof::Scope closes on its own thread.
  void enter() {
    if (depth_ == 0) {
      owner_ = std::this_thread::get_id();
    } else if (owner_ != std::this_thread::get_id()) {
      throw std::runtime_error("gpuprof.scope('" + name_ +
                               "') is open on another thread: make one scope object per thread");
    }
    std::optional<gpuprof::Scope>& slot = slot_at(depth_);
    open(slot);
    ++depth_;
  }
  void exit() {
    if (depth_ == 0) throw std::runtime_error("gpuprof.scope('" + name_ + "') exited without being entered");
    if (owner_ != std::this_thread::get_id())
      throw std::runtime_error("gpuprof.scope('" + name_ +
                               "') exited on another thread than it was entered on");
    --depth_;
    slot_at(depth_).reset();
  }
  // The decorator's call: a scope of its own on this thread's stack, so a
  // decorated function may run on several threads at once.
  py::object run(const py::function& fn, const py::tuple& args, const py::dict& kwargs) {
    std::optional<gpuprof::Scope> scope;
    open(scope);
    return fn(*args, **kwargs);
  }
  const std::string& name() const { return name_; }

 private:
  void open(std::optional<gpuprof::Scope>& slot) {
    const gpuprof::Stream stream = scope_stream(current_stream_, stream_);
    if (has_work_) slot.emplace(*site_, name_, stream, work_);
    else slot.emplace(*site_, name_, stream);
  }
  std::optional<gpuprof::Scope>& slot_at(std::size_t depth) {
    if (depth == 0) return first_;
    while (nested_.size() < depth) nested_.push_back(std::make_unique<std::optional<gpuprof::Scope>>());
    return *nested_[depth - 1];
  }

  std::string name_;
  gpuprof::CallSite* site_;
  gpuprof::Stream stream_;
  bool current_stream_;
  gpuprof::Work work_;
  bool has_work_;
  std::size_t depth_ = 0;
  std::thread::id owner_;
  std::optional<gpuprof::Scope> first_;
  std::vector<std::unique_ptr<std::optional<gpuprof::Scope>>> nested_;  // a Scope never moves
};

// The Python type gpuprof.scope, written against the C API rather than
// through pybind11: a `with` then costs two direct method calls, without
// pybind11's argument dispatch (which cost more than the scope itself).
struct ScopeObject {
  PyObject_HEAD PyScope* scope;
};

PyScope& scope_of(PyObject* self) { return *reinterpret_cast<ScopeObject*>(self)->scope; }

// Runs `body`, turning a C++ exception into the Python error it stands for.
template <class Body>
bool python_errors_from(Body&& body) {
  try {
    body();
    return true;
  } catch (py::error_already_set& error) {
    error.restore();
  } catch (py::builtin_exception& error) {
    error.set_error();
  } catch (const std::exception& error) {
    PyErr_SetString(PyExc_RuntimeError, error.what());
  }
  return false;
}

int scope_init(PyObject* self, PyObject* args, PyObject* kwargs) {
  static const char* keywords[] = {"name", "stream", "work", nullptr};
  PyObject* name_object = nullptr;
  PyObject* stream = Py_None;
  PyObject* work = Py_None;
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "U|OO:scope", const_cast<char**>(keywords), &name_object,
                                   &stream, &work))
    return -1;
  Py_ssize_t length = 0;
  const char* name = PyUnicode_AsUTF8AndSize(name_object, &length);
  if (!name) return -1;
  auto* object = reinterpret_cast<ScopeObject*>(self);
  return python_errors_from([&] {
    auto* made =
        new PyScope(std::string(name, static_cast<std::size_t>(length)),
                    py::reinterpret_borrow<py::object>(stream), py::reinterpret_borrow<py::object>(work));
    delete object->scope;
    object->scope = made;
  })
             ? 0
             : -1;
}

void scope_dealloc(PyObject* self) {
  delete reinterpret_cast<ScopeObject*>(self)->scope;
  Py_TYPE(self)->tp_free(self);
}

bool initialized(PyObject* self) {
  if (reinterpret_cast<ScopeObject*>(self)->scope) return true;
  PyErr_SetString(PyExc_RuntimeError, "gpuprof.scope was not initialized");
  return false;
}

PyObject* scope_enter(PyObject* self, PyObject*) {
  if (!initialized(self) || !python_errors_from([&] { scope_of(self).enter(); })) return nullptr;
  Py_INCREF(self);
  return self;
}

PyObject* scope_exit(PyObject* self, PyObject* const*, Py_ssize_t) {
  if (!initialized(self) || !python_errors_from([&] { scope_of(self).exit(); })) return nullptr;
  Py_RETURN_FALSE;  // exceptions from the block propagate
}

PyObject* scope_run(PyObject* self, PyObject* args) {
  PyObject* fn = nullptr;
  PyObject* fn_args = nullptr;
  PyObject* fn_kwargs = nullptr;
  if (!initialized(self) ||
      !PyArg_ParseTuple(args, "OO!O!:_run", &fn, &PyTuple_Type, &fn_args, &PyDict_Type, &fn_kwargs))
    return nullptr;
  PyObject* result = nullptr;
  python_errors_from([&] {
    result = scope_of(self)
                 .run(py::reinterpret_borrow<py::function>(fn), py::reinterpret_borrow<py::tuple>(fn_args),
                      py::reinterpret_borrow<py::dict>(fn_kwargs))
                 .release()
                 .ptr();
  });
  return result;
}

// @gpuprof.scope(name): gpuprof._decorate wraps fn with functools.wraps.
PyObject* scope_call(PyObject* self, PyObject* args, PyObject* kwargs) {
  PyObject* fn = nullptr;
  static const char* keywords[] = {"fn", nullptr};
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O:scope.__call__", const_cast<char**>(keywords), &fn))
    return nullptr;
  PyObject* result = nullptr;
  python_errors_from([&] {
    result =
        py::module_::import("gpuprof").attr("_decorate")(py::handle(self), py::handle(fn)).release().ptr();
  });
  return result;
}

PyObject* scope_name(PyObject* self, void*) {
  if (!initialized(self)) return nullptr;
  const std::string& name = scope_of(self).name();
  return PyUnicode_FromStringAndSize(name.data(), static_cast<Py_ssize_t>(name.size()));
}

PyObject* scope_repr(PyObject* self) {
  if (!initialized(self)) return nullptr;
  PyObject* name = scope_name(self, nullptr);
  if (!name) return nullptr;
  PyObject* repr = PyUnicode_FromFormat("gpuprof.scope(%R)", name);
  Py_DECREF(name);
  return repr;
}

PyTypeObject* ready_scope_type() {
  static PyMethodDef methods[] = {
      {"__enter__", scope_enter, METH_NOARGS, "Open the scope"},
      {"__exit__", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(scope_exit)), METH_FASTCALL,
       "Close the scope (exceptions propagate)"},
      {"_run", scope_run, METH_VARARGS, "fn(*args, **kwargs) inside a scope of its own"},
      {nullptr, nullptr, 0, nullptr}};
  static PyGetSetDef getset[] = {{"name", scope_name, nullptr, "the scope's name", nullptr},
                                 {nullptr, nullptr, nullptr, nullptr, nullptr}};
  static PyTypeObject type = [] {
    PyTypeObject t{};  // zeros, then the fields used; the reference count a static type starts with
    Py_SET_REFCNT(reinterpret_cast<PyObject*>(&t), 1);
    t.tp_name = "gpuprof.scope";
    t.tp_basicsize = sizeof(ScopeObject);
    t.tp_flags = Py_TPFLAGS_DEFAULT;
    t.tp_doc =
        "scope(name, stream=None, work=None): a timed range, `with gpuprof.scope(name):` or "
        "`@gpuprof.scope(name)`. stream: a torch.cuda.Stream, an integer handle, or None (the current "
        "torch stream when torch has initialised CUDA, else the default stream). work: gpuprof.Work or "
        "a dict with flops/bytes/tokens. One object may be entered again while open (recursion) on the "
        "thread that holds it.";
    t.tp_new = PyType_GenericNew;
    t.tp_init = scope_init;
    t.tp_dealloc = scope_dealloc;
    t.tp_methods = methods;
    t.tp_getset = getset;
    t.tp_call = scope_call;
    t.tp_repr = scope_repr;
    return t;
  }();
  if (PyType_Ready(&type) < 0) throw py::error_already_set();
  return &type;
}

}  // namespace

void bind_scopes(py::module_& m) {
  py::class_<gpuprof::Work>(m, "Work", "Work done by one execution of a scope (0: not declared)")
      .def(py::init([](double flops, double bytes, double tokens) {
             return gpuprof::Work{flops, bytes, tokens};
           }),
           py::kw_only(), py::arg("flops") = 0.0, py::arg("bytes") = 0.0, py::arg("tokens") = 0.0)
      .def_readwrite("flops", &gpuprof::Work::flops)
      .def_readwrite("bytes", &gpuprof::Work::bytes)
      .def_readwrite("tokens", &gpuprof::Work::tokens)
      .def("__repr__", [](const gpuprof::Work& w) {
        return "gpuprof.Work(flops=" + py::repr(py::float_(w.flops)).cast<std::string>() +
               ", bytes=" + py::repr(py::float_(w.bytes)).cast<std::string>() +
               ", tokens=" + py::repr(py::float_(w.tokens)).cast<std::string>() + ")";
      });

  PyTypeObject* scope_type = ready_scope_type();
  Py_INCREF(scope_type);
  m.add_object("scope", py::reinterpret_steal<py::object>(reinterpret_cast<PyObject*>(scope_type)));

  py::class_<gpuprof::ScopeHandle>(m, "ScopeHandle",
                                   "A scope begun by gpuprof.begin_scope: .end() ends it (again: nothing); "
                                   "it also ends when the object is collected")
      .def("end", &gpuprof::ScopeHandle::end,
           "End the scope; gpuprof.Error on a thread other than the one that began it")
      .def_property_readonly("active", &gpuprof::ScopeHandle::active, "begun and not ended")
      .def_property_readonly("instance_id", &gpuprof::ScopeHandle::instance_id);
  m.def(
      "begin_scope",
      [](const std::string& name, const py::object& stream, const py::object& work) {
        const gpuprof::Stream resolved = scope_stream(stream.is_none(), stream_of(stream));
        if (work.is_none()) return gpuprof::begin_scope(name, resolved);
        return gpuprof::begin_scope(name, resolved, work_of(work));
      },
      py::arg("name"), py::arg("stream") = py::none(), py::arg("work") = py::none(),
      "The scope gpuprof.scope(name, stream, work) opens, for code where `with` does not fit: returns a "
      "ScopeHandle; call .end() on the thread that began it. Scopes end innermost first; one ended "
      "early stops its time then and leaves the tree after the scopes inside it.");

  py::enum_<gpuprof::StepAction>(m, "StepAction",
                                 "A step's part in a schedule, as torch.profiler.ProfilerAction names it")
      .value("NONE", gpuprof::StepAction::none)
      .value("WARMUP", gpuprof::StepAction::warmup)
      .value("RECORD", gpuprof::StepAction::record)
      .value("RECORD_AND_SAVE", gpuprof::StepAction::record_and_save);
  py::class_<gpuprof::StepSchedule>(
      m, "StepSchedule",
      "Which steps a profile keeps: gpuprof.schedule(...); called with a step, its StepAction")
      .def("__call__", &gpuprof::StepSchedule::action, py::arg("step"))
      .def_readonly("wait", &gpuprof::StepSchedule::wait)
      .def_readonly("warmup", &gpuprof::StepSchedule::warmup)
      .def_readonly("active", &gpuprof::StepSchedule::active)
      .def_readonly("repeat", &gpuprof::StepSchedule::repeat)
      .def_readonly("skip_first", &gpuprof::StepSchedule::skip_first)
      .def("__repr__", [](const gpuprof::StepSchedule& s) {
        return "gpuprof.schedule(wait=" + std::to_string(s.wait) + ", warmup=" + std::to_string(s.warmup) +
               ", active=" + std::to_string(s.active) + ", repeat=" + std::to_string(s.repeat) +
               ", skip_first=" + std::to_string(s.skip_first) + ")";
      });
  m.def("schedule", &gpuprof::schedule, py::kw_only(), py::arg("wait"), py::arg("warmup"), py::arg("active"),
        py::arg("repeat") = 0, py::arg("skip_first") = 0,
        "torch.profiler.schedule's steps: skip_first steps, then cycles of wait, warmup and active steps, "
        "repeat times (0: without end). gpuprof.Error unless active >= 1 and the others >= 0.");

  py::class_<gpuprof::Profiler, std::unique_ptr<gpuprof::Profiler, py::nodelete>>(
      m, "Profiler", "The process's profiler: gpuprof.profiler()")
      .def("step", &gpuprof::Profiler::step, py::call_guard<py::gil_scoped_release>(),
           "Mark a step boundary. With a schedule, scopes begun in steps that are not active (skip_first, "
           "wait, warmup, past the last cycle) are left out of reports and kernel capture; see "
           "docs/profiling.md, 'Steps and schedules'")
      .def("set_schedule", &gpuprof::Profiler::set_schedule, py::arg("schedule"),
           py::call_guard<py::gil_scoped_release>(), "Start `schedule` (gpuprof.schedule(...)) at step 0 now")
      .def("clear_schedule", &gpuprof::Profiler::clear_schedule, py::call_guard<py::gil_scoped_release>(),
           "Every step active again (the step count goes on)")
      .def_property_readonly("schedule", &gpuprof::Profiler::schedule, "The schedule in force, or None")
      .def_property_readonly("step_num", &gpuprof::Profiler::step_number,
                             "Steps begun since the start or set_schedule(), as torch.profiler's step_num")
      .def_property_readonly("step_action", &gpuprof::Profiler::step_action,
                             "The current step's StepAction (RECORD without a schedule)")
      .def_property_readonly("instances_outside_active_steps",
                             &gpuprof::Profiler::instances_outside_active_steps,
                             "Scope instances left out because they began outside the active steps "
                             "(read by a report since the last reset)")
      .def("set_warmup", &gpuprof::Profiler::set_warmup, py::arg("n"),
           "Leave the first n instances of each root scope, with everything inside them, out of the "
           "statistics (counted in warmup_instances_left_out; each node keeps its first as cold_ms). "
           "Wins over GPUPROF_WARMUP.")
      .def("warmup", &gpuprof::Profiler::warmup, "The warm-up count in force");
  m.def("profiler", &gpuprof::profiler, py::return_value_policy::reference, "The process's profiler");

  m.def(
      "set_gpu_timing", [](bool on) { gpuprof::profiler().set_gpu_timing(on); }, py::arg("enabled"),
      "False: scopes and bench use the host clock only (NVTX ranges stay)");
  m.def("gpu_timing_requested", [] { return gpuprof::profiler().gpu_timing_requested(); });
  m.def(
      "set_nvtx_only", [](bool on) { gpuprof::profiler().set_nvtx_only(on); }, py::arg("enabled"),
      "True: scopes only push and pop their NVTX range (no clock, no record)");
  m.def(
      "reset", [] { gpuprof::profiler().reset(); }, py::call_guard<py::gil_scoped_release>(),
      "Forget every finished scope instance (and what kernel capture saw)");
  m.def(
      "timing_source", [] { return gpuprof::timing_source_name(gpuprof::profiler().timing_source()); },
      "'cuda_events' when a device is usable and GPU timing is on, else 'host_clock'");
  m.def(
      "timing_note", [] { return gpuprof::profiler().timing_note(); }, "why the host clock, if it is");
  m.def("device_name", [] { return gpuprof::profiler().device_name(); });
  m.def(
      "current_stream", [] { return reinterpret_cast<std::uintptr_t>(current_stream()); },
      "The stream a scope with stream=None records on, as an integer handle");
}

}  // namespace gpuprof_python
