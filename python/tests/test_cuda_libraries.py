"""Where the module's CUDA libraries come from: none at import, CUPTI on first use, searched in order."""
import json
import os
import subprocess
import sys

import pytest

import gpuprof
from gpuprof import _cupti_search

needs_cupti = pytest.mark.skipif(not gpuprof.with_cupti, reason="gpuprof built without CUPTI")
SONAME = getattr(gpuprof._gpuprof, "cupti_soname", "libcupti.so.13")


def python(code, **env):
    """Runs code in a fresh interpreter (this one, same sys.path) and returns what it printed as JSON."""
    environment = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in sys.path if p), **env)
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=environment,
                          timeout=120)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.splitlines()[-1]), done.stderr


# The libcupti and libcudart files mapped into the process, as a Python expression.
MAPPED = ("sorted({l.split(None, 5)[5].strip() for l in open('/proc/self/maps')"
          " if len(l.split(None, 5)) == 6 and ('libcupti' in l or 'libcudart' in l)})")


def test_import_loads_neither_the_cuda_runtime_nor_cupti():
    mapped, _ = python("import gpuprof, json; gpuprof.report(); print(json.dumps(" + MAPPED + "))")
    assert mapped == []


@needs_cupti
def test_a_missing_cupti_turns_capture_off_with_what_was_tried():
    code = ("import gpuprof, json\n"
            "try:\n    gpuprof.load_cupti(); error = ''\nexcept gpuprof.Error as e:\n    error = str(e)\n"
            "with gpuprof.scope('step'):\n    pass\n"
            "with gpuprof.KernelCapture() as capture:\n    pass\n"
            "print(json.dumps([error, capture.active, capture.why_inactive, capture.report is not None]))")
    (error, active, why, reported), stderr = python(code, GPUPROF_CUPTI_LIBRARY="/nonexistent/libcupti.so.13")
    assert f"no usable {SONAME}" in error and "/nonexistent/libcupti.so.13" in error
    assert not active and why == error and reported
    assert "kernel capture is off" in stderr


def test_search_order_loaded_then_override_then_loader_path_then_pip_then_cache_then_toolkit(tmp_path):
    def library(folder):
        folder.mkdir(parents=True)
        (folder / SONAME).write_bytes(b"")
        return str(folder / SONAME)

    on_loader_path = library(tmp_path / "ld")
    cu13_wheel = library(tmp_path / "site" / "nvidia" / f"cu{SONAME.rsplit('.', 1)[1]}" / "lib")
    cu12_style_wheel = library(tmp_path / "site2" / "nvidia" / "cuda_cupti" / "lib")
    toolkit = library(tmp_path / "cuda" / "extras" / "CUPTI" / "lib64")
    environ = {"LD_LIBRARY_PATH": str(tmp_path / "ld"), "CUDA_HOME": str(tmp_path / "cuda")}
    path = [str(tmp_path / "site"), str(tmp_path / "site2")]

    found = _cupti_search.candidates(SONAME, environ=environ, path=path, maps_text="")
    assert found[:5] == [on_loader_path, cu13_wheel, cu12_style_wheel, SONAME, toolkit]
    override = dict(environ, GPUPROF_CUPTI_LIBRARY="/opt/x/" + SONAME)
    assert _cupti_search.candidates(SONAME, environ=override, path=path, maps_text="") == ["/opt/x/" + SONAME]
    maps = f"7f00-7f10 r-xp 00000000 08:01 42 /torch/nvidia/lib/{SONAME}\n"
    assert _cupti_search.candidates(SONAME, environ=override, path=path, maps_text=maps) == [
        f"/torch/nvidia/lib/{SONAME}"]
    other = "7f00-7f10 r-xp 00000000 08:01 42 /torch/nvidia/cuda_cupti/lib/libcupti.so.11\n"
    with pytest.raises(RuntimeError, match="libcupti.so.11"):
        _cupti_search.candidates(SONAME, environ=environ, path=path, maps_text=other)


@needs_cupti
def test_a_cupti_in_a_pip_layout_wins_over_the_loaders_cache(tmp_path):
    try:
        real = _cupti_search.candidates(SONAME)
        real = next(c for c in real if os.path.isabs(c) and os.path.getsize(c) > 0)
    except StopIteration:
        pytest.skip(f"no {SONAME} file on this machine")
    wheel_dir = tmp_path / "nvidia" / f"cu{SONAME.rsplit('.', 1)[1]}" / "lib"
    wheel_dir.mkdir(parents=True)
    (wheel_dir / SONAME).symlink_to(os.path.realpath(real))
    code = "import gpuprof, json; loaded = gpuprof.load_cupti(); print(json.dumps([loaded, " + MAPPED + "]))"
    sys.path.insert(0, str(tmp_path))  # the fake site-packages, first on the child's PYTHONPATH
    try:
        (loaded, mapped), _ = python(code, LD_LIBRARY_PATH="")
    finally:
        sys.path.remove(str(tmp_path))
    assert loaded == str(wheel_dir / SONAME)
    assert mapped == [os.path.realpath(real)]
