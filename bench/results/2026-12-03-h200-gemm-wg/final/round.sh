#!/usr/bin/env bash
# round.sh (to run on the device from .gpu-var/ of the /work/main checkout,
# with .gpu-var carried; this session's call of it returned nothing, see
# ../README.md): the on-device suite at the commit this
# directory was committed with, then the Llama-3-8B prefill layer at that
# commit beside the perf round's bk32 variant and PyTorch, in one call.
# .gpu-var is that tree's make gpu-bundle (GEN_SPECS=32, the default bench
# dims), plus its kernels at B=1,S=4096,T=0 and B=1,S=512,T=0 (go run -tags
# nvrtc ./gpu/cmd/gpukernels -out .gpu/kernels -bench
# 'llama3_8b:B=1,S=4096,T=0;llama3_8b:B=1,S=512,T=0;' -suite=false), its
# executables gzipped (gzip -9), .gpu/layerstep left out, and v/bk32 as the
# perf round built it. First gpu/run.sh without its bench, compare and ncu
# steps (runtime tests, the suite cases fused and unfused with the
# regression and 32 generated specs, the determinism test; the
# sanitizers over the tiny spec's small cases and three matmul cases, two
# of them on the wgmma GEMM), its RESULTS_DIR archived into OUT/full.tgz
# every 20 s and at the end; then fuser bench of the prefill layer at this
# commit and at bk32, and bench/compare.py's prefill anchors beside this
# commit's, into OUT/prefill.tgz.
# Three device starts refused before this call left too little device time
# for the whole of run.sh: it runs every suite case but the two full-size
# Llama-3-8B ones (93 and 39 s in round1, both 64 rows or fewer, on the
# GEMV) and leaves out the ladder (decode graphs, whose GEMV did not
# change); the steps after the suite run while the call has time left:
# the bk32 bench before 300 s, the anchors before 250 s.
set -u
t0=$(date +%s)
here=$(cd "$(dirname "$0")" && pwd)
out=${OUT:?}
base=$(mktemp -d)
r=$base/full
p=$base/prefill
mkdir -p "$r" "$p"
for f in "$here"/*.gz "$here"/v/*/*.gz; do [ -f "$f" ] && gunzip -f "$f"; done
chmod +x "$here"/fuser "$here"/gpu.test "$here"/runtime.test "$here"/run.sh "$here"/v/*/fuser
(while sleep 20; do tar czf "$out/full.tgz.part" -C "$base" full && mv "$out/full.tgz.part" "$out/full.tgz"; done) &
tarloop=$!
SKIP_BENCH=1 SKIP_COMPARE=1 SKIP_NCU=1 SKIP_LADDER=1 STEP_TIMEOUT=300 \
	SUITE_CASES='^([^l]|l[^l]|ll[^a]|llama3_[^8]|llama3_8b/small)' \
	SAN_CASES='^(tiny/small/|mat_res_bf16_4104x120/small/B=(1,S=1|3,S=100)|mat_swiglu_f16_776x136/small/B=2,S=100)' \
	"$here/run.sh" "$r"
echo "run.sh: exit $?" >>"$r/summary.txt"
kill "$tarloop" 2>/dev/null
tar czf "$out/full.tgz" -C "$base" full
cp "$r/summary.txt" "$out/summary.txt"
sum=$p/summary.txt
save() { tar czf "$out/prefill.tgz" -C "$base" prefill; cp "$sum" "$out/prefill_summary.txt"; }
bench() {
	local name=$1 bin=$2 kern=$3 start=$(date +%s)
	timeout -k 10 90 "$bin" bench llama3_8b -dims B=1,S=4096,T=0 -dims B=1,S=512,T=0 -kernels "$kern" \
		-reps 20 -unfused=false -json-out "$p/$name.json" >"$p/$name.txt" 2>&1
	echo "$name: exit $? after $(($(date +%s) - start)) s" >>"$sum"
	grep -E 'step:|k0[1356]_gemm' "$p/$name.txt" >>"$sum"
	save
}
bench new "$here/fuser" "$here/kernels"
if [ $(($(date +%s) - t0)) -lt 300 ]; then bench bk32 "$here/v/bk32/fuser" "$here/v/bk32/kernels"; fi
if [ $(($(date +%s) - t0)) -ge 250 ]; then
	echo "compare: left out at $(($(date +%s) - t0)) s" >>"$sum"
	save
	exit 0
fi
start=$(date +%s)
timeout -k 10 150 env PYTHONUNBUFFERED=1 python3 "$here/compare.py" --prefill-only --prefill 4096,512 \
	--ours "$p/new.json" --out "$p/compare" >"$p/compare.log" 2>&1
echo "compare: exit $? after $(($(date +%s) - start)) s" >>"$sum"
sed -n '/^prefill, Llama/,$p' "$p/compare.log" >>"$sum"
save
