#!/usr/bin/env bash
# .gpu/run.sh RESULTS_DIR: on the GPU machine (no Go there), run what
# `make gpu-bundle` put in .gpu/ and write every result under RESULTS_DIR:
#
#   nvidia-smi.txt          the device
#   runtime_test.log        runtime's own GPU tests (graph capture, shared memory)
#   ladder.log, .json       the CUDA-graph ladder through the Go packages fuser
#                           build generates (.gpu/laddercheck, gpu/laddercheck):
#                           Llama-3-8B decode as one graph launch equal to eager
#                           bit for bit; paged batches padded to buckets
#   suite.log               the on-device correctness suite and the decode
#                           determinism test (gpu.test -test.v), with the
#                           regression and generated specs of .gpu/genspecs
#                           (gpu.test -specs)
#   suite_summary.json      every check of the suite: pass / fail / skip, worst err/tol
#   memcheck.log            compute-sanitizer --tool memcheck on a representative run
#   racecheck.log           compute-sanitizer --tool racecheck on the same run
#   refcheck/               .gpu/refcheck.sh: every shipped spec (shrunk, and
#                           Llama-3-8B at full size), fused and unfused, against
#                           float64 within twice PyTorch's own bf16 error
#                           (refcheck.tgz, summary.txt; REF_CASES as there)
#   fuser_bench.txt/.json   fuser bench: kernels, steps, ceilings
#   layerstep.*             each bench dims' step timed through the Go package
#                           fuser build generates (gpu/layerstep), against
#                           fuser_bench.json's graph step (within 10%)
#   fuser_bench_timeline.*  each bench dims' fused step as one graph replay of its
#                           timeline modules: when each kernel's blocks enter,
#                           pass their dependent-launch wait and return
#                           (fuser bench -timeline)
#   fuser_bench_serial.*    the first dims' fused step again without dependent
#                           launches (fuser bench -dependent=false)
#   fuser_bench_base.*      the fused step of another revision, when make
#                           gpu-base put its fuser and kernels in .gpu/base
#                           (base/REVISION names it): an A/B in one call
#   compare.*, anchors.json bench/compare.py: PyTorch anchors and ratios (same run)
#   ncu_traffic.md/.json    ncu's DRAM bytes per kernel of the first bench dims'
#                           fused and unfused steps against the cost model
#                           (fuser profile + bench/ncu_table.py); ncu.csv raw
#   summary.txt             each step's command, exit status and time
#
# Environment: SAN_CASES (regexps, separated by spaces, of the suite
# cases the sanitizers run, each of which must match a case,
# default the shrunk tiny spec's, the split-K GEMV's and Mixtral's, whose
# router's top-k kernel racecheck once caught racing), SUITE_CASES
# (the suite's -cases, regexps separated by spaces, default all: a bundle built with
# GPU_CASES has only those), SKIP_LADDER, SKIP_SUITE, SKIP_SANITIZER,
# SKIP_BENCH, SKIP_COMPARE, SKIP_NCU, SKIP_REFCHECK (set to 1 to leave a
# step out),
# BENCH_REPS, STEP_TIMEOUT
# (seconds, per step), PREFILL (token counts, e.g. 4096,512: compare.py
# also anchors the Llama-3-8B layer at prefill, batch 1, and its GEMMs
# through cuBLAS, beside the bench's llama3_8b dims with S > 1; default none).
# The exit status is 1 when any step failed.
set -u
here=$(cd "$(dirname "$0")" && pwd)
out=${1:?usage: .gpu/run.sh RESULTS_DIR}
mkdir -p "$out"
out=$(cd "$out" && pwd)
# shellcheck source=/dev/null
. "$here/bench.env" # BENCH_SPEC, BENCH_DIMS (what the bundle compiled)
export FUSER_KERNELS="$here/kernels"
san_cases=${SAN_CASES:-^tiny/small/ ^mat_res_bf16_4104x120/ ^mixtral_moe/small/}
status=0
: >"$out/summary.txt"

# step NAME LOG CMD...: run CMD with its output in LOG, record the status.
step() {
	local name=$1 log=$2 start rc
	shift 2
	echo "== $name: $*" | tee -a "$out/summary.txt"
	start=$(date +%s)
	if [ -n "${STEP_TIMEOUT:-}" ]; then set -- timeout -k 10 "$STEP_TIMEOUT" "$@"; fi
	"$@" >"$log" 2>&1
	rc=$?
	echo "   exit $rc after $(($(date +%s) - start)) s, log $(basename "$log")" | tee -a "$out/summary.txt"
	[ "$rc" = 0 ] || status=1
	return 0
}

nvidia-smi >"$out/nvidia-smi.txt" 2>&1
step runtime "$out/runtime_test.log" "$here/runtime.test" -test.v
if [ "${SKIP_LADDER:-0}" != 1 ]; then
	step ladder "$out/ladder.log" "$here/laddercheck" -json-out "$out/ladder.json"
	grep -E '^(ok|FAIL) |^laddercheck:' "$out/ladder.log" | tail -20 >>"$out/summary.txt"
