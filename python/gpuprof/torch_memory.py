"""Peak memory per scope in PyTorch's terms: gpuprof.TorchMemoryWatch.

    with gpuprof.TorchMemoryWatch() as watch:
        train_step()
    node = watch.report.node("train_step")
    node.peak_allocated_bytes, node.reserved_bytes

At every scope boundary, and only while the watch is entered, the caching
allocator is asked (torch.cuda.max_memory_allocated, reset_peak_memory_stats,
memory_reserved). Its peak counter is one per device, so each scope's begin
resets it and every reading is folded into all open scopes: a child's peak
counts in its parents', and a child's reset never loses a parent's peak so far.
The cost: torch's own max_memory_allocated no longer covers the time before
the last scope began while the watch is on.
"""

import sys

from . import _gpuprof


class AllocatorPeaks:
    """The per-scope bookkeeping, given the allocator's functions (tests pass fakes).

    max_allocated() -> bytes: peak allocated since the last reset_peak().
    reserved() -> bytes: reserved now.
    """

    def __init__(self, max_allocated, reset_peak, reserved):
        self._max_allocated = max_allocated
        self._reset_peak = reset_peak
        self._reserved = reserved
        self._open = {}  # instance id -> peak so far; scopes of every thread: memory is shared
        self._finished = {}  # instance id -> (peak_allocated_bytes, reserved_bytes)

    def _fold(self):
        peak = int(self._max_allocated())
        for instance_id, so_far in self._open.items():
            self._open[instance_id] = max(so_far, peak)

    def begin(self, instance_id):
        self._fold()
        self._reset_peak()  # the counter now starts at the bytes allocated now
        self._open[instance_id] = int(self._max_allocated())

    def end(self, instance_id):
        self._fold()
        peak = self._open.pop(instance_id, None)
        if peak is not None:
            self._finished[instance_id] = (peak, int(self._reserved()))

    def finished(self):
        return dict(self._finished)

    def clear_finished(self):
        self._finished.clear()  # open scopes finish after the reset: they belong to the next report


def TorchMemoryWatch(device=None):  # noqa: N802 (a context manager, named like MemoryWatch)
    """Per-scope peak of PyTorch's allocated bytes and its reserved bytes.

    Sets ScopeNode.peak_allocated_bytes and reserved_bytes in watch.report.
    Off (with .why_inactive) when torch is not imported or CUDA is unavailable;
    scopes keep timing. device: a torch device or index, default the current one.
    """
    torch = sys.modules.get("torch")
    if torch is None:
        return _gpuprof._ScopeHooks(None, "torch is not imported")
    if not torch.cuda.is_available():
        return _gpuprof._ScopeHooks(None, "torch sees no CUDA device")
    cuda = torch.cuda
    tracker = AllocatorPeaks(lambda: cuda.max_memory_allocated(device),
                             lambda: cuda.reset_peak_memory_stats(device),
                             lambda: cuda.memory_reserved(device))
    return _gpuprof._ScopeHooks(tracker)
