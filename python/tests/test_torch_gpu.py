"""gpuprof with PyTorch on a GPU: streams, kernel capture, coexistence with torch.profiler, agreement with it.

Skipped without PyTorch, without a CUDA device, or with a module built without CUDA.
"""
import json
import os
import subprocess
import sys
import textwrap

import pytest

import gpuprof

torch = pytest.importorskip("torch")
pytestmark = [pytest.mark.gpu,
              pytest.mark.skipif(not torch.cuda.is_available(), reason="no CUDA device"),
              pytest.mark.skipif(not gpuprof.with_cuda, reason="gpuprof built without CUDA")]

EXAMPLES = os.path.join(os.path.dirname(__file__), "..", "..", "examples", "python")


@pytest.fixture(autouse=True)
def fresh():
    gpuprof.set_nvtx_only(False)
    gpuprof.set_gpu_timing(True)
    gpuprof.reset()
    yield
    gpuprof.reset()


def spin(ms):
    """A kernel of roughly `ms` milliseconds (1.4 to 2 GHz clocks) on the current stream."""
    torch.cuda._sleep(int(ms * 1.4e6))  # cycles


def test_scopes_time_the_current_torch_stream_and_a_given_one():
    torch.zeros(1, device="cuda")
    side = torch.cuda.Stream()
    with torch.cuda.stream(side):
        assert gpuprof.current_stream() == side.cuda_stream
        with gpuprof.scope("on the current stream"):
            spin(2)
    with gpuprof.scope("on a given stream", stream=side):
        with torch.cuda.stream(side):
            spin(2)
    torch.cuda.synchronize()
    report = gpuprof.report()
    assert report.timing_source == "cuda_events"
    for path in ("on the current stream", "on a given stream"):
        node = report.node(path)
        assert node.gpu_timed and node.gpu_ms.mean > 1.0, path


def test_event_timed_scope_agrees_with_a_torch_event_pair():
    torch.zeros(1, device="cuda")
    begin, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    torch_ms = []
    for _ in range(10):
        with gpuprof.scope("matmul"):
            begin.record()
            spin(3)
            end.record()
        end.synchronize()
        torch_ms.append(begin.elapsed_time(end))
    node = gpuprof.report().node("matmul")
    assert node.gpu_ms.median == pytest.approx(sorted(torch_ms)[5], rel=0.05)


def test_bench_times_a_torch_function_with_events():
    a = torch.randn(1024, 1024, device="cuda")
    result = gpuprof.bench(lambda: a @ a, warmup=3, iters=20)
    assert result.timing_source == "cuda_events" and len(result.gpu_ms) == 20
    assert 0 < result.gpu.median < 50


def captured_train_steps(**options):
    """Three steps of a small MLP under KernelCapture(**options); the capture (its report taken)."""
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(256, 256), torch.nn.ReLU(), torch.nn.Linear(256, 1)).cuda()
    x = torch.randn(64, 256, device="cuda")
    with gpuprof.KernelCapture(**options) as capture:
        for _ in range(3):
            with gpuprof.scope("step"):
                with gpuprof.scope("forward"):
                    loss = model(x).sum()
                    buffer = torch.empty(1 << 16, device="cuda")
                    buffer.zero_()  # a memset or fill kernel
                    buffer.copy_(torch.ones(1 << 16, device="cuda"))  # a device-to-device copy
                with gpuprof.scope("backward"):
                    loss.backward()
                torch.cuda.synchronize()
    assert capture.active, capture.why_inactive
    return capture


@pytest.mark.skipif(not gpuprof.with_cupti, reason="gpuprof built without CUPTI")
@pytest.mark.parametrize("launch_callbacks", [False, True])
def test_kernel_capture_charges_backward_kernels_to_the_backward_scope(launch_callbacks):
    capture = captured_train_steps(launch_callbacks=launch_callbacks)
    assert capture.uses_launch_callbacks is None  # left: nothing captures now
    report = capture.report
    assert report.dropped_kernel_records == 0
    forward, backward = report.kernels_in("forward"), report.kernels_in("backward")
    assert forward and backward
    assert all(k.kind == "kernel" for k in forward + backward)
    # Backward's kernels came from autograd threads: charged by launch time.
    assert len(backward) >= len(forward)
    assert report.kern_sum("step")[0].instances >= 3


@pytest.mark.skipif(not gpuprof.with_cupti, reason="gpuprof built without CUPTI")
def test_launch_callbacks_charge_every_scope_what_activity_records_do():
    def per_scope(capture):
        report = capture.report
        assert report.dropped_kernel_records == 0
        assert all(node >= 0 for node in report.kernel_nodes()), "a record in no scope"
        return {path: sorted(k.name for k in report.kernels_in(path, view="innermost", copies=True))
                for path in ("step", "step/forward", "step/backward")}

    records = per_scope(captured_train_steps())
    gpuprof.reset()
    callbacks = per_scope(captured_train_steps(launch_callbacks=True))
    assert records["step/forward"] and records["step/backward"]
    assert callbacks == records


@pytest.mark.skipif(not gpuprof.with_cupti, reason="gpuprof built without CUPTI")
def test_gpuprof_imported_before_torch_leaves_torch_working():
    # Its own process: the order in which the two load the CUDA runtime and CUPTI is the point.
    script = "import gpuprof, torch; x = torch.ones(4, device='cuda'); print(float((x @ x).item()))"
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip().splitlines()[-1] == "4.0"


