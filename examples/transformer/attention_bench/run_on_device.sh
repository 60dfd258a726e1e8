#!/usr/bin/env bash
# The fused attention work in one device call: build the kernels' test and
# benchmark, run the test (REPEAT=N repeats it until a failure), then time
# ours and PyTorch's SDPA at the same shapes and print them side by side.
#   OUT=dir [REPEAT=20] [CTX=512,1024,2048,4096] [SKIP_TORCH=1] [NCU=1] run_on_device.sh
# NCU=1 adds Nsight Compute's view of one forward and one backward launch
# (small model heads, ctx 4096).
# Logs and both JSON files land in $OUT.
set -uo pipefail
cd "$(dirname "$0")/../../.."
OUT=${OUT:-$PWD/out}
mkdir -p "$OUT"
BUILD=build/device
CTX=${CTX:-512,1024,2048,4096}
export PATH=/usr/local/cuda/bin:$PATH

echo "== $(date +%T) configure + build"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv,noheader
cmake --preset device >"$OUT/configure.log" 2>&1 || { tail -30 "$OUT/configure.log"; exit 1; }
cmake --build "$BUILD" -j16 --target transformer_flash_attention_tests attention_bench \
  >"$OUT/build.log" 2>&1 || { grep -B2 -A12 -m5 'error' "$OUT/build.log" | head -80; exit 1; }

echo "== $(date +%T) test"
repeat=()
[ -n "${REPEAT:-}" ] && repeat=(--repeat "until-fail:$REPEAT")
ctest --test-dir "$BUILD" -R '^transformer_flash_attention_tests$' -V \
  --timeout 300 "${repeat[@]}" >"$OUT/test.log" 2>&1
status=$?
# The worst error of each output over all shapes and repetitions (the full
# list is in test.log).
awk '/tolerance/ { m = match($0, / (rel err|rms) /); label = substr($0, 1, m - 1);
       metric = substr($0, m + 1, RLENGTH - 2); split(substr($0, m + RLENGTH), f, " ");
       n = split(label, words, " "); key = words[n] " " metric;
       if (!(key in worst) || f[1] + 0 > worst[key] + 0) { worst[key] = f[1]; at[key] = label } }
     END { for (k in worst) printf "  worst %-14s %s  (%s)\n", k, worst[k], at[k] }' "$OUT/test.log" | sort
grep -E 'tests passed|Failed|Passed|FAIL' "$OUT/test.log" | tail -8
[ $status -eq 0 ] || echo "TEST FAILED (status $status)"

echo "== $(date +%T) attention_bench"
"$BUILD"/examples/transformer/attention_bench/attention_bench --ctx "$CTX" --json "$OUT/ours.json" \
  >"$OUT/ours.txt" 2>&1 || { tail -20 "$OUT/ours.txt"; exit 1; }
if [ -z "${SKIP_TORCH:-}" ]; then
  echo "== $(date +%T) torch SDPA"
  python3 examples/transformer/scripts/torch_sdpa_bench.py --ctx "$CTX" --json "$OUT/torch.json" \
    --compare "$OUT/ours.json" >"$OUT/torch.txt" 2>&1 || tail -20 "$OUT/torch.txt"
  cat "$OUT/ours.txt"
  sed -n '/^TFLOP/,$p' "$OUT/torch.txt"
else
  cat "$OUT/ours.txt"
fi
if [ -n "${NCU:-}" ]; then
  NCU_BIN=$(command -v ncu || ls /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1)
  for kernel in forward backward; do
    echo "== $(date +%T) ncu flash_${kernel}_kernel"
    "$NCU_BIN" --kernel-name "regex:flash_${kernel}_kernel" --launch-count 1 \
      --section SpeedOfLight --section WarpStateStats --section ComputeWorkloadAnalysis \
      --section Occupancy --section MemoryWorkloadAnalysis \
      "$BUILD"/examples/transformer/attention_bench/attention_bench --ctx 4096 --reps 1 --warmup 1 \
      >"$OUT/ncu_${kernel}.txt" 2>&1
    grep -E "Throughput|Pipe|Stall|Warp Cycles|Issued|Achieved Occupancy|Registers|Bank|Duration|Shared" \
      "$OUT/ncu_${kernel}.txt" | head -40
  done
fi
echo "== $(date +%T) done"
