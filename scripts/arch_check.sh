#!/usr/bin/env bash
# The architecture check (docs/gpus.md), for one call on an H100 machine of
# 16 cores, about 9 minutes:
#   (a) a build for 80-virtual: sm_80 PTX only, which the driver compiles for
#       the H100 at first use, so the code paths for cards before Hopper run
#       for real; the GPU tests there, then one training step dumped
#       (--dump) in fp32 and in bf16 with our fused attention, each compared
#       with the CPU backend's dump of the same step (scripts/compare_dumps.py);
#   (b) the default build (the architectures CMake picks for the GPU
#       present): transformer_bench's default sweep, the "after" numbers;
#   (c) the baseline tree BASELINE_DIR (a checkout of the commit before,
#       e.g. .baseline): the same sweep, the "before" numbers.
# The sweeps alternate before/after ROUNDS times (default 2) and each row
# keeps its fastest median; BENCH_ARGS replaces the default sweep's flags
# (e.g. "--precision bf16 --ctx 128,512" when time is short). Usage:
#   [ROUNDS=N] [BENCH_ARGS=...] scripts/arch_check.sh BASELINE_DIR [ptx80] [bench]
# Naming phases runs only those (default both): two calls on a warm machine
# split the work, the builds of the first kept under /tmp/arch_check.
# Writes $OUT/arch_check.json (the table, the tests' and dumps' verdicts) and
# $OUT/arch_check_logs.tgz; prints the before/after table last. Exit 1 when a
# test or a dump comparison failed, 2 on bad usage.
set -uo pipefail
cd "$(dirname "$0")/.."
if [ $# -lt 1 ] || [ ! -f "$1/CMakeLists.txt" ]; then
  echo "usage: scripts/arch_check.sh BASELINE_DIR [ptx80] [bench] (BASELINE_DIR: a source tree with a CMakeLists.txt)" >&2
  exit 2
fi
BASELINE=$(cd "$1" && pwd)
shift
phases=${*:-ptx80 bench}
for phase in $phases; do
  case $phase in ptx80|bench) ;; *) echo "arch_check: unknown phase '$phase' (ptx80, bench)" >&2; exit 2 ;; esac
done
want() { [[ " $phases " == *" $1 "* ]]; }
OUT=${OUT:-$PWD/out}
ROUNDS=${ROUNDS:-2}
read -r -a BENCH_ARGS <<<"${BENCH_ARGS:-}"
WORK=/tmp/arch_check
rm -rf "$WORK/logs" "$WORK/dumps" "$WORK"/bench-*.json "$WORK"/compare-*.json
mkdir -p "$WORK/logs" "$OUT"
JOBS=$(nproc)
# The PTX is compiled once per kernel and kept: every test program links the
# same kernels, and the default cache (256 MiB) could evict them mid-run.
export CUDA_CACHE_PATH="$WORK/jit-cache" CUDA_CACHE_MAXSIZE=4294967296 CUDA_CACHE_DISABLE=0
PTX=$WORK/ptx80 AFTER=$WORK/after BEFORE=$WORK/before
BENCH=examples/transformer/bench/transformer_bench
log() { echo "== $(date +%T) $*"; }
pack() { tar czf "$OUT/arch_check_logs.tgz" -C "$WORK" logs dumps 2>/dev/null; }
trap pack EXIT
failures=0
ctest_status=-1  # not run

nvidia-smi --query-gpu=name,compute_cap,driver_version --format=csv,noheader | tee "$WORK/logs/gpu.txt"

# configure DIR SOURCE [cmake args]: the device preset's build in DIR (the
# args on top), or show why not. A baseline tree from before that preset gets
# its settings spelled out.
configure() {
  local dir=$1 source=$2; shift 2
  local settings=(--preset device)
  grep -q '"name": "device"' "$source/CMakePresets.json" 2>/dev/null \
    || settings=(-G Ninja -DCMAKE_BUILD_TYPE=Release)
  cmake -S "$source" "${settings[@]}" -B "$dir" "$@" \
    >"$WORK/logs/$(basename "$dir")-configure.log" 2>&1 \
    || { tail -30 "$WORK/logs/$(basename "$dir")-configure.log"; return 1; }
  # The baseline tree may predate this line: its absence is no failure.
  grep 'CUDA architectures' "$WORK/logs/$(basename "$dir")-configure.log" || true
}
# build DIR TARGETS...: the three builds share the cores, so each gets them all.
build() {
  local dir=$1; shift
  cmake --build "$dir" -j"$JOBS" -t "$@" >"$WORK/logs/$(basename "$dir")-build.log" 2>&1 \
    || { grep -B2 -A12 -m5 'error' "$WORK/logs/$(basename "$dir")-build.log" | head -80; return 1; }
}

log "configure and build: $phases"
builds=()
if want ptx80; then
  configure "$PTX" . -DCMAKE_CUDA_ARCHITECTURES=80-virtual || exit 1
  build "$PTX" all & builds+=($!)
fi
if want bench; then
  configure "$AFTER" . || exit 1
  configure "$BEFORE" "$BASELINE" -DCMAKE_CUDA_ARCHITECTURES=90 -DGPUPROF_BUILD_TESTS=OFF || exit 1
  build "$AFTER" transformer_bench & builds+=($!)
  build "$BEFORE" transformer_bench & builds+=($!)
fi
for pid in "${builds[@]}"; do wait "$pid" || exit 1; done

