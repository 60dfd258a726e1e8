#!/usr/bin/env bash
# transformer_ddp --gpus 4096 on a machine with fewer GPUs: exit status 2 and
# a message that names the flag and the GPUs visible. Skipped (77) only
# where gpuprof_gpu_probe says no GPU can exist.
# usage: too_many_gpus.sh GPUPROF_GPU_PROBE TRANSFORMER_DDP
probe=$1 ddp=$2
"$probe" || exit $?
output=$("$ddp" --gpus 4096 2>&1)
status=$?
echo "$output"
if [ "$status" -ne 2 ]; then
  echo "FAILED: exit status $status, want 2"
  exit 1
fi
if ! grep -Eq -- '--gpus 4096: only [0-9]+ GPU\(s\) visible' <<<"$output"; then
  echo "FAILED: no '--gpus 4096: only N GPU(s) visible' in the output"
  exit 1
fi
