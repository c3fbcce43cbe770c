#!/usr/bin/env bash
# round3.sh (run on the device from the /work/main checkout's root, .gpu-var
# carried): round2's base and v2 builds (round2.sh) beside v3, in one call:
#   v3  v2 with the items a kv head of a sequence after the other (its
#       query tiles longest first, its query heads side by side) instead
#       of every head's last tile first; and the row cache's kernels asking
#       for 5 blocks an SM instead of 4 (rowCacheBlocks = 5)
# v3's kernels are those of bench/specs/decode_attention.fu at B=1,S=16384
# / B=2,S=4096 / B=8,S=1024 (T=0) and of bench/specs/add_rmsnorm.fu at
# N=1024, 4096 and 8192. The attention twice and add_rmsnorm twice, the
# variants taking turns. Everything under OUT is archived into OUT/round3.tgz.
set -u
v=.gpu-var
out=${OUT:?}
r=$(mktemp -d)/round3
mkdir -p "$r"
chmod +x $v/*/fuser
nvidia-smi >"$r/nvidia-smi.txt" 2>&1
A="-dims B=1,S=16384,T=0 -dims B=2,S=4096,T=0 -dims B=8,S=1024,T=0"
for round in 1 2; do
	for b in base v2 v3; do
		timeout -k 5 60 $v/$b/fuser bench bench/specs/decode_attention.fu $A -kernels $v/$b/kernels -reps 20 -unfused=false \
			-json-out "$r/$b.attn.$round.json" >"$r/$b.attn.$round.txt" 2>&1
		echo "$b attention round $round: exit $?" >>"$r/summary.txt"
		grep -E 'fused plan at|k01_' "$r/$b.attn.$round.txt" >>"$r/summary.txt"
	done
	for b in v2 v3; do
		timeout -k 5 60 $v/$b/fuser bench bench/specs/add_rmsnorm.fu -dims N=1024 -dims N=4096 -dims N=8192 -kernels $v/$b/kernels \
			-reps 50 -unfused=false -json-out "$r/$b.add_rmsnorm.$round.json" >"$r/$b.add_rmsnorm.$round.txt" 2>&1
		echo "$b add_rmsnorm round $round: exit $?" >>"$r/summary.txt"
		grep -E 'fused plan at|k00_' "$r/$b.add_rmsnorm.$round.txt" >>"$r/summary.txt"
	done
done
tar czf "$out/round3.tgz" -C "$(dirname "$r")" round3
cat "$r/summary.txt"
