"""gpuprof for Python: scopes, benchmarks, kernel capture and reports.

    import gpuprof
    with gpuprof.scope("forward"):          # or @gpuprof.scope("forward")
        model(x)
    print(gpuprof.report().table())

Everything is the C++ library (gpuprof._gpuprof, built from the same headers).
This file only adds what needs Python itself: the decorator's metadata, the
question whether torch.profiler is recording, and the import order below.
torch is never required; see docs/python.md.
"""

import functools
import importlib.util
import sys

# With our extension loaded first, a later `import torch` (2.11, cu130 wheels)
# crashed with SIGSEGV inside torch's own import; with torch first, both work.
# The cause is not found yet (not the CUDA runtime or CUPTI copies, not a
# plain pybind11 module: docs/experiments/2026-11-27-python-import-order.md),
# so where torch is installed it is imported first. Without torch nothing
# changes, and torch is never required.
if "torch" not in sys.modules and importlib.util.find_spec("torch") is not None:
    import torch  # noqa: F401

from ._gpuprof import *  # noqa: F401,F403,E402
from ._gpuprof import __version__, scope  # noqa: F401,E402


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
