#!/usr/bin/env bash
# round 3: split-K GEMV whose splits share the tile's reduction: correctness (suite, ladder, determinism, sanitizers),
# the fused step at 5 batches against HEAD's (base) and against PyTorch eager + graph and max-autotune in the same call
set -u
h=$(cd "$(dirname "$0")" && pwd)
r=/tmp/res; mkdir -p $r
start=$(date +%s)
el() { echo "$1 after $(( $(date +%s) - start )) s" >> $r/progress.txt; }
SUITE_CASES='^(mat_|tiny/|llama3_8b/)' SAN_CASES='^(tiny/small/B=2|mat_res_bf16_4104x120/|mat_swiglu_f16_776x136/)' \
 SKIP_COMPARE=1 SKIP_NCU=1 BENCH_REPS=30 STEP_TIMEOUT=150 timeout 330 $h/run.sh $r > $r/run_stdout.txt 2>&1
el run.sh
export FUSER_KERNELS=$h/kernels
if [ -x $h/alt/fuser ]; then
  timeout 60 $h/alt/fuser bench llama3_8b -dims B=1,S=1,T=4096 -dims B=4,S=1,T=4096 -kernels $h/alt/kernels -reps 30 -unfused=false -json-out $r/alt.json > $r/alt.txt 2>&1
  el alt
fi
timeout 170 env PYTHONUNBUFFERED=1 python3 $h/compare.py --ours $r/fuser_bench.json --out $r --batches 1,16,64 --compile-modes max-autotune-no-cudagraphs --shapes 1x4096 > $r/compare.log 2>&1
el compare
tar czf $OUT/res.tgz -C /tmp res
