#!/usr/bin/env bash
# eighth session, round 2: the wgmma tensor-core GEMV at 5997ea3. The fused Llama-3-8B decode step at
# B1/B16/B64 of this commit and of base (.gpu/base/REVISION) and the PyTorch anchors (eager + CUDA graph,
# torch.compile max-autotune-no-cudagraphs) in one call; then the full on-device suite (every case fused
# and unfused, generated and regression specs), the ladder, the decode determinism test, memcheck and
# racecheck (sanitizers over the tiny spec, the split-K GEMV and the f16 tensor-core GEMV cases).
set -u
h=$(cd "$(dirname "$0")" && pwd)
r=/tmp/res2; mkdir -p $r
start=$(date +%s)
el() { echo "$1 after $(( $(date +%s) - start )) s" >> $r/progress.txt; }
dims=(-dims B=1,S=1,T=4096 -dims B=16,S=1,T=4096 -dims B=64,S=1,T=4096)
timeout 90 $h/fuser bench llama3_8b "${dims[@]}" -kernels $h/kernels -reps 30 -unfused=false -json-out $r/fuser_bench.json > $r/fuser_bench.txt 2>&1
el "bench (exit $?)"
timeout 90 $h/base/fuser bench llama3_8b "${dims[@]}" -kernels $h/base/kernels -reps 30 -unfused=false -json-out $r/fuser_bench_base.json > $r/fuser_bench_base.txt 2>&1
el "bench_base (exit $?)"
cp $r/fuser_bench*.txt $r/progress.txt $OUT/ 2>/dev/null
timeout 150 env PYTHONUNBUFFERED=1 python3 $h/compare.py --ours $r/fuser_bench.json --out $r --batches 1,16,64 --compile-modes max-autotune-no-cudagraphs --shapes 1x4096 > $r/compare.log 2>&1
el "compare (exit $?)"
cp $r/compare.log $r/progress.txt $OUT/ 2>/dev/null
left=$(( 575 - ($(date +%s) - start) ))
SAN_CASES='^(tiny/small/|mat_res_bf16_4104x120/|mat_cast_bf16_1001x517/small/B=1,|mat_swiglu_f16_776x136/)' \
  SKIP_BENCH=1 SKIP_COMPARE=1 SKIP_NCU=1 STEP_TIMEOUT=300 timeout $left $h/run.sh $r/suite > $r/run_stdout.txt 2>&1
el "run.sh (exit $?)"
gzip -f $r/suite/suite.log $r/suite/suite_summary.json 2>/dev/null
tar czf $OUT/res2.tgz -C /tmp res2
