#!/usr/bin/env bash
# round 1: correctness of the mat/tiny cases, sanitizers, bench at 5 dims, serial, base, ncu of the GEMVs at B16
set -u
h=$(cd "$(dirname "$0")" && pwd)
r=/tmp/res; mkdir -p $r
start=$(date +%s)
SUITE_CASES='^(mat_|tiny/small/)' SAN_CASES='^(tiny/small/B=2|mat_res_bf16_4104x120/|mat_swiglu_f16_776x136/)' \
 SKIP_LADDER=1 SKIP_COMPARE=1 SKIP_NCU=1 BENCH_REPS=30 STEP_TIMEOUT=170 timeout 430 $h/run.sh $r > $r/run_stdout.txt 2>&1
echo "run.sh done after $(( $(date +%s) - start )) s" >> $r/run_stdout.txt
export FUSER_KERNELS=$h/kernels
timeout 90 ncu --clock-control none --section SpeedOfLight --section WarpStateStats --section MemoryWorkloadAnalysis \
  -k regex:'k0[1368]_gemm' -c 4 $h/fuser profile llama3_8b -dims B=16,S=1,T=4096 -kernels $h/kernels > $r/ncu_b16.txt 2>&1
echo "ncu done after $(( $(date +%s) - start )) s" >> $r/run_stdout.txt
tar czf $OUT/res.tgz -C /tmp res
