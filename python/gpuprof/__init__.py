"""gpuprof for Python: scopes, benchmarks, kernel capture and reports.

    import gpuprof
    with gpuprof.scope("forward"):          # or @gpuprof.scope("forward")
        model(x)
    print(gpuprof.report().table())

Everything is the C++ library (gpuprof._gpuprof, built from the same headers).
This file only adds what needs Python itself: the decorator's metadata, where
libcupti is (_cupti_search.py) and the question whether torch.profiler is recording. torch is never imported here
and never required; see docs/python.md.
"""

import functools
import sys

from . import _cupti_search, _gpuprof
from ._gpuprof import *  # noqa: F401,F403
from ._gpuprof import Error, __version__, scope  # noqa: F401
from .torch_memory import TorchMemoryWatch  # noqa: F401


def load_cupti():
    """The libcupti file kernel capture uses, opened on the first call.

    Raises gpuprof.Error saying what was tried when there is none; importing
    gpuprof never needs CUPTI. The search order is in _cupti_search.py.
    """
    if not _gpuprof.with_cupti:
        raise Error("this gpuprof module was built without CUPTI (the CUDA toolkit was not found)")
    try:
        candidates = _cupti_search.candidates(_gpuprof.cupti_soname)
    except RuntimeError as error:
        raise Error(str(error)) from None
    return _gpuprof._load_cupti(candidates)


def _decorate(scope_object, fn):
    """@gpuprof.scope(name): fn runs inside a scope of its own on every call."""
    run = scope_object._run

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        return run(fn, args, kwargs)

    return wrapper


def _cupti_refusal():
    """Why KernelCapture must not start now, or "": no CUPTI to load, or another client.

    torch.profiler (Kineto) records through CUPTI's activity API, which takes
    one client per process: starting a capture under it would take its buffers.
    torch is asked only when it is already imported.
    """
    torch = sys.modules.get("torch")
    try:
        recording = torch is not None and bool(torch.autograd._profiler_enabled())
    except (AttributeError, RuntimeError):
        recording = False
    if recording:
        return ("torch.profiler is recording in this process and holds CUPTI (one client per process); "
                "capture before or after it, or use its kernel table")
    try:
        load_cupti()
    except Error as error:
        return str(error)
    return ""
