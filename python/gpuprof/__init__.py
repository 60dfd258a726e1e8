"""gpuprof for Python: scopes, benchmarks, kernel capture and reports.

    import gpuprof
    with gpuprof.scope("forward"):          # or @gpuprof.scope("forward")
        model(x)
    print(gpuprof.report().table())

Everything is the C++ library (gpuprof._gpuprof, built from the same headers).
This file only adds what needs Python itself: the decorator's metadata and the
question whether torch.profiler is recording. torch is never imported here
and never required; see docs/python.md.
"""

import functools
import sys

from ._gpuprof import *  # noqa: F401,F403
from ._gpuprof import __version__, scope  # noqa: F401


def _decorate(scope_object, fn):
    """@gpuprof.scope(name): fn runs inside a scope of its own on every call."""
    run = scope_object._run

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        return run(fn, args, kwargs)

    return wrapper


def _cupti_refusal():
    """Why KernelCapture must not start now, or "".

    torch.profiler (Kineto) records through CUPTI's activity API, which takes
    one client per process: starting a capture under it would take its buffers.
    Only asked when torch is already imported.
    """
    torch = sys.modules.get("torch")
    if torch is None:
        return ""
    try:
        recording = bool(torch.autograd._profiler_enabled())
    except (AttributeError, RuntimeError):
        return ""
    if not recording:
        return ""
    return ("torch.profiler is recording in this process and holds CUPTI (one client per process); "
            "capture before or after it, or use its kernel table")
