#!/usr/bin/env bash
# round.sh (run on the device from .gpu-var/ of the /work/main checkout,
# .gpu-var carried): the wgmma GEMM's stages through the tensor copy engine
# (TMA) against main (56a5f5a) in one call. .gpu-var holds the working
# tree's make gpu-bundle (GEN_SPECS=0, GPU_CASES='^(mat_|llama3_8b/small|tiny/small)',
# BENCH_DIMS='B=1,S=4096,T=0 B=1,S=512,T=0'), executables gzipped, and
# base/: main's fuser and its kernels at those dims. First gpu/run.sh over
# those suite cases (runtime tests, the cases fused and unfused, the
# determinism test, the sanitizers over two GEMMs the engine feeds) into
# OUT/suite.tgz; then fuser bench of the prefill layer, new, main, new;
# then ncu over the new output projection and gate/up GEMMs at 4096 tokens.
set -u
t0=$(date +%s)
here=$(cd "$(dirname "$0")" && pwd)
out=${OUT:?}
base=$(mktemp -d)
r=$base/suite
p=$base/prefill
mkdir -p "$r" "$p"
for f in "$here"/*.gz "$here"/base/*.gz; do [ -f "$f" ] && gunzip -f "$f"; done
chmod +x "$here"/fuser "$here"/gpu.test "$here"/runtime.test "$here"/refdump "$here"/run.sh "$here"/ncu.sh "$here"/base/fuser
(while sleep 20; do tar czf "$out/suite.tgz.part" -C "$base" suite && mv "$out/suite.tgz.part" "$out/suite.tgz"; done) &
tarloop=$!
SKIP_BENCH=1 SKIP_COMPARE=1 SKIP_NCU=1 SKIP_LADDER=1 STEP_TIMEOUT=200 \
	SUITE_CASES='^(mat_|llama3_8b/small|tiny/small)' \
	SAN_CASES='^(mat_res_bf16_4104x120/small/B=3,S=100|mat_res_bf16_136x2560/small/B=1,S=2500)' \
	timeout -k 10 280 "$here/run.sh" "$r"
echo "run.sh: exit $? after $(($(date +%s) - t0)) s" >>"$r/summary.txt"
kill "$tarloop" 2>/dev/null
tar czf "$out/suite.tgz" -C "$base" suite
cp "$r/summary.txt" "$out/summary.txt"
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
bench main.1 "$here/base/fuser" "$here/base/kernels"
bench new.2 "$here/fuser" "$here/kernels"
if [ $(($(date +%s) - t0)) -lt 480 ]; then
	NCU_TIMEOUT=60 "$here/ncu.sh" "$p/ncu" k03:'^k03_gemm':B=1,S=4096,T=0 k05:'^k05_gemm':B=1,S=4096,T=0 >>"$sum" 2>&1
fi
save
