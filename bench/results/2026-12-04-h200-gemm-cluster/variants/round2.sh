#!/usr/bin/env bash
# round2.sh: the clusters again with the other block's arrivals at block
# scope (v/cl/kernels), against the same kernels launched without clusters
# (v/rows/fuser); ncu over the clustered gate/up GEMM.
set -u
here=$(cd "$(dirname "$0")" && pwd)
out=${OUT:?}
p=$(mktemp -d)/prefill
mkdir -p "$p"
for f in "$here"/*.gz "$here"/v/*/*.gz; do [ -f "$f" ] && gunzip -f "$f"; done
chmod +x "$here"/fuser "$here"/ncu.sh "$here"/v/*/fuser
sum=$p/summary.txt
save() { tar czf "$out/prefill2.tgz" -C "$p/.." prefill; cp "$sum" "$out/prefill2_summary.txt"; }
bench() {
	local name=$1 bin=$2 kern=$3 start=$(date +%s)
	timeout -k 10 90 "$bin" bench llama3_8b -dims B=1,S=4096,T=0 -dims B=1,S=512,T=0 -kernels "$kern" \
		-reps 20 -unfused=false -json-out "$p/$name.json" >"$p/$name.txt" 2>&1
	echo "$name: exit $? after $(($(date +%s) - start)) s" >>"$sum"
	grep -E 'step:|k0[0-9]_' "$p/$name.txt" >>"$sum"
	save
}
bench cl.1 "$here/fuser" "$here/v/cl/kernels"
bench rows.1 "$here/v/rows/fuser" "$here/v/cl/kernels"
bench cl.2 "$here/fuser" "$here/v/cl/kernels"
rm -rf "$here/kernels" && cp -r "$here/v/cl/kernels" "$here/kernels"
NCU_TIMEOUT=50 "$here/ncu.sh" "$p/ncu" k05:'^k05_gemm':B=1,S=4096,T=0 >>"$sum" 2>&1
save
