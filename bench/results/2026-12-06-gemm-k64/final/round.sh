#!/usr/bin/env bash
# round.sh (run on the device from .gpu/ of the /work/main checkout, .gpu
# carried): the on-device suite at the commit this directory was committed
# with, then its Llama-3-8B prefill layer beside PyTorch's, in one call.
# .gpu is that tree's make gpu-bundle GEN_SPECS=32 BENCH_DIMS="B=1,S=512,T=0
# B=1,S=4096,T=0", executables gzipped, .gpu/layerstep left out. First
# gpu/run.sh without its bench, compare, ncu, ladder and sanitizer steps
# (round 3 ran memcheck and racecheck over these kernels): runtime tests,
# every suite case fused and unfused with the regression and 32 generated
# specs, the determinism test; its RESULTS_DIR archived into OUT/full.tgz
# every 20 s and at the end. Then fuser bench of the layer at 512 and 4096
# tokens into OUT/prefill, and, with 200 s or more left, bench/compare.py's
# prefill anchors (PyTorch eager, eager + CUDA graph, torch.compile in its
# default and max-autotune-no-cudagraphs modes, cuBLAS GEMMs with
# PyTorch's epilogues) beside that bench into OUT/compare.tgz. LIMIT bounds
# the whole call and SUITE_TIMEOUT the suite step, in seconds.
set -u
t0=$(date +%s)
# limit: the seconds the call may run (LIMIT, default 585).
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
SKIP_BENCH=1 SKIP_COMPARE=1 SKIP_NCU=1 SKIP_LADDER=1 SKIP_SANITIZER=1 STEP_TIMEOUT=${SUITE_TIMEOUT:-300} \
	"$here/run.sh" "$r"
echo "run.sh: exit $? after $(($(date +%s) - t0)) s" >>"$r/summary.txt"
kill "$tarloop" 2>/dev/null
tar czf "$out/full.tgz" -C "$base" full
cp "$r/summary.txt" "$out/summary.txt"
start=$(date +%s)
timeout -k 5 60 "$here/fuser" bench llama3_8b -dims B=1,S=512,T=0 -dims B=1,S=4096,T=0 -kernels "$here/kernels" \
	-reps 20 -unfused=false -json-out "$p/new.json" >"$p/new.txt" 2>&1
echo "bench: exit $? after $(($(date +%s) - start)) s" >"$p/summary.txt"
grep -E 'step:|k0[0-9]_' "$p/new.txt" >>"$p/summary.txt"
cp -r "$p" "$out/prefill"
left=$((limit - ($(date +%s) - t0)))
if [ "$left" -lt 200 ]; then
	echo "compare: left out, $left s left" >"$out/compare_summary.txt"
	exit 0
fi
mkdir -p /tmp/cmp
timeout -k 10 "$left" env PYTHONUNBUFFERED=1 python3 "$here/compare.py" --prefill-only --prefill 512,4096 \
	--ours "$p/new.json" --out /tmp/cmp/compare >/tmp/cmp/compare.log 2>&1
echo "compare: exit $? after $(($(date +%s) - t0)) s" >"$out/compare_summary.txt"
tar czf "$out/compare.tgz" -C /tmp/cmp compare compare.log
