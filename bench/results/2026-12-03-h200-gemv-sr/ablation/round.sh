#!/usr/bin/env bash
# round.sh (as run on the device, from .gpu-var/ of the checkout at ca18f82):
# the B64 phase ablation. For each variant under .gpu-var/v (fuser + kernels
# of one tree, built in that tree with go build -tags cuda -ldflags='-s -w'
# -o .gpu-var/v/NAME/fuser ./cmd/fuser, then gzip -9 on it, and go run -tags
# nvrtc ./gpu/cmd/gpukernels -out .gpu-var/v/NAME/kernels -bench
# 'llama3_8b:DIMS;...' -suite=false; gpu/ncu.sh, bench/ncu_stalls.py and a
# bench.env copied into .gpu-var), fuser bench of
# llama3_8b at that variant's dims; then ncu of base's k05 at B64
# (gpu/ncu.sh). Variants: base = ca18f82 (main), cand = cand.diff (the
# split write and the attention's L2 ask), wait1 = wait1.diff, noepi =
# noepi.diff (no tile epilogue), loop = loop.diff (no epilogue, no split
# write or join: the stage loop alone).
set -u
here=$(cd "$(dirname "$0")" && pwd)
out=${OUT:?}
r=$(mktemp -d)/round
mkdir -p "$r"
sum=$r/summary.txt
nvidia-smi --query-gpu=name,clocks.max.sm,clocks.max.mem --format=csv,noheader >"$sum"
save() { tar czf "$out/round.tgz" -C "$(dirname "$r")" round; cp "$sum" "$out/summary.txt"; }
bench() {
	local name=$1 tag=$2
	shift 2
	local dims=()
	for d in "$@"; do dims+=(-dims "$d"); done
	local start=$(date +%s)
	timeout -k 10 150 "$here/v/$name/fuser" bench llama3_8b "${dims[@]}" -kernels "$here/v/$name/kernels" \
		-reps 30 -unfused=false -json-out "$r/$name.$tag.json" >"$r/$name.$tag.txt" 2>&1
	echo "$name.$tag: exit $? after $(($(date +%s) - start)) s" >>"$sum"
	grep -E 'step:|k0[1356]_gemm' "$r/$name.$tag.txt" >>"$sum"
	save
}
for f in "$here"/v/*/fuser.gz; do gunzip -f "$f"; chmod +x "${f%.gz}"; done
B1=B=1,S=1,T=4096; B16=B=16,S=1,T=4096; B64=B=64,S=1,T=4096
bench base 1 $B1 $B16 $B64
bench cand 1 $B1 $B16 $B64
bench wait1 1 $B16 $B64
bench noepi 1 $B64
bench loop 1 $B64
bench base 2 $B64
bench wait1 2 $B64
cp "$here/ncu.sh" "$here/ncu_stalls.py" "$here/bench.env" "$here/v/base/"
NCU_TIMEOUT=100 "$here/v/base/ncu.sh" "$r/ncu" k05_b64:'^k05_gemm':$B64 >>"$sum" 2>&1
save
