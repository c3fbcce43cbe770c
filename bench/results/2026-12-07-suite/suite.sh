#!/usr/bin/env bash
# suite.sh (on the device from the repository root, .gpu carried): the
# on-device suite at this directory's commit. .gpu: make gpu-bundle
# GEN_SPECS=32 BENCH_SPEC=llama3_8b BENCH_DIMS="B=1,S=1,T=4096
# B=16,S=1,T=4096 B=64,S=1,T=4096 B=1,S=4096,T=0", executables gzipped,
# .gpu/kernels packed as .gpu/kernels.tgz (tar czf .gpu/kernels.tgz -C .gpu
# kernels), and .gpu/layerstep, laddercheck and refdump left out (the
# carry limit). Where the tree and that bundle pass the limit, two
# bundles: the kernels of `go run -tags nvrtc ./gpu/cmd/gpukernels -out
# .gpu/kernels -bench "" -suite=true -cases /small/` for the first call
# (REST=0), and of `... -cases '/file/ /full/' -specs .gpu/genspecs` for
# the second (SKIP_SUITE=1 SKIP_SANITIZER=1), each packed as
# .gpu/kernels.tgz beside the same executables.
# In one call: gpu/run.sh without its ladder, bench, compare, ncu and
# refcheck steps (runtime tests, the suite's small cases fused and unfused
# and the determinism test, memcheck and racecheck over SAN_CASES), then
# the cases it leaves out (the regression and 32 generated specs,
# Llama-3-8B at full size; REST=0 leaves them out, REST_CASES picks among
# them; REST_TIMEOUT, default 400 s, limits them). SAN_CASES, regexps separated by spaces, each of which must match
# a case (gpu.SelectCases), default: the tiny spec's decode at T=1 and at
# a long T (split-K GEMVs), Mixtral's small cases (the router's top-k),
# Llama-3-8B's long decode and its prefill whose unfused q·kᵀ takes the
# mma.sync tiles, the residual, transposed-weight and cast matmul layers,
# the score-bias and keys-transposed decode attention, and two packed
# (varlen) batches, one over a paged cache. OUT/suite.tgz, refreshed
# every 20 s.
set -u
here=$(pwd)/.gpu
out=${OUT:?}
r=$(mktemp -d)/suite
mkdir -p "$r"
[ -d "$here/kernels" ] || tar xzf "$here/kernels.tgz" -C "$here"
for f in "$here"/*.gz; do [ -f "$f" ] && gunzip -f "$f"; done
chmod +x "$here"/gpu.test "$here"/runtime.test "$here"/run.sh
(while sleep 20; do tar czf "$out/suite.tgz.part" -C "$(dirname "$r")" suite && mv "$out/suite.tgz.part" "$out/suite.tgz"; done) &
tarloop=$!
SAN_CASES=${SAN_CASES:-'^tiny/small/B=[0-9]+,S=1,T=1$ ^tiny/small/B=[0-9]+,S=1,T=[0-9]{4}$ ^mixtral_moe/small/ ^llama3_8b/small/B=4,S=1,T=[0-9]{4}$ ^llama3_8b/small/B=1,S=17, ^mat_res_bf16_4104x120/ ^mat_tres_bf16_1032x200/ ^mat_cast_bf16_1001x517/small/B=3 ^dec_bias128/small/B=3,S=1, ^dec_keyst128/small/B=3,S=1, ^vl_paged16/ ^varlen_small_ragged/small/B=5,'} \
	SUITE_CASES=/small/ SKIP_LADDER=1 SKIP_BENCH=1 SKIP_COMPARE=1 SKIP_NCU=1 SKIP_REFCHECK=1 \
	STEP_TIMEOUT=${STEP_TIMEOUT:-540} "$here/run.sh" "$r"
echo "run.sh: exit $?" >>"$r/summary.txt"
if [ "${REST:-1}" != 0 ]; then
	timeout -k 5 "${REST_TIMEOUT:-400}" "$here/gpu.test" -test.v -test.run '^TestSuite$' -test.timeout 10m \
		-kernels "$here/kernels" -specs "$here/genspecs" -cases "${REST_CASES:-/file/ /full/}" \
		-summary "$r/rest_summary.json" >"$r/rest.log" 2>&1
	echo "rest: exit $?" >>"$r/summary.txt"
	gzip -f "$r/rest.log"
fi
kill "$tarloop" 2>/dev/null
gzip -f "$r/suite.log"
tar czf "$out/suite.tgz" -C "$(dirname "$r")" suite
cat "$r/summary.txt"
