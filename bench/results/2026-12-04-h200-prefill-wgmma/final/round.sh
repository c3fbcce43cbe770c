#!/usr/bin/env bash
# round.sh (run on the device from .gpu-var/ of the /work/main checkout,
# .gpu-var carried): the on-device suite at the commit this directory was
# committed with, then the Llama-3-8B prefill layer and the prefill
# attention shapes at that commit beside PyTorch's anchors, in one call.
# .gpu-var is that tree's make gpu-bundle (GEN_SPECS=32, the default bench
# dims) plus its kernels of the Llama-3-8B layer at B=1,S=4096,T=0 and
# B=1,S=512,T=0 and of bench/specs/decode_attention.fu at B=1,S=16384 /
# B=2,S=4096 / B=8,S=1024 (T=0) (go run -tags nvrtc ./gpu/cmd/gpukernels
# -out .gpu/kernels -bench ... -suite=false), bench/specs in specs/,
# executables gzipped, .gpu/layerstep left out. First gpu/run.sh without
# its bench, compare, ncu and ladder steps: runtime tests, every suite case
# fused and unfused with the regression and 32 generated specs, the
# determinism test, and the sanitizers over the tiny spec's small cases, a
# clustered GEMM and a prefill attention case (head dim 64, its key tiles
# through the tensor copy engine and its last through cp.async); its
# RESULTS_DIR archived into OUT/full.tgz every
# 20 s and at the end. Then fuser bench of the prefill layer and of the
# attention shapes, and bench/compare.py's prefill anchors while the call
# has time left, into OUT/prefill.tgz.
set -u
t0=$(date +%s)
here=$(cd "$(dirname "$0")" && pwd)
out=${OUT:?}
base=$(mktemp -d)
r=$base/full
p=$base/prefill
mkdir -p "$r" "$p"
for f in "$here"/*.gz; do [ -f "$f" ] && gunzip -f "$f"; done
chmod +x "$here"/fuser "$here"/gpu.test "$here"/runtime.test "$here"/refdump "$here"/run.sh
(while sleep 20; do tar czf "$out/full.tgz.part" -C "$base" full && mv "$out/full.tgz.part" "$out/full.tgz"; done) &
tarloop=$!
SKIP_BENCH=1 SKIP_COMPARE=1 SKIP_NCU=1 SKIP_LADDER=1 STEP_TIMEOUT=400 \
	SAN_CASES='^(tiny/small/|mat_res_bf16_4104x120/small/B=3,S=100|dec_c64/small/B=2,S=[0-9]{3},)' \
	"$here/run.sh" "$r"
echo "run.sh: exit $? after $(($(date +%s) - t0)) s" >>"$r/summary.txt"
kill "$tarloop" 2>/dev/null
tar czf "$out/full.tgz" -C "$base" full
cp "$r/summary.txt" "$out/summary.txt"
sum=$p/summary.txt
save() { tar czf "$out/prefill.tgz" -C "$base" prefill; cp "$sum" "$out/prefill_summary.txt"; }
start=$(date +%s)
timeout -k 10 60 "$here/fuser" bench llama3_8b -dims B=1,S=4096,T=0 -dims B=1,S=512,T=0 -kernels "$here/kernels" \
	-reps 20 -unfused=false -json-out "$p/final.json" >"$p/final.txt" 2>&1
echo "bench: exit $? after $(($(date +%s) - start)) s" >>"$sum"
grep -E 'step:|k0[0-9]_' "$p/final.txt" >>"$sum"
start=$(date +%s)
timeout -k 10 60 "$here/fuser" bench "$here/specs/decode_attention.fu" -dims B=1,S=16384,T=0 -dims B=2,S=4096,T=0 -dims B=8,S=1024,T=0 \
	-kernels "$here/kernels" -reps 20 -unfused=false -json-out "$p/attn.json" >"$p/attn.txt" 2>&1
echo "bench attention: exit $? after $(($(date +%s) - start)) s" >>"$sum"
grep -E 'step:|k0[0-9]_' "$p/attn.txt" >>"$sum"
save
if [ $(($(date +%s) - t0)) -ge 450 ]; then
	echo "compare: left out at $(($(date +%s) - t0)) s" >>"$sum"
	save
	exit 0
fi
start=$(date +%s)
timeout -k 10 $((575 - ($(date +%s) - t0))) env PYTHONUNBUFFERED=1 python3 "$here/compare.py" --prefill-only --prefill 4096,512 \
	--prefill-attention 1x16384,2x4096,8x1024 --ours "$p/final.json" --more "$p/attn.json" --out "$p/compare" >"$p/compare.log" 2>&1
echo "compare: exit $? after $(($(date +%s) - start)) s" >>"$sum"
sed -n '/^prefill attention, causal/,$p' "$p/compare.log" >>"$sum"
save