fi
if [ "${SKIP_SUITE:-0}" != 1 ]; then
	gen=() # the regression and generated specs the bundle compiled (make gpu-bundle)
	if [ -d "$here/genspecs" ]; then gen=(-specs "$here/genspecs"); fi
	sel=() # the cases to run (SUITE_CASES)
	if [ -n "${SUITE_CASES:-}" ]; then sel=(-cases "$SUITE_CASES"); fi
	step suite "$out/suite.log" "$here/gpu.test" -test.v -test.run '^(TestSuite|TestDeterministicDecode)$' -test.timeout 60m \
		-kernels "$here/kernels" -summary "$out/suite_summary.json" "${gen[@]}" "${sel[@]}"
	grep -E '^(--- FAIL|FAIL|ok|PASS)' "$out/suite.log" | tail -20 >>"$out/summary.txt"
	sed -n '/summary:/,/^[-=]/p' "$out/suite.log" | head -40 >>"$out/summary.txt"
fi
if [ "${SKIP_SANITIZER:-0}" != 1 ]; then
	san=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
	for tool in memcheck racecheck; do
		step "$tool" "$out/$tool.log" "$san" --tool "$tool" --error-exitcode 9 --print-limit 200 \
			"$here/gpu.test" -test.v -test.run '^TestSuite$' -kernels "$here/kernels" -cases "$san_cases"
		grep -E 'ERROR SUMMARY|RACECHECK SUMMARY|Error|Hazard' "$out/$tool.log" | tail -5 >>"$out/summary.txt"
	done
fi
if [ "${SKIP_REFCHECK:-0}" != 1 ]; then
	step refcheck "$out/refcheck.log" "$here/refcheck.sh" "$out/refcheck"
	grep -E '^verdict|exit' "$out/refcheck/summary.txt" >>"$out/summary.txt"
fi
if [ "${SKIP_BENCH:-0}" != 1 ]; then
	dims=()
	for d in $BENCH_DIMS; do dims+=(-dims "$d"); done
	step bench "$out/fuser_bench.txt" "$here/fuser" bench "$BENCH_SPEC" "${dims[@]}" -kernels "$here/kernels" \
		-reps "${BENCH_REPS:-100}" -json-out "$out/fuser_bench.json"
	grep -E 'ceilings|step:' "$out/fuser_bench.txt" >>"$out/summary.txt"
	step layerstep "$out/layerstep.txt" "$here/layerstep" -kernels "$here/kernels" -reps "${BENCH_REPS:-100}" \
		-json-out "$out/layerstep.json" -against "$out/fuser_bench.json"
	grep -E 'graph replay' "$out/layerstep.txt" >>"$out/summary.txt"
fi
if [ "${SKIP_COMPARE:-0}" != 1 ]; then
	cmp=$here/../bench/compare.py
	[ -f "$cmp" ] || cmp=$here/compare.py
	pre=() # the prefill anchors (PREFILL)
	if [ -n "${PREFILL:-}" ]; then pre=(--prefill "$PREFILL"); fi
	step compare "$out/compare.log" env PYTHONUNBUFFERED=1 python3 "$cmp" --ours "$out/fuser_bench.json" --out "$out" "${pre[@]}"
fi
if [ "${SKIP_BENCH:-0}" != 1 ]; then
	# Where the fused step's time goes: each kernel of one graph replay.
	step bench_timeline "$out/fuser_bench_timeline.txt" "$here/fuser" bench "$BENCH_SPEC" "${dims[@]}" -kernels "$here/kernels" \
		-reps 30 -unfused=false -timeline -json-out "$out/fuser_bench_timeline.json"
	grep -E 'span|step:' "$out/fuser_bench_timeline.txt" >>"$out/summary.txt"
	# The fused step of the first bench dims again with every kernel
	# starting when the one before it ends: what dependent launch buys.
	step bench_serial "$out/fuser_bench_serial.txt" "$here/fuser" bench "$BENCH_SPEC" -dims "${BENCH_DIMS%% *}" -kernels "$here/kernels" \
		-reps "${BENCH_REPS:-100}" -unfused=false -dependent=false -json-out "$out/fuser_bench_serial.json"
	grep -E 'step:' "$out/fuser_bench_serial.txt" >>"$out/summary.txt"
	if [ -x "$here/base/fuser" ]; then
		step bench_base "$out/fuser_bench_base.txt" "$here/base/fuser" bench "$BENCH_SPEC" "${dims[@]}" -kernels "$here/base/kernels" \
			-reps "${BENCH_REPS:-100}" -unfused=false -json-out "$out/fuser_bench_base.json"
		echo "   base revision $(cat "$here/base/REVISION")" >>"$out/summary.txt"
		grep -E 'step:' "$out/fuser_bench_base.txt" >>"$out/summary.txt"
	fi
fi
if [ "${SKIP_NCU:-0}" != 1 ]; then
	ncu=$(command -v ncu || echo /usr/local/cuda/bin/ncu)
	first=${BENCH_DIMS%% *}
	step ncu "$out/ncu.log" "$ncu" --clock-control none --metrics dram__bytes_read.sum,dram__bytes_write.sum \
		--kernel-name regex:'^k[0-9]+_' --csv --print-units base --log-file "$out/ncu.csv" \
		"$here/fuser" profile "$BENCH_SPEC" -dims "$first" -kernels "$here/kernels" -json-out "$out/profile.json"
	tbl=$here/../bench/ncu_table.py
	[ -f "$tbl" ] || tbl=$here/ncu_table.py
	step ncu_table "$out/ncu_table.log" python3 "$tbl" "$out/profile.json" "$out/ncu.csv" --out "$out/ncu_traffic"
fi
cat "$out/summary.txt"
exit "$status"
