#!/usr/bin/env bash
# suite.sh (on the device from the repository root, .gpu carried): the
# on-device suite at this directory's commit, after the tensor-core GEMV,
# the wgmma GEMM's item and the CUDA-core attention moved to device
# templates (#16 item 3). .gpu: make gpu-bundle GEN_SPECS=32
# BENCH_SPEC=llama3_8b BENCH_DIMS="B=1,S=1,T=4096 B=16,S=1,T=4096
# B=1,S=4096,T=0", images no
# manifest lists removed, executables gzipped, .gpu/layerstep, fuser and
# refdump left out.
# In one call: gpu/run.sh without its ladder, bench, compare, ncu and
# refcheck steps (runtime tests, the suite's small cases fused and unfused
# and the determinism test, memcheck and racecheck over SAN_CASES: the
# tiny spec's decode case, the residual, transposed-weight and cast matmul
# layers, and Llama-3-8B's 90-token prefill, whose unfused q·kᵀ takes the
# mma.sync tiles, as the unfused attention scores of every small prefill
# case do),
# then the cases it leaves out (the regression and 32 generated specs,
# Llama-3-8B at full size). SUITE_CASES (default /small/) narrows the
# first part, REST=0 leaves the second out. OUT/suite.tgz.
set -u
here=$(pwd)/.gpu
out=${OUT:?}
r=$(mktemp -d)/suite
mkdir -p "$r"
for f in "$here"/*.gz; do [ -f "$f" ] && gunzip -f "$f"; done
chmod +x "$here"/gpu.test "$here"/runtime.test "$here"/run.sh
(while sleep 20; do tar czf "$out/suite.tgz.part" -C "$(dirname "$r")" suite && mv "$out/suite.tgz.part" "$out/suite.tgz"; done) &
tarloop=$!
SAN_CASES='^(tiny/small/B=2,S=1,T=1|mat_res_bf16_4104x120/|mat_tres_bf16_1032x200/|mat_cast_bf16_1001x517/small/B=3|llama3_8b/small/B=2,S=45,T=99)' \
	SUITE_CASES=${SUITE_CASES:-/small/} SKIP_LADDER=1 SKIP_BENCH=1 SKIP_COMPARE=1 SKIP_NCU=1 SKIP_REFCHECK=1 \
	STEP_TIMEOUT=${SUITE_TIMEOUT:-330} "$here/run.sh" "$r"
echo "run.sh: exit $?" >>"$r/summary.txt"
if [ "${REST:-1}" != 0 ]; then
	timeout -k 5 150 "$here/gpu.test" -test.v -test.run '^TestSuite$' -test.timeout 10m \
		-kernels "$here/kernels" -specs "$here/genspecs" -cases '(/file/|/full/)' \
		-summary "$r/rest_summary.json" >"$r/rest.log" 2>&1
	echo "rest: exit $?" >>"$r/summary.txt"
	gzip -f "$r/rest.log"
fi
kill "$tarloop" 2>/dev/null
gzip -f "$r/suite.log"
tar czf "$out/suite.tgz" -C "$(dirname "$r")" suite
cat "$r/summary.txt"
