"""TorchMemoryWatch without a GPU: the nesting of per-scope allocator peaks, with a fake allocator."""
import json
import sys
import types

import pytest

import gpuprof
from gpuprof.torch_memory import AllocatorPeaks


class FakeAllocator:
    """torch.cuda's counters: bytes allocated now, the peak since the last reset, reserved."""

    def __init__(self):
        self.allocated = self.peak = 0
        self.reserved_bytes = 0
        self.resets = 0

    def alloc(self, size):
        self.allocated += size
        self.peak = max(self.peak, self.allocated)
        self.reserved_bytes = max(self.reserved_bytes, self.allocated)

    def free(self, size):
        self.allocated -= size

    def spike(self, size):
        """A temporary: allocated and freed again."""
        self.alloc(size)
        self.free(size)

    def max_allocated(self, device=None):
        return self.peak

    def reset_peak(self, device=None):
        self.peak = self.allocated
        self.resets += 1

    def reserved(self, device=None):
        return self.reserved_bytes


@pytest.fixture()
def fake():
    return FakeAllocator()


@pytest.fixture()
def peaks(fake):
    return AllocatorPeaks(fake.max_allocated, fake.reset_peak, fake.reserved)


def test_a_childs_reset_keeps_the_parents_earlier_peak(fake, peaks):
    peaks.begin(1)
    fake.spike(100)  # the parent's peak so far: 100, before the child resets the counter
    peaks.begin(2)
    fake.spike(30)
    peaks.end(2)
    peaks.end(1)
    assert peaks.finished() == {2: (30, 100), 1: (100, 100)}


def test_a_childs_peak_counts_in_its_parents(fake, peaks):
    fake.alloc(10)  # alive before the scopes: part of both peaks, as in max_memory_allocated
    peaks.begin(1)
    peaks.begin(2)
    fake.spike(200)
    peaks.end(2)
    fake.alloc(5)
    peaks.end(1)
    assert peaks.finished() == {2: (210, 210), 1: (210, 210)}


def test_siblings_and_a_peak_after_the_children(fake, peaks):
    peaks.begin(1)
    for child, size in ((2, 40), (3, 70)):
        peaks.begin(child)
        fake.spike(size)
        peaks.end(child)
    fake.spike(90)
    peaks.end(1)
    assert peaks.finished() == {2: (40, 40), 3: (70, 70), 1: (90, 90)}


def test_scopes_of_two_threads_ending_out_of_order(fake, peaks):
    peaks.begin(1)  # thread A
    peaks.begin(2)  # thread B: memory is shared, so both see every reading
    fake.alloc(50)
    peaks.end(1)
    fake.alloc(25)
    peaks.end(2)
    assert peaks.finished() == {1: (50, 50), 2: (75, 75)}


def test_clear_finished_keeps_open_scopes(fake, peaks):
    peaks.begin(1)
    peaks.begin(2)
    peaks.end(2)
    peaks.clear_finished()
    fake.alloc(8)
    peaks.end(1)
    assert peaks.finished() == {1: (8, 8)}


def test_watch_fills_the_report_and_its_writers(fake, monkeypatch):
    cuda = types.SimpleNamespace(is_available=lambda: True, max_memory_allocated=fake.max_allocated,
                                 reset_peak_memory_stats=fake.reset_peak, memory_reserved=fake.reserved)
    monkeypatch.setitem(sys.modules, "torch", types.SimpleNamespace(cuda=cuda))
    gpuprof.reset()
    with gpuprof.scope("before"):  # not watched: stays unknown
        fake.alloc(1)
    with gpuprof.TorchMemoryWatch() as watch:
        for _ in range(2):
            with gpuprof.scope("step"):
                fake.alloc(3 << 20)
                with gpuprof.scope("forward"):
                    fake.spike(1 << 20)
                fake.free(3 << 20)
    assert watch.active and not watch.why_inactive
    report = watch.report
    step, forward = report.node("step"), report.node("step/forward")
    assert (step.peak_allocated_bytes, forward.peak_allocated_bytes) == (1 + (4 << 20), 1 + (4 << 20))
    assert step.reserved_bytes == forward.reserved_bytes == 1 + (4 << 20)
    assert report.node("before").peak_allocated_bytes == -1 and report.node("before").reserved_bytes == -1
    nodes = {n["path"]: n for n in json.loads(report.json())["nodes"]}
    assert nodes["step"]["peak_allocated_bytes"] == 1 + (4 << 20)
    assert nodes["before"]["peak_allocated_bytes"] is None and nodes["before"]["reserved_bytes"] is None
    assert "Alloc peak MiB" in report.table() and "Reserved MiB" in report.table()
    # Off again after the watch: scopes cost nothing extra and fill nothing.
    resets = fake.resets
    gpuprof.reset()
    with gpuprof.scope("after"):
        fake.alloc(7)
    assert gpuprof.report().node("after").peak_allocated_bytes == -1 and fake.resets == resets
    gpuprof.reset()


def test_watch_is_off_without_torch_and_says_why(monkeypatch):
    monkeypatch.setitem(sys.modules, "torch", None)  # `import torch` would fail; the watch must not try
    gpuprof.reset()
    with gpuprof.TorchMemoryWatch() as watch:
        with gpuprof.scope("timed anyway"):
            pass
    assert not watch.active and watch.why_inactive == "torch is not imported"
    assert watch.report.node("timed anyway").count == 1
    assert watch.report.node("timed anyway").peak_allocated_bytes == -1
    gpuprof.reset()
