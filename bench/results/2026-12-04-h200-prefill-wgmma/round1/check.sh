#!/usr/bin/env bash
# check.sh (round 1's second call, same .gpu-var as ../round1.sh): the
# suite's prefill attention and Llama prefill cases, and ncu of the
# cp.async-fed wgmma prefill attention in the Llama-3-8B prefill layer
# (B=1, S=4096), archived into OUT/r1b.tgz (check/ here).
set -u
here=$(cd "$(dirname "$0")" && pwd)
r=$(mktemp -d)/r1b; mkdir -p "$r"
for f in "$here"/*.gz; do [ -f "$f" ] && gunzip -f "$f"; done
chmod +x "$here"/fuser "$here"/gpu.test "$here"/*.sh
export FUSER_KERNELS=$here/kernels
timeout -k 10 150 "$here/gpu.test" -test.v -test.run '^TestSuite$' -kernels "$here/kernels" \
	-cases '^(dec_[a-z0-9]+/small/B=[0-9]+,(L=[0-9]+,)?S=[0-9]{3,}|llama3_8b/small/B=[0-9]+,S=[0-9]{2,})' -summary "$r/suite_summary.json" >"$r/suite.log" 2>&1
echo "suite: exit $?" >"$r/summary.txt"
timeout -k 10 200 "$here/ncu.sh" "$r/ncu" att:'^k02_attention':B=1,S=4096,T=0 >"$r/ncu.log" 2>&1
echo "ncu: exit $?" >>"$r/summary.txt"
tar czf "$OUT/r1b.tgz" -C "$(dirname "$r")" r1b