@pytest.mark.skipif(not gpuprof.with_cupti, reason="gpuprof built without CUPTI")
@pytest.mark.parametrize("torch_first", [False, True])
def test_capture_and_torch_share_one_cupti_whichever_loads_first(torch_first):
    # Its own process: which of the two opens CUPTI first is the point.
    script = textwrap.dedent(f"""
        import json, os, sys
        if {torch_first}:
            import torch
        import gpuprof
        with gpuprof.KernelCapture() as capture:
            import torch
            with gpuprof.scope("matmul"):
                x = torch.ones(256, 256, device="cuda")
                (x @ x).sum().item()
        mapped = sorted({{os.path.realpath(l.split(None, 5)[5].strip()) for l in open("/proc/self/maps")
                         if "libcupti" in l and len(l.split(None, 5)) == 6}})
        print(json.dumps([os.path.realpath(gpuprof.load_cupti()), capture.active, capture.why_inactive,
                          len(capture.report.kernels_in("matmul")), mapped]))
        """)
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    loaded, active, why, kernels, mapped = json.loads(done.stdout.strip().splitlines()[-1])
    assert active, why
    assert kernels >= 1
    assert mapped == [loaded]


def test_kernel_capture_under_torch_profiler_says_so_and_loses_nothing(tmp_path):
    # Its own process: once torch.profiler has run, Kineto keeps CUPTI for the process's life.
    script = textwrap.dedent("""
        import json, sys, torch, gpuprof
        x = torch.randn(512, 512, device="cuda")
        with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CUDA]) as prof:
            with gpuprof.KernelCapture() as capture:
                with gpuprof.scope("inside"):
                    y = x @ x
                torch.cuda.synchronize()
        prof.export_chrome_trace(sys.argv[1])
        trace = json.load(open(sys.argv[1]))
        kernels = [e for e in trace["traceEvents"] if e.get("cat") == "kernel"]
        after = gpuprof.KernelCapture()
        with after:
            pass
        node = capture.report.node("inside")
        print(json.dumps({"active": capture.active, "why": capture.why_inactive,
                          "timed": node is not None and node.gpu_timed, "torch_kernels": len(kernels),
                          "after_active": after.active, "after_why": after.why_inactive}))
    """)
    done = subprocess.run([sys.executable, "-c", script, str(tmp_path / "trace.json")], capture_output=True,
                          text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout.strip().splitlines()[-1])
    assert not result["active"] and "torch.profiler" in result["why"]
    assert result["timed"]  # the scope kept its CUDA-event time
    assert result["torch_kernels"] >= 1  # torch.profiler kept its kernels
    # After torch.profiler, Kineto still holds CUPTI: the capture says so instead of crashing.
    assert result["after_active"] or "cupti" in result["after_why"].lower(), result["after_why"]


@pytest.mark.skipif(not gpuprof.with_cupti, reason="gpuprof built without CUPTI")
def test_kernel_capture_agrees_with_torch_profiler(tmp_path):
    out = tmp_path / "agreement.json"
    done = subprocess.run([sys.executable, os.path.join(EXAMPLES, "kineto_agreement.py"), "--size", "tiny",
                           "--ctx", "128", "--steps", "10", "--warmup", "3", "--out", str(out)],
                          capture_output=True, text=True, timeout=600)
    print(done.stdout[-6000:], done.stderr[-3000:])
    doc = json.loads(out.read_text())
    assert doc["kernels"], "no kernels compared"
    assert doc["agree"], doc["problems"]
    assert done.returncode == 0


def test_torch_memory_watch_agrees_with_max_memory_allocated():
    model = torch.nn.Sequential(torch.nn.Linear(1024, 4096), torch.nn.GELU(), torch.nn.Linear(4096, 1024)).cuda()
    optimizer = torch.optim.AdamW(model.parameters())
    x = torch.randn(512, 1024, device="cuda")

    def step(forward_scope):
        with forward_scope:
            loss = model(x).square().mean()
        loss.backward()
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)

    class Nothing:
        def __enter__(self):
            pass

        def __exit__(self, *exc):
            return False

    step(Nothing())  # optimizer state and cached blocks: later steps allocate the same
    torch.cuda.synchronize()
    # PyTorch's own peaks around the same code, no watch on.
    torch.cuda.reset_peak_memory_stats()
    with torch.no_grad():
        model(x)
    torch_forward = torch.cuda.max_memory_allocated()
    torch.cuda.reset_peak_memory_stats()
    step(Nothing())
    torch_step = torch.cuda.max_memory_allocated()
    torch.cuda.synchronize()

    gpuprof.reset()
    with gpuprof.TorchMemoryWatch() as watch:
        with gpuprof.scope("forward alone"), torch.no_grad():
            model(x)
        with gpuprof.scope("train step"):
            step(gpuprof.scope("forward"))
        reserved_now = torch.cuda.memory_reserved()
    assert watch.active, watch.why_inactive
    report = watch.report
    alone, train, forward = report.node("forward alone"), report.node("train step"), report.node("train step/forward")
    for measured, expected in ((alone.peak_allocated_bytes, torch_forward), (train.peak_allocated_bytes, torch_step)):
        assert abs(measured - expected) <= 0.01 * expected, (measured, expected)
    # A child's peak counts in its parent's; the forward with autograd keeps activations alone does not.
    assert 0 < forward.peak_allocated_bytes <= train.peak_allocated_bytes
    assert alone.peak_allocated_bytes <= forward.peak_allocated_bytes
    assert train.reserved_bytes == reserved_now >= train.peak_allocated_bytes
    # The allocator's snapshot of the live blocks after the step: what peak_allocated's baseline is made of.
    live = sum(block["size"] for segment in torch.cuda.memory._snapshot()["segments"]
               for block in segment["blocks"] if block["state"] == "active_allocated")
    allocated = torch.cuda.memory_allocated()
    assert abs(live - allocated) <= 0.01 * allocated and allocated <= train.peak_allocated_bytes
