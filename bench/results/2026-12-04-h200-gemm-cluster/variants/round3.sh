#!/usr/bin/env bash
# round3.sh: each variant's fuser with the kernels built from its own tree:
# cl (clusters, the other block's arrivals at block scope), rows (the same
# kernels without clusters), nocn (clustered launch, the kernel ignoring
# its cluster), nomc (clustered, every block copying its whole stage but
# keeping the cross-block waits); ncu over cl's and rows' gate/up GEMM.
set -u
here=$(cd "$(dirname "$0")" && pwd)
out=${OUT:?}
p=$(mktemp -d)/prefill
mkdir -p "$p"
for f in "$here"/*.gz "$here"/v/*/*.gz; do [ -f "$f" ] && gunzip -f "$f"; done
chmod +x "$here"/ncu.sh "$here"/v/*/fuser
sum=$p/summary.txt
save() { tar czf "$out/prefill3.tgz" -C "$p/.." prefill; cp "$sum" "$out/prefill3_summary.txt"; }
bench() {
	local name=$1 v=$2 start=$(date +%s)
	timeout -k 10 90 "$here/v/$v/fuser" bench llama3_8b -dims B=1,S=4096,T=0 -dims B=1,S=512,T=0 -kernels "$here/v/${3:-$v}/kernels" \
		-reps 20 -unfused=false -json-out "$p/$name.json" >"$p/$name.txt" 2>&1
	echo "$name: exit $? after $(($(date +%s) - start)) s" >>"$sum"
	grep -E 'step:|k0[0-9]_|image' "$p/$name.txt" >>"$sum"
	save
}
bench cl.1 cl
bench rows.1 rows cl
bench nocn.1 nocn
bench nomc.1 nomc
bench cl.2 cl
for v in cl rows; do
	rm -rf "$here/kernels" && cp -r "$here/v/$([ $v = rows ] && echo cl || echo $v)/kernels" "$here/kernels" && cp "$here/v/$v/fuser" "$here/fuser"
	NCU_TIMEOUT=60 "$here/ncu.sh" "$p/ncu_$v" k05:'^k05_gemm':B=1,S=512,T=0 >>"$sum" 2>&1
	save
done
