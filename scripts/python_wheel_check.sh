#!/usr/bin/env bash
# The pip-installed module on the GPU machine (about 10 minutes on one H200):
# builds the wheel with the PyTorch environment's python3 (pip wheel
# --no-build-isolation: its setuptools and pybind11), installs it into a fresh
# venv that also sees that environment's packages, runs the Python GPU suite
# from the installed copy GPU_TEST_REPEAT times (default 10), then once more
# with the CUDA toolkit hidden: the loader pointed only at PyTorch's
# nvidia/*/lib folders, CUDA_HOME unset, an empty tmpfs over the toolkit where
# unshare is allowed, and any toolkit file mapped into the process a failure.
# Writes $OUT/python_wheel/: summary.txt (environment, where PyTorch's CUDA
# libraries are, each run's result) and wheel_test.log (everything).
#   bash scripts/python_wheel_check.sh
# Exit status: 0 when every run passed, 1 otherwise.
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-$PWD/out}
DEST="$OUT/python_wheel"
PY=$(command -v python3)
TOOLKIT=$(realpath "${CUDA_HOME:-/usr/local/cuda}")
mkdir -p "$DEST"
SUMMARY="$DEST/summary.txt"
LOG="$DEST/wheel_test.log"

{
  echo "python3: $PY"
  "$PY" - <<'PYTHON'
import glob, importlib, os, sys
print("python", sys.version.split()[0], "prefix", sys.prefix)
for name in ("torch", "setuptools", "wheel", "pybind11", "pytest"):
    try:
        module = importlib.import_module(name)
        print(f"{name} {getattr(module, '__version__', '?')}" + (f" cuda {module.version.cuda}" if name == "torch" else ""))
    except Exception as error:  # noqa: BLE001 - report whatever stops the import
        print(f"{name}: not importable ({error})")
print("PyTorch's CUDA libraries (nvidia/*/lib on sys.path):")
for entry in sys.path:
    for lib in sorted(glob.glob(os.path.join(entry or ".", "nvidia", "*", "lib", "lib*.so*"))):
        if any(n in os.path.basename(lib) for n in ("cudart", "cupti")):
            print("  " + lib)
PYTHON
  echo "toolkit: $TOOLKIT ($("$TOOLKIT/bin/nvcc" --version 2>&1 | tail -1))"
  nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>&1
} >"$SUMMARY"

GPUPROF_REQUIRE_GPU=1 "$PY" python/tests/wheel_test.py --source . --work build/python-wheel-gpu \
  --no-build-venv --site-from-here --markers gpu --repeat "${GPU_TEST_REPEAT:-10}" --hide-toolkit "$TOOLKIT" \
  >"$LOG" 2>&1
status=$?
grep -E "^(== |installed:|wheel_test|CUDA libraries in this process|files mapped from|[0-9]+ (passed|failed)|FAILED|ERROR)" \
  "$LOG" >>"$SUMMARY"
echo "exit $status" >>"$SUMMARY"
cat "$SUMMARY"
exit $((status != 0))
