#!/usr/bin/env bash
# round.sh (run on the device from .gpu/ of the /work/main checkout, .gpu
# carried): the on-device suite at the commit this directory was committed
# with, then its prefill attention and Llama-3-8B prefill layer beside
# PyTorch's attention, in one call. .gpu is that tree's make gpu-bundle
# GEN_SPECS=32 BENCH_SPEC=llama3_8b BENCH_DIMS="B=1,S=512,T=0 B=1,S=4096,T=0"
# with the kernels of bench/specs/decode_attention.fu at B=1,S=16384,T=0,
# B=2,S=4096,T=0 and B=8,S=1024,T=0 added (go run -tags nvrtc
# ./gpu/cmd/gpukernels -out .gpu/kernels -suite=false -bench ...) and
# bench/specs copied to .gpu/specs, executables gzipped, .gpu/layerstep
# left out. First gpu/run.sh without its bench, compare, ncu and ladder
# steps: runtime tests, every suite case fused and unfused with the
# regression and 32 generated specs, the determinism test, memcheck and
# racecheck over SAN_CASES (the tiny spec, a prefill attention case through
# the copy engine and a paged one through the producer's cp.async); its
# RESULTS_DIR archived into OUT/full.tgz every 20 s and at the end. Then
# fuser bench of the attention shapes and of the layer at 512 and 4096
# tokens into OUT/prefill, and, with 100 s or more left, bench/compare.py's
# prefill attention anchors (SDPA flash, cuDNN) beside that bench into
# OUT/compare.tgz. LIMIT bounds the whole call and SUITE_TIMEOUT each
# step of run.sh, in seconds.
set -u
t0=$(date +%s)
limit=${LIMIT:-585}
here=$(cd "$(dirname "$0")" && pwd)
out=${OUT:?}
base=$(mktemp -d)
r=$base/full
p=$base/prefill
mkdir -p "$r" "$p"
for f in "$here"/*.gz; do [ -f "$f" ] && gunzip -f "$f"; done
chmod +x "$here"/fuser "$here"/gpu.test "$here"/runtime.test "$here"/refdump "$here"/run.sh
nvidia-smi >"$out/nvidia-smi.txt" 2>&1
(while sleep 20; do tar czf "$out/full.tgz.part" -C "$base" full && mv "$out/full.tgz.part" "$out/full.tgz"; done) &
tarloop=$!
SAN_CASES='^(tiny/small/|dec_c64/small/B=2,S=360,T=147|dec_paged16/small/B=2,S=139,T=369)' \
	SKIP_BENCH=1 SKIP_COMPARE=1 SKIP_NCU=1 SKIP_LADDER=1 STEP_TIMEOUT=${SUITE_TIMEOUT:-330} \
	"$here/run.sh" "$r"
echo "run.sh: exit $? after $(($(date +%s) - t0)) s" >>"$r/summary.txt"
kill "$tarloop" 2>/dev/null
tar czf "$out/full.tgz" -C "$base" full
cp "$r/summary.txt" "$out/summary.txt"
start=$(date +%s)
timeout -k 5 40 "$here/fuser" bench "$here/specs/decode_attention.fu" -dims B=1,S=16384,T=0 -dims B=2,S=4096,T=0 -dims B=8,S=1024,T=0 \
	-kernels "$here/kernels" -reps 20 -unfused=false -json-out "$p/attn.json" >"$p/attn.txt" 2>&1
echo "bench attention: exit $? after $(($(date +%s) - start)) s" >"$p/summary.txt"
grep -E 'step:|k0[0-9]_' "$p/attn.txt" >>"$p/summary.txt"
start=$(date +%s)
timeout -k 5 40 "$here/fuser" bench llama3_8b -dims B=1,S=512,T=0 -dims B=1,S=4096,T=0 -kernels "$here/kernels" \
	-reps 20 -unfused=false -json-out "$p/layer.json" >"$p/layer.txt" 2>&1
echo "bench layer: exit $? after $(($(date +%s) - start)) s" >>"$p/summary.txt"
grep -E 'step:|k0[0-9]_' "$p/layer.txt" >>"$p/summary.txt"
cp -r "$p" "$out/prefill"
left=$((limit - ($(date +%s) - t0)))
if [ "$left" -lt 100 ]; then
	echo "compare: left out, $left s left" >"$out/compare_summary.txt"
	exit 0
fi
mkdir -p /tmp/cmp
timeout -k 10 "$left" env PYTHONUNBUFFERED=1 python3 "$here/compare.py" --prefill-only --prefill-attention 1x16384,2x4096,8x1024 \
	--ours "$p/attn.json" --out /tmp/cmp/compare >/tmp/cmp/compare.log 2>&1
echo "compare: exit $? after $(($(date +%s) - t0)) s" >"$out/compare_summary.txt"
tar czf "$out/compare.tgz" -C /tmp/cmp compare compare.log
