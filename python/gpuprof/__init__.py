"""gpuprof for Python: scopes, benchmarks, kernel capture and reports.

    import gpuprof
    with gpuprof.scope("forward"):          # or @gpuprof.scope("forward")
        model(x)
    print(gpuprof.report().table())

Everything is the C++ library (gpuprof._gpuprof, built from the same headers).
This file only adds what needs Python itself: the decorator's metadata and
the question whether torch.profiler is recording. torch is never imported
here; see docs/python.md.
"""

import ctypes
import functools
import importlib.util
import os
import sys


def _share_cuda_libraries_with_torch():
    """Load the CUDA runtime and CUPTI that PyTorch's wheels ship, if they are installed.

    Our extension needs libcudart.so.13 and libcupti.so.13, and whichever copy
    loads first serves the whole process. Loading the wheel's copies first
    (without importing torch) gives torch the ones it was built with, whether
    gpuprof or torch is imported first, as when torch comes first.
    """
    spec = importlib.util.find_spec("nvidia")
    for root in (spec.submodule_search_locations or []) if spec else []:
        for folder in ("cu13/lib", "cuda_runtime/lib", "cuda_cupti/lib"):
            for name in ("libcudart.so.13", "libcupti.so.13"):
                path = os.path.join(root, folder, name)
                if os.path.exists(path):
                    ctypes.CDLL(path, mode=ctypes.RTLD_GLOBAL)


_share_cuda_libraries_with_torch()

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
