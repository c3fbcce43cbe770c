#!/usr/bin/env bash
# round.sh (on the device from the repository root, .gpu carried): the
# small layer of issue #17's targets, GPT-2 small (specs/gpt2.fu: D 768,
# 12 heads of 64, f16) at decode B1 and B16 over 1024 cached tokens, ours
# and PyTorch's in one call: fuser bench's fused step (eager and graph
# replay, kernel by kernel, with the timeline), then bench/compare.py's
# GPT2Small block eagerly and as a CUDA graph (--small), beside the copy
# ceiling of the same call. .gpu: fuser (tag cuda) and the bench kernels
# (go run -tags nvrtc ./gpu/cmd/gpukernels -out .gpu/kernels -suite=false
# -bench "...;gpt2:B=1,S=1,T=1024;gpt2:B=16,S=1,T=1024;"), compare.py;
# executables gzipped. OUT/small.tgz.
set -u
here=$(pwd)/.gpu
out=${OUT:?}
r=$(mktemp -d)/small
mkdir -p "$r"
for f in "$here"/*.gz; do [ -f "$f" ] && gunzip -f "$f"; done
chmod +x "$here/fuser"
timeout -k 5 120 "$here/fuser" bench gpt2 -dims B=1,S=1,T=1024 -dims B=16,S=1,T=1024 -kernels "$here/kernels" \
	-reps 100 -unfused=false -timeline -json-out "$r/ours.json" >"$r/fuser_bench.txt" 2>&1
echo "fuser bench: exit $?" >"$r/summary.txt"
grep -E "fused plan|step:|span" "$r/fuser_bench.txt" >>"$r/summary.txt"
timeout -k 5 240 python3 "$here/compare.py" --prefill-only --compile-modes "" --small 1x1024,16x1024 \
	--ours "$r/ours.json" --out "$r" >"$r/compare.log" 2>&1
echo "compare.py: exit $?" >>"$r/summary.txt"
sed -n '/GPT-2 small decode step/,$p' "$r/compare.log" >>"$r/summary.txt"
cat "$r/summary.txt"
tar czf "$out/small.tgz" -C "$(dirname "$r")" small
