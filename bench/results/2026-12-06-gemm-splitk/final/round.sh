#!/usr/bin/env bash
# round.sh (run on the device from .gpu/ of the /work/main checkout, .gpu
# carried): the on-device suite at the commit this directory was committed
# with, then that commit's Llama-3-8B prefill layer beside the revision
# before the split (27bb5c2), in one call. .gpu is that tree's make
# gpu-bundle GEN_SPECS=32 BENCH_DIMS="B=1,S=512,T=0 B=1,S=4096,T=0" and
# make gpu-base BASE=27bb5c2 with the same BENCH_DIMS, executables
# gzipped, .gpu/layerstep left out. First gpu/run.sh without its bench,
# compare, ncu and ladder steps: runtime tests, every suite case fused and
# unfused with the regression and 32 generated specs, the determinism
# test, and the sanitizers over the tiny spec's small cases and two split
# wgmma GEMMs (f16 through the copy engine, bf16 through cp.async); its
# RESULTS_DIR archived into
# OUT/full.tgz every 20 s and at the end. Then fuser bench of the layer at
# 512 and 4096 tokens, base and this tree, into OUT/prefill.tgz, and, time
# left, gpu/ncu.sh over the QKV GEMM at 512 tokens into OUT/ncu.
set -u
t0=$(date +%s)
here=$(cd "$(dirname "$0")" && pwd)
out=${OUT:?}
base=$(mktemp -d)
r=$base/full
p=$base/prefill
mkdir -p "$r" "$p"
for f in "$here"/*.gz "$here"/base/*.gz; do [ -f "$f" ] && gunzip -f "$f"; done
chmod +x "$here"/fuser "$here"/gpu.test "$here"/runtime.test "$here"/refdump "$here"/run.sh "$here"/base/fuser
(while sleep 20; do tar czf "$out/full.tgz.part" -C "$base" full && mv "$out/full.tgz.part" "$out/full.tgz"; done) &
tarloop=$!
SKIP_BENCH=1 SKIP_COMPARE=1 SKIP_NCU=1 SKIP_LADDER=1 STEP_TIMEOUT=420 \
	SAN_CASES='^(tiny/small/|mat_res_f16_1032x200/|mat_tres_bf16_1032x200/)' \
	"$here/run.sh" "$r"
echo "run.sh: exit $? after $(($(date +%s) - t0)) s" >>"$r/summary.txt"
kill "$tarloop" 2>/dev/null
tar czf "$out/full.tgz" -C "$base" full
cp "$r/summary.txt" "$out/summary.txt"
sum=$p/summary.txt
: >"$sum"
for side in base new; do
	bin=$here/fuser kdir=$here/kernels
	if [ "$side" = base ]; then bin=$here/base/fuser kdir=$here/base/kernels; fi
	left=$((585 - ($(date +%s) - t0)))
	if [ "$left" -lt 15 ]; then
		echo "bench $side: left out, $left s left" >>"$sum"
		continue
	fi
	start=$(date +%s)
	timeout -k 5 "$left" "$bin" bench llama3_8b -dims B=1,S=512,T=0 -dims B=1,S=4096,T=0 -kernels "$kdir" \
		-reps 20 -unfused=false -json-out "$p/$side.json" >"$p/$side.txt" 2>&1
	echo "bench $side: exit $? after $(($(date +%s) - start)) s" >>"$sum"
	grep -E 'step:|k0[0-9]_' "$p/$side.txt" >>"$sum"
	tar czf "$out/prefill.tgz" -C "$base" prefill
done
cp "$sum" "$out/prefill_summary.txt"
# Where QKV's time goes at 512 tokens (its RoPE and KV-append epilogue
# against its stages), while the call has time left.
left=$((590 - ($(date +%s) - t0)))
if [ "$left" -ge 60 ]; then
	NCU_TIMEOUT=$((left - 10)) "$here/ncu.sh" "$out/ncu" k01_512:'^k01_gemm':B=1,S=512,T=0
fi
