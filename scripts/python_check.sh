#!/usr/bin/env bash
# The Python module on the GPU machine, in one call (about 5 minutes on one
# H100): builds gpuprof._gpuprof for the PyTorch environment's python3 and
# pip's pybind11, which CMake finds itself (build/python-gpu), runs the host
# and GPU pytest suites, the overhead benchmark, the four examples/python
# scripts at small sizes, the agreement with torch.profiler and kernel
# capture's overhead on the small model, and writes $OUT/python/:
#   summary.txt (every step's exit status and tables)  logs.txt (full output)
#   overhead.json end_to_end.json nsys_questions.json mixed_precision.json
#   peak_memory.json kineto_agreement.json capture_overhead.json
#   bash scripts/python_check.sh [step ...]   # GPU_TEST_REPEAT=20: the GPU suite 20 times
# Steps (default all, in this order): host gpu overhead end_to_end nsys
# mixed_precision peak_memory agreement capture_overhead; the module is always
# built first.
# Exit status: 0 when every step passed, 1 otherwise.
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-$PWD/out}
DEST="$OUT/python"
BUILD=build/python-gpu
PY=$(command -v python3)
mkdir -p "$DEST"
SUMMARY="$DEST/summary.txt"
LOG="$DEST/logs.txt"
: >"$SUMMARY"
: >"$LOG"
failed=0
steps=" ${*:-host gpu overhead end_to_end nsys mixed_precision peak_memory agreement capture_overhead} "
want() { [[ "$steps" == *" $1 "* ]]; }
say() { echo "$*" | tee -a "$SUMMARY"; }
# step NAME COMMAND...: output to the log, the tail to the summary, status noted.
step() {
  local name=$1
  shift
  say "== $(date +%T) $name"
  echo "== $name: $*" >>"$LOG"
  local started=$SECONDS
  "$@" >"$DEST/.step.log" 2>&1
  local status=$?
  cat "$DEST/.step.log" >>"$LOG"
  tail -n "${TAIL:-40}" "$DEST/.step.log" >>"$SUMMARY"
  say "-- $name: exit $status ($((SECONDS - started)) s)"
  [ "$status" -eq 0 ] || failed=1
  return "$status"
}

say "python3: $PY ($("$PY" -c 'import sys, torch; print(sys.version.split()[0], "torch", torch.__version__, "cuda", torch.version.cuda)' 2>&1))"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader >>"$SUMMARY" 2>&1
"$PY" -c "import pytest" 2>/dev/null || say "WARNING: no pytest for $PY: the pytest steps will report skipped"

TAIL=15 step "configure + build" bash -c "
  cmake --preset device -B $BUILD -DGPUPROF_BUILD_PYTHON=ON \
    -DGPUPROF_BUILD_TESTS=OFF -DGPUPROF_BUILD_EXAMPLES=OFF -DGPUPROF_BUILD_BENCH=OFF -DGPUPROF_BUILD_TOOLS=OFF \
    -DPython_EXECUTABLE=$PY \
  && cmake --build $BUILD -t gpuprof_python -j ${JOBS:-16}" || { cat "$SUMMARY"; exit 1; }
export PYTHONPATH=$PWD/$BUILD/python${PYTHONPATH:+:$PYTHONPATH}
export PYTHONDONTWRITEBYTECODE=1
PYTEST=("$PY" python/tests/run_pytest.py -q -p no:cacheprovider -rs)

want host && TAIL=10 step "pytest: host suite" "${PYTEST[@]}" -m "not gpu" python/tests
if want gpu; then
  for i in $(seq 1 "${GPU_TEST_REPEAT:-1}"); do
    TAIL=25 step "pytest: GPU suite (run $i)" "${PYTEST[@]}" -m gpu python/tests
  done
fi
want overhead && step "overhead benchmark" "$PY" python/bench/overhead.py --iters 20000 --reps 15 "$DEST/overhead.json"
cd examples/python || exit 1
want end_to_end && step "end-to-end benchmark" "$PY" end_to_end.py --sizes tiny,small --ctx 128,256 --warmup 3 --steps 10 \
  --out "$DEST/end_to_end.json"
want nsys && TAIL=60 step "nsys questions (a)-(e)" "$PY" nsys_questions.py --size small --ctx 256 --warmup 2 --steps 5 \
  --out "$DEST/nsys_questions.json"
want mixed_precision && step "mixed precision" "$PY" mixed_precision.py --size small --ctx 256 --warmup 3 --steps 10 \
  --out "$DEST/mixed_precision.json"
want peak_memory && step "peak memory per scope" "$PY" peak_memory.py --sizes small --ctx 128,256 --warmup 2 --steps 3 \
  --out "$DEST/peak_memory.json"
want agreement && TAIL=70 step "agreement with torch.profiler" "$PY" kineto_agreement.py --size small --ctx 128 --warmup 3 \
  --steps 20 --out "$DEST/kineto_agreement.json"
want capture_overhead && TAIL=20 step "kernel capture overhead" "$PY" capture_overhead.py --size small --ctx 128 \
  --warmup 3 --steps 20 --rounds 3 --out "$DEST/capture_overhead.json"
rm -f "$DEST/.step.log"
say "== $(date +%T) done: $([ $failed -eq 0 ] && echo 'every step passed' || echo 'SOME STEPS FAILED')"
exit $failed
