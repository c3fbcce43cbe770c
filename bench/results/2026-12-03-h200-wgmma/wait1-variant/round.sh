#!/usr/bin/env bash
# eighth session, round 3: the wgmma GEMV with one stage's wgmmas in flight while the next are issued
# (fz_wgmma_wait<1>, 7 stages; uncommitted tree on 5997ea3) against 5997ea3 (.gpu/base), the fused
# Llama-3-8B decode step at B16 and B64, once each; then the suite's matmul, Llama-3-8B and
# tiny cases (fused and unfused) and racecheck/memcheck over the split-K and f16 tensor-core GEMV cases.
set -u
h=$(cd "$(dirname "$0")" && pwd)
r=/tmp/res3; rm -rf $r; mkdir -p $r
start=$(date +%s)
el() { echo "$1 after $(( $(date +%s) - start )) s" >> $r/progress.txt; }
dims=(-dims B=16,S=1,T=4096 -dims B=64,S=1,T=4096)
for i in 1; do
  timeout 45 $h/base/fuser bench llama3_8b "${dims[@]}" -kernels $h/base/kernels -reps 30 -unfused=false -json-out $r/base.$i.json > $r/base.$i.txt 2>&1
  el "base.$i (exit $?)"
  timeout 45 $h/fuser bench llama3_8b "${dims[@]}" -kernels $h/kernels -reps 30 -unfused=false -json-out $r/alt.$i.json > $r/alt.$i.txt 2>&1
  el "alt.$i (exit $?)"
  cp $r/*.txt $OUT/
done
export FUSER_KERNELS=$h/kernels
timeout 60 $h/gpu.test -test.v -test.run '^TestSuite$' -kernels $h/kernels -cases '^(mat_|llama3_8b/|tiny/)' -summary $r/suite_summary.json > $r/suite.log 2>&1
el "suite (exit $?)"
san=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
for tool in racecheck memcheck; do
  timeout 30 $san --tool $tool --error-exitcode 9 --print-limit 200 $h/gpu.test -test.v -test.run '^TestSuite$' -kernels $h/kernels -cases '^(mat_res_bf16_4104x120/|mat_swiglu_f16_776x136/)' > $r/$tool.log 2>&1
  el "$tool (exit $?)"
done
gzip -f $r/suite.log
cp $r/progress.txt $OUT/
tar czf $OUT/res3.tgz -C /tmp res3
