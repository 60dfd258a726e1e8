"""The module on the host clock: what CI checks without a GPU (and what holds with one)."""
import json
import shutil
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

import gpuprof


@pytest.fixture(autouse=True)
def fresh_profiler():
    # Host clock even where a GPU is: these scopes sleep on the host.
    gpuprof.set_gpu_timing(False)
    gpuprof.set_nvtx_only(False)
    gpuprof.reset()
    yield
    gpuprof.set_nvtx_only(False)
    gpuprof.set_gpu_timing(True)
    gpuprof.reset()


def test_nested_scopes_build_the_tree_with_their_time_and_work():
    for _ in range(3):
        with gpuprof.scope("step"):
            with gpuprof.scope("forward", work=gpuprof.Work(flops=2e9, tokens=8)):
                time.sleep(0.002)
            with gpuprof.scope("backward", work={"bytes": 1e6}):
                pass
    report = gpuprof.report()
    assert [n.path for n in report.nodes] == ["step", "step/forward", "step/backward"]
    forward = report.node("step/forward")
    assert forward.count == 3 and forward.depth == 1
    assert forward.host_ms.n == 3 and forward.host_ms.min >= 2.0
    assert forward.work.flops == 2e9 and forward.work.tokens == 8
    assert report.node("step/backward").work.bytes == 1e6
    assert report.node("step").host_ms.min >= forward.host_ms.min
    assert report.node("nowhere") is None
    assert len(report.instances) == 9


def test_a_scope_object_is_reusable_and_reentrant():
    s = gpuprof.scope("again")

    def recurse(depth):
        with s:
            if depth:
                recurse(depth - 1)

    recurse(3)
    with s:
        pass
    report = gpuprof.report()
    paths = [n.path for n in report.nodes]
    assert paths == ["again", "again/again", "again/again/again", "again/again/again/again"]
    assert report.node("again").count == 2


def test_exit_without_enter_and_cross_thread_use_are_errors():
    s = gpuprof.scope("lonely")
    with pytest.raises(RuntimeError, match="without being entered"):
        s.__exit__(None, None, None)
    s.__enter__()
    errors = []

    def other():
        try:
            s.__enter__()
        except RuntimeError as error:
            errors.append(str(error))

    t = threading.Thread(target=other)
    t.start()
    t.join()
    s.__exit__(None, None, None)
    assert errors and "another thread" in errors[0]


def test_exceptions_close_the_scope_and_propagate():
    with pytest.raises(ValueError):
        with gpuprof.scope("raises"):
            raise ValueError("inside")
    with gpuprof.scope("after"):
        pass
    report = gpuprof.report()
    assert [n.path for n in report.nodes] == ["raises", "after"]  # "after" is not nested in "raises"


