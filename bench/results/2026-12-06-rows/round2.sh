#!/usr/bin/env bash
# round2.sh (run on the device from the /work/main checkout's root, .gpu-var
# carried): the persistent prefill attention against the kernel before it,
# the Llama-3-8B prefill layer, the row kernels, and PyTorch beside them, in
# one call. .gpu-var holds three builds, each the fuser CLI (go build -tags
# cuda -ldflags='-s -w' ./cmd/fuser) and its kernels (go run -tags nvrtc
# ./gpu/cmd/gpukernels -suite=false -bench ...):
#   base  6e703b9: a block per (query tile, head, sequence)
#   v1    persistent: a block an SM taking the items longest first, its
#         producer running ahead into the next item (the query rows copied
#         at the start of each item)
#   v2    v1 with the next item's query rows copied under the last P·V and
#         the output's stores
# base and v2 with the kernels of bench/specs/decode_attention.fu at
# B=1,S=16384 / B=2,S=4096 / B=8,S=1024 (T=0) and llama3_8b at B=1,S=512 and
# 4096 (T=0); v2 also of bench/specs/add_rmsnorm.fu (N=1024, 4096, 8192)
# and swiglu.fu (N=1024, 8192); v1 of the attention shapes only.
# Attention twice, the variants taking turns; the layer once each; then
# bench/compare.py's prefill attention, layer, GEMM and row anchors beside
# v2's JSON. Everything under OUT is archived into OUT/round2.tgz.
set -u
v=.gpu-var
out=${OUT:?}
r=$(mktemp -d)/round2
mkdir -p "$r"
chmod +x $v/*/fuser
nvidia-smi >"$r/nvidia-smi.txt" 2>&1
A="-dims B=1,S=16384,T=0 -dims B=2,S=4096,T=0 -dims B=8,S=1024,T=0"
pack() { tar czf "$out/round2.tgz" -C "$(dirname "$r")" round2; }
for round in 1 2; do
	for b in base v1 v2; do
		timeout -k 5 60 $v/$b/fuser bench bench/specs/decode_attention.fu $A -kernels $v/$b/kernels -reps 20 -unfused=false \
			-json-out "$r/$b.attn.$round.json" >"$r/$b.attn.$round.txt" 2>&1
		echo "$b attention round $round: exit $?" >>"$r/summary.txt"
		grep -E 'fused plan at|k01_' "$r/$b.attn.$round.txt" >>"$r/summary.txt"
	done
done
for b in base v2; do
	timeout -k 5 90 $v/$b/fuser bench llama3_8b -dims B=1,S=512,T=0 -dims B=1,S=4096,T=0 -kernels $v/$b/kernels -reps 20 -unfused=false \
		-json-out "$r/$b.layer.json" >"$r/$b.layer.txt" 2>&1
	echo "$b layer: exit $?" >>"$r/summary.txt"
	grep -E 'fused plan at|k0[0-9]_|step:' "$r/$b.layer.txt" >>"$r/summary.txt"
done
for s in add_rmsnorm swiglu; do
	dims="-dims N=1024 -dims N=8192"
	[ $s = add_rmsnorm ] && dims="-dims N=1024 -dims N=4096 -dims N=8192"
	timeout -k 5 60 $v/v2/fuser bench bench/specs/$s.fu $dims -kernels $v/v2/kernels -reps 50 -unfused=false \
		-json-out "$r/v2.$s.json" >"$r/v2.$s.txt" 2>&1
	echo "v2 $s: exit $?" >>"$r/summary.txt"
	grep -E 'fused plan at|k00_' "$r/v2.$s.txt" >>"$r/summary.txt"
done
pack
# The attention rows of compare.py's table come from fuser bench's
# prefill_attention map, which the attention bench fills.
timeout -k 5 400 python3 bench/compare.py --prefill-only --compile-modes max-autotune-no-cudagraphs \
	--prefill-attention 1x16384,2x4096,8x1024 --prefill 4096,512 --rows 1024,4096,8192 \
	--ours "$r/v2.layer.json" --more "$r/v2.attn.2.json" --more "$r/v2.add_rmsnorm.json" --more "$r/v2.swiglu.json" \
	--out "$r/compare" >"$r/compare.log" 2>&1
echo "compare: exit $?" >>"$r/summary.txt"
sed -n '/^prefill attention/,$p' "$r/compare.log" >>"$r/summary.txt"
pack
cat "$r/summary.txt"
