#!/usr/bin/env bash
# round 3 (seventh session): A/B/C of the fused decode step in one call, B1/B16/B64:
# base = 817cd74, alt = one staging pass for a whole K split at one row (KC) + the state view fix,
# alt2 = alt with the GEMV prefetching 512 weight rows into L2 before its grid sync (128 before)
set -u
h=$(cd "$(dirname "$0")" && pwd)
r=/tmp/res3; mkdir -p $r
start=$(date +%s)
el() { echo "$1 after $(( $(date +%s) - start )) s" >> $r/progress.txt; }
dims=(-dims B=1,S=1,T=4096 -dims B=16,S=1,T=4096 -dims B=64,S=1,T=4096)
for v in base alt alt2 base alt alt2; do
  n=1; while [ -e $r/$v.$n.txt ]; do n=$((n+1)); done
  FUSER_KERNELS=$h/$v/kernels timeout 110 $h/$v/fuser bench llama3_8b "${dims[@]}" -kernels $h/$v/kernels -reps 30 -unfused=false -json-out $r/$v.$n.json > $r/$v.$n.txt 2>&1
  el $v.$n
  [ $(( $(date +%s) - start )) -gt 420 ] && break
done
grep -H "step:" $r/*.txt
tar czf $OUT/res3.tgz -C /tmp res3