def test_decorator_keeps_metadata_and_times_every_call_on_every_thread():
    @gpuprof.scope("decorated")
    def work(x, y=1):
        """Adds."""
        return x + y

    assert work.__name__ == "work" and work.__doc__ == "Adds." and work.__wrapped__ is not None
    assert work(1, y=2) == 3
    threads = [threading.Thread(target=lambda: [work(i) for i in range(50)]) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    node = gpuprof.report().node("decorated")
    assert node.count == 201

    @gpuprof.scope("failing")
    def fail():
        raise KeyError("x")

    with pytest.raises(KeyError):
        fail()
    assert gpuprof.report().node("failing").count == 1


def test_stream_and_work_arguments_are_checked():
    class FakeTorchStream:
        cuda_stream = 0

    with gpuprof.scope("on a stream", stream=FakeTorchStream()):
        pass
    with gpuprof.scope("on handle 0", stream=0):
        pass
    with pytest.raises(TypeError, match="cuda_stream"):
        gpuprof.scope("bad", stream="stream 1")
    with pytest.raises(TypeError, match="work"):
        gpuprof.scope("bad", work=[1, 2])
    with pytest.raises(ValueError, match="unknown work field 'flop'"):
        gpuprof.scope("bad", work={"flop": 1})
    assert gpuprof.current_stream() == 0  # no torch here: the default stream


def test_nvtx_only_records_nothing_and_reset_forgets():
    gpuprof.set_nvtx_only(True)
    with gpuprof.scope("unrecorded"):
        pass
    gpuprof.set_nvtx_only(False)
    assert gpuprof.report().nodes == []
    with gpuprof.scope("recorded"):
        pass
    assert gpuprof.report().node("recorded").count == 1
    gpuprof.reset()
    assert gpuprof.report().node("recorded") is None


def test_switches_say_where_time_comes_from():
    gpuprof.set_gpu_timing(False)
    try:
        assert gpuprof.gpu_timing_requested() is False
        assert gpuprof.timing_source() == "host_clock"
        assert gpuprof.timing_note()
    finally:
        gpuprof.set_gpu_timing(True)
    assert gpuprof.gpu_timing_requested() is True


def test_bench_returns_the_summary_as_python_objects():
    calls = []
    result = gpuprof.bench(lambda: (calls.append(1), time.sleep(0.001)), warmup=2, iters=7)
    assert len(calls) == 1 + 2 + 7  # cold, warm-up, samples
    assert result.warmup_calls == 2 and len(result.host_ms) == 7
    assert result.primary.n == 7 and result.primary.min >= 1.0
    assert result.primary.median == pytest.approx(sorted(result.host_ms)[3])
    assert result.stop_reason == "7 iterations"
    d = result.to_dict()
    assert d["host"]["n"] == 7 and d["host"]["samples"] == sorted(result.host_ms)
    json.dumps(d)  # plain Python objects only
    assert "ms" in result.summary()
    with pytest.raises(gpuprof.Error, match="iters must be >= 1"):
        gpuprof.bench(lambda: None, iters=0)
    with pytest.raises(ZeroDivisionError):
        gpuprof.bench(lambda: 1 / 0)


def test_writers_write_every_format(tmp_path):
    for _ in range(6):
        with gpuprof.scope("step"):
            pass
    report = gpuprof.report()
    for writer, name in [("write_json", "r.json"), ("write_csv", "r.csv"), ("write_markdown", "r.md"),
                         ("write_chrome_trace", "r.trace.json"), ("write_html", "r.html")]:
        getattr(report, writer)(str(tmp_path / name))
        assert (tmp_path / name).stat().st_size > 0
    assert json.loads((tmp_path / "r.json").read_text())["schema"] == "gpuprof.report"
    assert json.loads(report.json())["nodes"][0]["path"] == "step"
    assert "step" in report.table() and "step" in report.markdown()
    with pytest.raises(gpuprof.Error):
        report.write_json(str(tmp_path / "missing" / "dir" / "r.json"))
    again = gpuprof.read_report(str(tmp_path / "r.json"))
    assert again.node("step").count == 6


def test_write_kern_sum_takes_the_rows_then_the_path(tmp_path):
    path = tmp_path / "kern_sum.csv"
    gpuprof.write_kern_sum(gpuprof.kern_sum([]), str(path))
    assert path.read_text().splitlines()[0].startswith('"Time (%)"')
    with pytest.raises(TypeError):
        gpuprof.write_kern_sum(str(path), gpuprof.kern_sum([]))


def test_compare_reports_and_files(tmp_path):
    for _ in range(6):
        with gpuprof.scope("fast"):
            time.sleep(0.01)
    base = gpuprof.report()
    base.write_json(str(tmp_path / "base.json"))
    gpuprof.reset()
    for _ in range(6):
        with gpuprof.scope("fast"):
            time.sleep(0.04)
    slower = gpuprof.report()
    for comparison in (gpuprof.compare(base, slower), gpuprof.compare(str(tmp_path / "base.json"), slower)):
        (row,) = comparison.rows
        assert (row.kind, row.key, row.test) == ("scope", "fast", "Mann-Whitney U")
        assert row.ratio > 2
        # A loaded machine's late wake-ups can pass a side's cv over 5 %: one
        # pair of runs with an unstable side is "noisy", never "slower".
        assert row.verdict in ("slower", "noisy")
        assert (row.verdict == "slower") == comparison.regressed()
    with pytest.raises(gpuprof.Error, match="nope.json"):
        gpuprof.compare(str(tmp_path / "nope.json"), slower)


def test_compare_bench_files_gives_the_verdict_of_their_samples(tmp_path):
    # Samples as written, so the verdict does not hang on this machine's noise.
    template = json.loads((Path(__file__).resolve().parents[2] / "fuzz/corpus/bench/bench.json").read_text())

    def bench_file(name, scale):
        doc = dict(template, benchmarks=[dict(template["benchmarks"][0], name="step")])
        doc["benchmarks"][0]["host_ms"] = {"samples_ms": [scale * (1 + 0.001 * i) for i in range(8)]}
        path = tmp_path / name
        path.write_text(json.dumps(doc))
        return str(path)

    same = gpuprof.compare(bench_file("a.json", 1.0), bench_file("b.json", 1.0))
    assert [row.verdict for row in same.rows] == ["same"] and not same.regressed()
    slower = gpuprof.compare(bench_file("a.json", 1.0), bench_file("c.json", 1.3))
    (row,) = slower.rows
    assert (row.kind, row.key, row.verdict) == ("bench", "step", "slower")
    assert row.ratio == pytest.approx(1.3) and slower.regressed() and "slower" in slower.text()
    assert gpuprof.compare(bench_file("a.json", 1.0), bench_file("c.json", 1.3), threshold=0.5).rows[0].verdict == "same"


def test_kernel_summaries_and_launch_time_adoption(tmp_path):
    # A report as kernel capture would leave it: two scopes on the main
    # thread, one kernel launched inside each from a thread without scopes.
    with gpuprof.scope("step"):
        with gpuprof.scope("forward"):
            time.sleep(0.001)
        with gpuprof.scope("backward"):
            time.sleep(0.001)
    report = json.loads(gpuprof.report().json())
    instances = {report["nodes"][i["node"]]["path"]: i for i in report["instances"]}

    def kernel(name, inside, scope_instance=0):
        middle = (instances[inside]["host_begin_ns"] + instances[inside]["host_end_ns"]) // 2
        return {"kind": "kernel", "name": name, "base_name": name, "category": "gemm" if "gemm" in name else "softmax",
                "start_ns": middle, "end_ns": middle + 1000, "launch_ns": middle, "device": 0, "stream": 7,
                "correlation_id": 1, "scope_instance": scope_instance, "grid": [1, 1, 1], "block": [32, 1, 1],
                "registers_per_thread": 8, "shared_bytes": 0, "bytes": 0}

    report["kernels"] = [kernel("gemm_fwd", "step/forward", instances["step/forward"]["id"]),
                         kernel("gemm_bwd", "step/backward"), kernel("softmax_bwd", "step/backward")]
    report["recorded_kernels"] = len(report["kernels"])  # every one within the window
    path = tmp_path / "captured.json"
    path.write_text(json.dumps(report))
    captured = gpuprof.read_report(str(path))
    assert [r.name for r in captured.kern_sum("backward")] == []  # launched on another thread: unattributed
    assert captured.adopt_by_launch_time() == 2
    assert sorted(r.name for r in captured.kern_sum("backward")) == ["gemm_bwd", "softmax_bwd"]
    assert [r.name for r in captured.kern_sum("forward")] == ["gemm_fwd"]
    rows = captured.kern_sum("step")
    assert sum(r.instances for r in rows) == 3 and rows[0].total_ns == 1000
    shares = {c.category: c.percent for c in gpuprof.category_breakdown(captured.kernels_in("backward"))}
    assert shares["gemm"] == pytest.approx(50) and shares["softmax"] == pytest.approx(50)
    per_scope = {(r.range, r.kernel.name) for r in captured.scope_kern_sum() if r.view == "innermost"}
    assert ("step/backward", "gemm_bwd") in per_scope
    assert captured.kernel_nodes() == [1, 2, 2]


def test_kernel_capture_without_cupti_says_why_and_scopes_keep_timing():
    with gpuprof.KernelCapture() as capture:
        with gpuprof.scope("still timed"):
            pass
    if gpuprof.with_cupti and capture.active:
        pytest.skip("CUPTI is usable here: the GPU suite covers it")
    assert not capture.active and capture.why_inactive
    assert capture.report.node("still timed").count == 1
    assert capture.records() == [] and capture.dropped == 0
    with pytest.raises(RuntimeError, match="already entered"):
        capture.__enter__()


def test_kernel_capture_refuses_while_torch_profiler_records(monkeypatch):
    # A stand-in for torch with its profiler recording: the refusal must name it.
    import sys
    import types
    fake = types.ModuleType("torch")
    fake.autograd = types.SimpleNamespace(_profiler_enabled=lambda: True)
    monkeypatch.setitem(sys.modules, "torch", fake)
    assert "torch.profiler is recording" in gpuprof._cupti_refusal()
    with gpuprof.KernelCapture() as capture:
        with gpuprof.scope("timed anyway"):
            pass
    assert not capture.active and "torch.profiler" in capture.why_inactive
    assert capture.report.node("timed anyway").count == 1
    fake.autograd = types.SimpleNamespace(_profiler_enabled=lambda: False)
    assert "torch.profiler" not in gpuprof._cupti_refusal()  # what remains: CUPTI missing, where it is


def test_memory_watch_context():
    with gpuprof.MemoryWatch() as watch:
        with gpuprof.scope("allocating"):
            pass
    node = watch.report.node("allocating")
    assert node.count == 1
    if not watch.active:
        assert watch.why_inactive and node.peak_device_bytes == -1


def test_import_gpuprof_leaves_torch_unimported():
    # Its own process: torch interop is optional, so the core module never loads it.
    script = "import sys, gpuprof; print('torch' in sys.modules)"
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "False"


@pytest.mark.skipif(not sys.platform.startswith("linux") or shutil.which("nm") is None,
                    reason="reads the ELF dynamic symbol table with binutils' nm (Linux)")
def test_extension_exports_only_its_init_function():
    # Anything else it exported could bind process-wide (GNU unique symbols of a
    # statically linked libstdc++ did, and crashed a later `import torch`).
    listing = subprocess.run(["nm", "-D", "--defined-only", gpuprof._gpuprof.__file__],
                             capture_output=True, text=True, check=True).stdout
    exported = [line.split()[-1] for line in listing.splitlines() if line.strip()]
    assert exported == ["PyInit__gpuprof"]
