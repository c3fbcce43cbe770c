#!/usr/bin/env bash
# round.sh (run on the device from .gpu/ of the /work/main checkout, .gpu
# carried): the suite's cases whose plans split a wgmma GEMM, at the
# commit that guards the split kernel's cluster barriers (the only
# kernels it changes: every case of gpu.Cases and of the 32 generated
# specs was planned on the CPU, and these are those with a split), fused
# and unfused, then memcheck and racecheck over
# two of them and the tiny spec's small cases. The bundle: make gpu-bundle
# GEN_SPECS=0 GPU_CASES="$CASES" BENCH_DIMS="B=1,S=512,T=0", gpu.test
# gzipped, everything but gpu.test, kernels and this script left out.
set -u
here=$(cd "$(dirname "$0")" && pwd)
out=${OUT:?}
CASES='^(mat_|dec_c128/small/B=1,S=1000,|dec_cascade128/small/B=2,S=247,|dec_sc256/small/B=1,S=586,|tiny/small/)'
SAN='^(tiny/small/|mat_res_f16_1032x200/|mat_tres_bf16_1032x200/)'
gunzip -f "$here/gpu.test.gz" && chmod +x "$here/gpu.test"
nvidia-smi >"$out/nvidia-smi.txt" 2>&1
start=$(date +%s)
timeout -k 5 130 "$here/gpu.test" -test.v -test.run '^TestSuite$' -kernels "$here/kernels" -cases "$CASES" \
	-summary "$out/suite_summary.json" >"$out/suite.log" 2>&1
echo "suite: exit $? after $(($(date +%s) - start)) s" >"$out/summary.txt"
grep -A12 'summary:' "$out/suite.log" >>"$out/summary.txt"
san=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
for tool in memcheck racecheck; do
	start=$(date +%s)
	timeout -k 5 40 "$san" --tool "$tool" --error-exitcode 9 --print-limit 50 \
		"$here/gpu.test" -test.v -test.run '^TestSuite$' -kernels "$here/kernels" -cases "$SAN" >"$out/$tool.log" 2>&1
	echo "$tool: exit $? after $(($(date +%s) - start)) s" >>"$out/summary.txt"
	grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$out/$tool.log" >>"$out/summary.txt"
done
gzip "$out/suite.log"
cat "$out/summary.txt"
