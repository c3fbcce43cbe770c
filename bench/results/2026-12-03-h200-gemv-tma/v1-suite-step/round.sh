#!/usr/bin/env bash
# ninth session, round 2: the wgmma GEMV fed by the tensor copy engine through mbarriers (uncommitted tree
# on 6fff288) -- the suite's matmul, Llama-3-8B and tiny cases fused and unfused, racecheck and memcheck
# over two tensor-core GEMV cases, then the fused Llama-3-8B decode step at B1/B16/B64 against 6fff288
# (.gpu/base) and the new tree's timeline
set -u
h=$(cd "$(dirname "$0")" && pwd)
r=/tmp/res2; rm -rf $r; mkdir -p $r
start=$(date +%s)
el() { echo "$1 after $(( $(date +%s) - start )) s" >> $r/progress.txt; cp $r/progress.txt $OUT/; }
. $h/bench.env
export FUSER_KERNELS=$h/kernels
dims=(); for d in $BENCH_DIMS; do dims+=(-dims "$d"); done
timeout 150 $h/gpu.test -test.v -test.run '^TestSuite$' -kernels $h/kernels -cases '^(mat_|llama3_8b/|tiny/)' -summary $r/suite_summary.json > $r/suite.log 2>&1
el "suite exit $?"
grep -E '^(--- FAIL|FAIL|ok|PASS)|summary' $r/suite.log | head -20 >> $r/progress.txt
san=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
for tool in racecheck memcheck; do
  timeout 40 $san --tool $tool --error-exitcode 9 --print-limit 50 $h/gpu.test -test.v -test.run '^TestSuite$' -kernels $h/kernels -cases '^(mat_res_bf16_4104x120/|mat_swiglu_f16_776x136/)' > $r/$tool.log 2>&1
  el "$tool exit $?"
  grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' $r/$tool.log >> $r/progress.txt
done
timeout 100 $h/fuser bench llama3_8b "${dims[@]}" -kernels $h/kernels -reps 30 -unfused=false -json-out $r/new.json > $r/new.txt 2>&1
el "new exit $?"
grep step: $r/new.txt >> $r/progress.txt
timeout 100 $h/base/fuser bench llama3_8b "${dims[@]}" -kernels $h/base/kernels -reps 30 -unfused=false -json-out $r/base.json > $r/base.txt 2>&1
el "base exit $?"
grep step: $r/base.txt >> $r/progress.txt
tar czf $OUT/res2.tgz -C /tmp res2
timeout 100 $h/fuser bench llama3_8b "${dims[@]}" -kernels $h/kernels -reps 30 -unfused=false -timeline -json-out $r/timeline.json > $r/timeline.txt 2>&1
el "timeline exit $?"
gzip -f $r/suite.log
tar czf $OUT/res2.tgz -C /tmp res2
