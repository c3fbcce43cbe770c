#!/usr/bin/env bash
# .gpu/ab.sh OUT: on the GPU machine, an A/B round of this bundle (.gpu)
# against another revision's (.gpu/base, make gpu-base BASE=REV), all of
# it in one call so that its ratios count, and all of it returned as one
# archive (the device tool brings back a few files per call): OUT/ab.tgz
# and OUT/summary.txt.
#
#   bench_base.N / bench_new.N   the fused step of BENCH_SPEC at AB_DIMS
#                                (default bench.env's BENCH_DIMS), base and
#                                this tree in turn, AB_ROUNDS times (default
#                                2), -reps AB_REPS (default 30)
#   timeline.txt                 this tree's fused step, kernel by kernel,
#                                in one graph replay (fuser bench -timeline)
#   suite.log, suite_summary.json  gpu.test's suite over AB_CASES (regexps
#                                of the suite cases; none when unset)
#   memcheck.log, racecheck.log  compute-sanitizer over AB_SAN_CASES (none
#                                when unset)
#
# Each step is bounded by AB_TIMEOUT seconds (default 120); the summary
# says what each returned and the step lines of every bench.
set -u
here=$(cd "$(dirname "$0")" && pwd)
out=${1:?usage: .gpu/ab.sh OUT}
mkdir -p "$out"
out=$(cd "$out" && pwd)
# shellcheck source=/dev/null
. "$here/bench.env"
export FUSER_KERNELS="$here/kernels"
r=$(mktemp -d)/ab
mkdir -p "$r"
sum=$r/summary.txt
: >"$sum"
to=${AB_TIMEOUT:-120}
dims=()
for d in ${AB_DIMS:-$BENCH_DIMS}; do dims+=(-dims "$d"); done

# run NAME LOG CMD...: run CMD bounded, its output in LOG, its status in
# the summary; then archive what there is, so that a call cut short still
# returns it.
run() {
	local name=$1 log=$2 start
	shift 2
	start=$(date +%s)
	timeout -k 10 "$to" "$@" >"$log" 2>&1
	echo "$name: exit $? after $(($(date +%s) - start)) s" >>"$sum"
	tar czf "$out/ab.tgz" -C "$(dirname "$r")" ab
	cp "$sum" "$out/summary.txt"
}

if [ ! -x "$here/base/fuser" ]; then
	echo "no .gpu/base: make gpu-base BASE=REV first" >>"$sum"
else
	echo "base $(cat "$here/base/REVISION")" >>"$sum"
	for i in $(seq 1 "${AB_ROUNDS:-2}"); do
		run "bench_base.$i" "$r/bench_base.$i.txt" "$here/base/fuser" bench "$BENCH_SPEC" "${dims[@]}" \
			-kernels "$here/base/kernels" -reps "${AB_REPS:-30}" -unfused=false -json-out "$r/bench_base.$i.json"
		grep -E 'step:' "$r/bench_base.$i.txt" >>"$sum"
		run "bench_new.$i" "$r/bench_new.$i.txt" "$here/fuser" bench "$BENCH_SPEC" "${dims[@]}" \
			-kernels "$here/kernels" -reps "${AB_REPS:-30}" -unfused=false -json-out "$r/bench_new.$i.json"
		grep -E 'step:' "$r/bench_new.$i.txt" >>"$sum"
	done
fi
run timeline "$r/timeline.txt" "$here/fuser" bench "$BENCH_SPEC" "${dims[@]}" -kernels "$here/kernels" \
	-reps "${AB_REPS:-30}" -unfused=false -timeline -json-out "$r/timeline.json"
if [ -n "${AB_CASES:-}" ]; then
	run suite "$r/suite.log" "$here/gpu.test" -test.v -test.run '^TestSuite$' -kernels "$here/kernels" \
		-cases "$AB_CASES" -summary "$r/suite_summary.json"
	grep -E '^(--- FAIL|FAIL|ok|PASS)' "$r/suite.log" | tail -5 >>"$sum"
fi
if [ -n "${AB_SAN_CASES:-}" ]; then
	san=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
	for tool in memcheck racecheck; do
		run "$tool" "$r/$tool.log" "$san" --tool "$tool" --error-exitcode 9 --print-limit 50 \
			"$here/gpu.test" -test.v -test.run '^TestSuite$' -kernels "$here/kernels" -cases "$AB_SAN_CASES"
		grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$r/$tool.log" >>"$sum"
	done
fi
cat "$sum"
