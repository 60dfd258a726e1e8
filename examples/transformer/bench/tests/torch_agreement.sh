#!/usr/bin/env bash
# The whole model against an implementation we did not write: one training
# step of `transformer_bench --dump` (tiny, ctx 128) in fp32 and bf16, checked
# by `torch_reference.py --check-dump` against PyTorch in float64: loss,
# logits, every gradient and the parameters after the AdamW step, within the
# tolerances that script states (docs/transformer-dump.md).
#
# usage: torch_agreement.sh cuda GPUPROF_GPU_PROBE TRANSFORMER_BENCH TORCH_REFERENCE_PY WORK_DIR
#        torch_agreement.sh cpu  -                 TRANSFORMER_BENCH TORCH_REFERENCE_PY WORK_DIR
# Exit 77 (skipped) where python3 (or $PYTHON) has no PyTorch or NumPy, and,
# for cuda, where gpuprof_gpu_probe says no GPU can exist; 1 when a check fails.
set -u
device=$1 probe=$2 bench=$3 script=$4 work=$5
python=${PYTHON:-python3}
if [ "$device" = cuda ]; then
  "$probe" || exit $?
fi
if ! "$python" -c 'import numpy, torch' 2>/dev/null; then
  echo "SKIPPED: $python has no PyTorch or NumPy ($python -c 'import numpy, torch' fails)"
  exit 77
fi
rm -rf "$work" && mkdir -p "$work" || exit 1
status=0
check() {  # name, then transformer_bench's precision/attention flags
  local name=$1
  shift
  echo "== $device $*"
  if ! "$bench" --device "$device" --size tiny --ctx 128 --mode step --steps 1 "$@" \
      --dump "$work/$name" >"$work/$name.log" 2>&1; then
    echo "FAILED: transformer_bench --device $device $* --dump exited non-zero:"
    cat "$work/$name.log"
    status=1
    return
  fi
  "$python" "$script" --check-dump "$work/$name" || status=1
}
check fp32 --precision fp32
if [ "$device" = cuda ]; then
  check bf16 --precision bf16                       # the default attention (cuDNN where built)
  check bf16-naive --precision bf16 --attention naive
fi
exit "$status"
