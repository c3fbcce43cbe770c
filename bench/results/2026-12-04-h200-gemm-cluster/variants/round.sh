#!/usr/bin/env bash
# round.sh (run on the device from .gpu-var/ of the /work/main checkout,
# .gpu-var carried): the wgmma GEMM's pairs of blocks sharing their weight
# stages (clusters of two, the weight multicast by the tensor copy engine)
# and its rows copied as one 64-byte-swizzled box a stage, against the rows
# alone and against main, in one call. .gpu-var holds the new tree's make
# gpu-bundle (GEN_SPECS=0, GPU_CASES='^(mat_|llama3_8b/small|tiny/small)',
# BENCH_DIMS='B=1,S=4096,T=0 B=1,S=512,T=0'), executables gzipped;
# v/rows/fuser the new tree with the launch pass's clusters off (the same
# kernels, launched without clusters: every block copies its whole
# stage); base/ main (3f06f79), its fuser and kernels at those dims. First
# fuser bench of the Llama-3-8B prefill layer: new, rows, main, new; then
# gpu/run.sh over those suite cases (runtime tests, the cases fused and
# unfused, the determinism test, the sanitizers over GEMMs the engine
# feeds); ncu over new's gate/up GEMM at 4096 tokens and bench/compare.py's
# prefill anchors beside new, while the call has time left.
set -u
t0=$(date +%s)
here=$(cd "$(dirname "$0")" && pwd)
out=${OUT:?}
base=$(mktemp -d)
r=$base/suite
p=$base/prefill
mkdir -p "$r" "$p"
for f in "$here"/*.gz "$here"/base/*.gz "$here"/v/*/*.gz; do [ -f "$f" ] && gunzip -f "$f"; done
chmod +x "$here"/fuser "$here"/gpu.test "$here"/runtime.test "$here"/refdump "$here"/run.sh "$here"/ncu.sh "$here"/base/fuser "$here"/v/*/fuser
sum=$p/summary.txt
save() { tar czf "$out/prefill.tgz" -C "$base" prefill; cp "$sum" "$out/prefill_summary.txt"; }
bench() {
	local name=$1 bin=$2 kern=$3 start=$(date +%s)
	timeout -k 10 90 "$bin" bench llama3_8b -dims B=1,S=4096,T=0 -dims B=1,S=512,T=0 -kernels "$kern" \
		-reps 20 -unfused=false -json-out "$p/$name.json" >"$p/$name.txt" 2>&1
	echo "$name: exit $? after $(($(date +%s) - start)) s" >>"$sum"
	grep -E 'step:|k0[0-9]_' "$p/$name.txt" >>"$sum"
	save
}
bench new.1 "$here/fuser" "$here/kernels"
bench rows.1 "$here/v/rows/fuser" "$here/kernels"
bench main.1 "$here/base/fuser" "$here/base/kernels"
bench new.2 "$here/fuser" "$here/kernels"
(while sleep 20; do tar czf "$out/suite.tgz.part" -C "$base" suite && mv "$out/suite.tgz.part" "$out/suite.tgz"; done) &
tarloop=$!
SKIP_BENCH=1 SKIP_COMPARE=1 SKIP_NCU=1 SKIP_LADDER=1 STEP_TIMEOUT=150 \
	SUITE_CASES='^(mat_|llama3_8b/small|tiny/small)' \
	SAN_CASES='^(mat_res_bf16_4104x120/small/B=3,S=100|mat_res_f16_1032x200/small|mat_tres_bf16_1032x200/small|llama3_8b/small/B=2,S=45,T=99)' \
	timeout -k 10 260 "$here/run.sh" "$r"
echo "run.sh: exit $? after $(($(date +%s) - t0)) s" >>"$r/summary.txt"
kill "$tarloop" 2>/dev/null
tar czf "$out/suite.tgz" -C "$base" suite
cp "$r/summary.txt" "$out/summary.txt"
if [ $(($(date +%s) - t0)) -lt 420 ]; then
	NCU_TIMEOUT=50 "$here/ncu.sh" "$p/ncu" k05:'^k05_gemm':B=1,S=4096,T=0 >>"$sum" 2>&1
	save
fi
if [ $(($(date +%s) - t0)) -lt 430 ]; then
	start=$(date +%s)
	timeout -k 10 $((575 - ($(date +%s) - t0))) env PYTHONUNBUFFERED=1 python3 "$here/compare.py" --prefill-only --prefill 4096,512 \
		--ours "$p/new.1.json" --out "$p/compare" >"$p/compare.log" 2>&1
	echo "compare: exit $? after $(($(date +%s) - start)) s" >>"$sum"
	sed -n '/^prefill, Llama/,$p' "$p/compare.log" >>"$sum"
else
	echo "compare: left out at $(($(date +%s) - t0)) s" >>"$sum"
fi
save
