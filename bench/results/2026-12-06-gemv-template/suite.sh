#!/usr/bin/env bash
# suite.sh (on the device from the repository root, .gpu carried): the
# on-device suite at this directory's commit, after the GEMV tile moved to
# device/gemv.cuh. .gpu: make gpu-bundle GEN_SPECS=32 BENCH_SPEC=llama3_8b
# BENCH_DIMS="B=1,S=1,T=4096 B=16,S=1,T=4096 B=1,S=4096,T=0" and make
# gpu-base BASE=efd984c with the same dims (.gpu/base), executables
# gzipped, .gpu/layerstep left out. gpu/run.sh without its ladder, bench,
# compare, ncu and refcheck steps: runtime tests, the suite's small cases
# fused and unfused and the determinism test, then memcheck and racecheck
# over SAN_CASES (the tiny spec; GEMVs on CUDA cores at 1 to 8 rows, K
# contiguous and row-major, split-K and not). OUT/suite.tgz.
set -u
here=$(pwd)/.gpu
out=${OUT:?}
r=$(mktemp -d)/suite
mkdir -p "$r"
for f in "$here"/*.gz "$here"/base/*.gz; do [ -f "$f" ] && gunzip -f "$f"; done
chmod +x "$here"/fuser "$here"/gpu.test "$here"/runtime.test "$here"/refdump "$here"/run.sh "$here"/refcheck.sh "$here"/ab.sh "$here"/base/fuser
(while sleep 20; do tar czf "$out/suite.tgz.part" -C "$(dirname "$r")" suite && mv "$out/suite.tgz.part" "$out/suite.tgz"; done) &
tarloop=$!
SAN_CASES='^(tiny/small/B=2,S=1,T=1|mat_res_bf16_4104x120/|mat_tres_bf16_1032x200/|mat_cast_bf16_1001x517/small/B=3)' \
	SUITE_CASES='/small/' SKIP_LADDER=1 SKIP_BENCH=1 SKIP_COMPARE=1 SKIP_NCU=1 SKIP_REFCHECK=1 \
	STEP_TIMEOUT=${SUITE_TIMEOUT:-400} "$here/run.sh" "$r"
echo "run.sh: exit $?" >>"$r/summary.txt"
kill "$tarloop" 2>/dev/null
gzip -f "$r/suite.log"
tar czf "$out/suite.tgz" -C "$(dirname "$r")" suite
cat "$r/summary.txt"