# (a): the 80-virtual build's GPU tests and dump comparisons.
ptx80_checks() {
  # What the 80-virtual programs carry: PTX for compute_80 and no machine code.
  if command -v cuobjdump >/dev/null; then
    echo "80-virtual transformer_bench: $(cuobjdump --list-ptx "$PTX/$BENCH" | grep -o 'sm_[0-9]*' | sort -u | tr '\n' ' ')PTX," \
         "$(cuobjdump --list-elf "$PTX/$BENCH" | grep -c 'sm_') machine-code images"
  fi

  log "(a) GPU tests of the 80-virtual build (the first run of each program compiles the PTX)"
  ctest --test-dir "$PTX" -L gpu --output-on-failure --timeout 300 >"$WORK/logs/ptx80-ctest.log" 2>&1
  ctest_status=$?
  grep -E 'tests passed|\*\*\*Failed|Skipped|Not Run|Timeout' "$WORK/logs/ptx80-ctest.log" | tail -12
  [ $ctest_status -eq 0 ] || failures=$((failures + 1))

  log "(a) one training step dumped on the GPU (80-virtual) and on the CPU backend"
  mkdir -p "$WORK/dumps"
  dump() {  # dump NAME transformer_bench-flags...
    local name=$1; shift
    "$PTX/$BENCH" --size small --ctx 128 --batch 2 --mode step --steps 1 "$@" --dump "$WORK/dumps/$name" \
      >"$WORK/logs/dump-$name.log" 2>&1 || { tail -5 "$WORK/logs/dump-$name.log"; return 1; }
  }
  dump cpu --device cpu --precision fp32 &&
    dump gpu-fp32 --device cuda --precision fp32 --attention naive &&
    dump gpu-bf16-fused --device cuda --precision bf16 --attention fused || failures=$((failures + 1))
  compare() {  # compare NAME TOLERANCE
    echo "$1 against the CPU backend:"
    python3 scripts/compare_dumps.py "$WORK/dumps/$1" "$WORK/dumps/cpu" --tolerance "$2" \
      --json "$WORK/compare-$1.json" || failures=$((failures + 1))
  }
  # The GPU tests' model tolerances against a double reference (cuda/tests:
  # fp32 5e-5, bf16 3e-2), fp32's doubled here: the CPU reference is fp32 too.
  compare gpu-fp32 1e-4
  compare gpu-bf16-fused 3e-2
}

# (b)/(c): the sweeps, before and after.
bench_runs() {
  log "(b)/(c) transformer_bench ${BENCH_ARGS[*]:-(default sweep)}, before and after, $ROUNDS rounds alternating"
  for round in $(seq 1 "$ROUNDS"); do
    for side in before after; do
      dir=$BEFORE; [ $side = after ] && dir=$AFTER
      "$dir/$BENCH" "${BENCH_ARGS[@]}" --json "$WORK/bench-$side-$round.json" >"$WORK/logs/bench-$side-$round.txt" 2>&1 \
        || { tail -5 "$WORK/logs/bench-$side-$round.txt"; exit 1; }
    done
  done
  cp "$WORK"/bench-*.json "$WORK/logs/"
}

want ptx80 && ptx80_checks
want bench && bench_runs

python3 - "$WORK" "$ROUNDS" "$ctest_status" "$OUT/arch_check.json" <<'EOF'
import glob, json, os, sys
work, rounds, ctest_status, out = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
def key(row):
    return (row["size"], row["precision"], row.get("attention", ""), row["ctx"], row["mode"])
def sweep_rows(report):
    """transformer_bench's rows: the sweep's benchmark fields of a gpuprof.bench file, or the
    rows of a baseline tree from before that format."""
    if report.get("schema") == "gpuprof.bench":
        return [b["fields"] for b in report["benchmarks"] if b["fields"].get("study") == "sweep"]
    return [dict(row, device=report.get("device")) for row in report["rows"]]
best, device = {"before": {}, "after": {}}, {}
for side in best:
    for path in sorted(glob.glob(f"{work}/bench-{side}-*.json")):
        for row in sweep_rows(json.load(open(path))):
            device[side] = row.get("device")
            if row.get("status") == "ok":
                k = key(row)
                best[side][k] = min(best[side].get(k, float("inf")), row["median_ms"])
rows = []
for k in sorted(set(best["before"]) | set(best["after"]), key=lambda k: (k[1], k[4], k[3])):
    b, a = best["before"].get(k), best["after"].get(k)
    rows.append({"size": k[0], "precision": k[1], "attention": k[2], "ctx": k[3], "mode": k[4],
                 "before_ms": b, "after_ms": a, "after_over_before": a / b if a and b else None})
compares = {}
for path in glob.glob(f"{work}/compare-*.json"):
    compares[os.path.basename(path)[len("compare-"):-len(".json")]] = json.load(open(path))
result = {"device": device.get("after"), "rounds": rounds, "statistic": "fastest median_ms over the rounds",
          "ptx80_gpu_tests_passed": None if ctest_status < 0 else ctest_status == 0,
          "ptx80_dump_comparisons": compares, "bench": rows}
with open(out + ".tmp", "w") as f:
    json.dump(result, f, indent=1)
os.replace(out + ".tmp", out)
print(f"{'size':6} {'prec':5} {'attention':9} {'ctx':>5} {'mode':7} {'before ms':>10} {'after ms':>10} {'after/before':>12}")
for r in rows:
    fmt = lambda x: f"{x:10.3f}" if x is not None else f"{'-':>10}"
    ratio = f"{r['after_over_before']:12.3f}" if r["after_over_before"] else f"{'-':>12}"
    print(f"{r['size']:6} {r['precision']:5} {r['attention']:9} {r['ctx']:5d} {r['mode']:7} {fmt(r['before_ms'])} {fmt(r['after_ms'])} {ratio}")
EOF
log "done: $failures failed check(s)"
[ $failures -eq 0 ]
