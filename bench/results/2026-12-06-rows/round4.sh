#!/usr/bin/env bash
# round4.sh (run on the device from the /work/main checkout's root, .gpu-var
# carried): round2's base and v2 builds (round2.sh) beside v4, in one call:
#   v4  v2 with the rounds of items taken in alternating directions (block
#       k takes the k-th item of an even round, the k-th from the end of
#       an odd one)
# v4's kernels are those of bench/specs/decode_attention.fu at B=1,S=16384
# / B=2,S=4096 / B=8,S=1024 (T=0). The attention twice, the variants taking
# turns. Everything under OUT is archived into OUT/round4.tgz.
set -u
v=.gpu-var
out=${OUT:?}
r=$(mktemp -d)/round4
mkdir -p "$r"
chmod +x $v/*/fuser
nvidia-smi >"$r/nvidia-smi.txt" 2>&1
A="-dims B=1,S=16384,T=0 -dims B=2,S=4096,T=0 -dims B=8,S=1024,T=0"
for round in 1 2; do
	for b in base v2 v4; do
		timeout -k 5 60 $v/$b/fuser bench bench/specs/decode_attention.fu $A -kernels $v/$b/kernels -reps 20 -unfused=false \
			-json-out "$r/$b.attn.$round.json" >"$r/$b.attn.$round.txt" 2>&1
		echo "$b attention round $round: exit $?" >>"$r/summary.txt"
		grep -E 'fused plan at|k01_' "$r/$b.attn.$round.txt" >>"$r/summary.txt"
	done
done
tar czf "$out/round4.tgz" -C "$(dirname "$r")" round4
cat "$r/summary.txt"
