#!/usr/bin/env bash
# suite.sh (run on the device from .gpu/ of the /work/main checkout, .gpu
# carried): the on-device suite at the commit this directory was committed
# with. .gpu is that tree's make gpu-bundle GEN_SPECS=32 BENCH_SPEC=llama3_8b
# BENCH_DIMS="B=1,S=512,T=0 B=1,S=4096,T=0" with the kernels of
# bench/specs/decode_attention.fu at B=1,S=16384,T=0, B=2,S=4096,T=0 and
# B=8,S=1024,T=0 and of bench/specs/add_rmsnorm.fu (N=1024, 4096, 8192) and
# swiglu.fu (N=1024, 8192) added (go run -tags nvrtc ./gpu/cmd/gpukernels
# -out .gpu/kernels -suite=false -bench ...), bench/specs copied to
# .gpu/specs, executables gzipped, .gpu/layerstep left out. gpu/run.sh
# without its bench, compare, ncu and ladder steps: runtime tests, every
# suite case fused and unfused with the regression and 32 generated specs,
# the determinism test, memcheck and racecheck over SAN_CASES (the tiny
# spec, a prefill attention case of persistent blocks, B=7, of which some
# take two items, and a paged one through the producer's cp.async); its
# RESULTS_DIR archived into OUT/full.tgz every 20 s and at the end.
# SUITE_TIMEOUT bounds each step of run.sh, in seconds.
set -u
t0=$(date +%s)
here=$(cd "$(dirname "$0")" && pwd)
out=${OUT:?}
base=$(mktemp -d)
r=$base/full
mkdir -p "$r"
for f in "$here"/*.gz; do [ -f "$f" ] && gunzip -f "$f"; done
chmod +x "$here"/fuser "$here"/gpu.test "$here"/runtime.test "$here"/refdump "$here"/run.sh
nvidia-smi >"$out/nvidia-smi.txt" 2>&1
(while sleep 20; do tar czf "$out/full.tgz.part" -C "$base" full && mv "$out/full.tgz.part" "$out/full.tgz"; done) &
tarloop=$!
SAN_CASES='^(tiny/small/|dec_c128/small/B=7,S=344,T=71|dec_paged16/small/B=2,S=139,T=369)' \
	SKIP_BENCH=1 SKIP_COMPARE=1 SKIP_NCU=1 SKIP_LADDER=1 STEP_TIMEOUT=${SUITE_TIMEOUT:-330} \
	"$here/run.sh" "$r"
echo "run.sh: exit $? after $(($(date +%s) - t0)) s" >>"$r/summary.txt"
kill "$tarloop" 2>/dev/null
tar czf "$out/full.tgz" -C "$base" full
cp "$r/summary.txt" "$out/summary.txt"
cat "$out/summary.txt"
