#!/usr/bin/env bash
# round 4: the fused step at 5 batches, this tree against HEAD (base), then the unfused plan at B64 (the step that
# ran past its timeout in round 3), then where k03 at B64 spends its SM time
set -u
h=$(cd "$(dirname "$0")" && pwd)
r=/tmp/res; mkdir -p $r
start=$(date +%s)
el() { echo "$1 exit $2 after $(( $(date +%s) - start )) s" >> $r/progress.txt; }
export FUSER_KERNELS=$h/kernels
D="-dims B=1,S=1,T=4096 -dims B=4,S=1,T=4096 -dims B=8,S=1,T=4096 -dims B=16,S=1,T=4096 -dims B=64,S=1,T=4096"
timeout 75 $h/fuser bench llama3_8b $D -kernels $h/kernels -reps 30 -unfused=false -json-out $r/new.json > $r/new.txt 2>&1; el new $?
timeout 75 $h/base/fuser bench llama3_8b $D -kernels $h/base/kernels -reps 30 -unfused=false -json-out $r/base.json > $r/base.txt 2>&1; el base $?
timeout 40 ncu --clock-control none --metrics sm__cycles_active.min,sm__cycles_active.max,sm__cycles_active.avg,gpu__time_duration.sum \
  -k regex:'^k0[136]_gemm' -c 3 $h/fuser profile llama3_8b -dims B=64,S=1,T=4096 -kernels $h/kernels > $r/ncu_b64.txt 2>&1; el ncu $?
timeout 70 $h/fuser bench llama3_8b -dims B=64,S=1,T=4096 -kernels $h/kernels -reps 10 -json-out $r/unfused64.json > $r/unfused64.txt 2>&1; el unfused64 $?
tar czf $OUT/res.tgz -C /tmp res
