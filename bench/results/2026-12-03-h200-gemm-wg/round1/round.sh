#!/usr/bin/env bash
# round.sh (as run on the device from .gpu-var/ of the /work/main checkout,
# with .gpu-var carried): the wgmma GEMM's first device round. .gpu-var is
# the bundle of its first version (perf/round.sh's new, and a launch that
# asks for the ring but takes the mma.sync path still declaring that
# path's static shared memory: the fault this round found), built with
# make gpu-bundle
# GEN_SPECS=0 GPU_CASES='^(mat_|llama3_8b/|tiny/)' BENCH_DIMS='B=1,S=4096,T=0
# B=1,S=512,T=0' and make gpu-base BASE=main with the same BENCH_DIMS, its
# executables gzipped (gzip -9), .gpu/layerstep left out. It runs the
# suite's matmul, Llama-3-8B and tiny cases (fused and unfused), memcheck
# and racecheck over the tiny spec's small cases and a matmul case (at most
# 64 rows: neither reaches the new path, as it turned out), then fuser bench of the Llama-3-8B prefill layer at this tree and at
# main (base/), both in this call.
set -u
here=$(cd "$(dirname "$0")" && pwd)
out=${OUT:?}
r=$(mktemp -d)/round
mkdir -p "$r"
sum=$r/summary.txt
nvidia-smi --query-gpu=name,clocks.max.sm,clocks.max.mem --format=csv,noheader >"$sum"
save() { tar czf "$out/round.tgz" -C "$(dirname "$r")" round; cp "$sum" "$out/summary.txt"; }
step() {
	local name=$1 limit=$2
	shift 2
	local start=$(date +%s)
	timeout -k 10 "$limit" "$@" >"$r/$name.log" 2>&1
	echo "$name: exit $? after $(($(date +%s) - start)) s" >>"$sum"
	save
}
for f in "$here"/*.gz "$here"/base/*.gz; do [ -f "$f" ] && gunzip -f "$f"; done
chmod +x "$here"/fuser "$here"/gpu.test "$here"/base/fuser
export FUSER_KERNELS="$here/kernels"
step suite 240 "$here/gpu.test" -test.v -test.run '^TestSuite$' -kernels "$here/kernels" \
	-cases '^(mat_|llama3_8b/|tiny/)' -summary "$r/suite_summary.json"
grep -E '^(--- FAIL|FAIL|ok|PASS)' "$r/suite.log" | tail -20 >>"$sum"
sed -n '/summary:/,/^[-=]/p' "$r/suite.log" | head -30 >>"$sum"
san=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
for tool in memcheck racecheck; do
	step "$tool" 120 "$san" --tool "$tool" --error-exitcode 9 --print-limit 50 "$here/gpu.test" -test.v \
		-test.run '^TestSuite$' -kernels "$here/kernels" -cases '^(tiny/small/|mat_res_bf16_4104x120/)'
	grep -E 'ERROR SUMMARY|RACECHECK SUMMARY|^(ok|FAIL|PASS)' "$r/$tool.log" | tail -4 >>"$sum"
done
for v in new base; do
	bin=$here/fuser kern=$here/kernels
	[ $v = base ] && bin=$here/base/fuser kern=$here/base/kernels
	step "bench_$v" 150 "$bin" bench llama3_8b -dims B=1,S=4096,T=0 -dims B=1,S=512,T=0 -kernels "$kern" \
		-reps 20 -unfused=false -json-out "$r/bench_$v.json"
	grep -E 'step:|k0[0-9]_' "$r/bench_$v.log" >>"$sum"
done
save
