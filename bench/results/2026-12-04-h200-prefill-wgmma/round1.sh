#!/usr/bin/env bash
# round1.sh (run on the device from .gpu-var/ of the /work/main checkout,
# .gpu-var carried): the first device run of the wgmma prefill attention.
# .gpu-var is make gpu-bundle GEN_SPECS=0
# GPU_CASES='^(dec_|attn_|llama3_8b/small|gemma2/small|tiny/small)' plus the
# kernels of bench/specs/decode_attention.fu at B=1,S=16384 / B=2,S=4096 /
# B=8,S=1024 (T=0) and of llama3_8b at B=1,S=4096,T=0 and B=1,S=512,T=0
# (go run -tags nvrtc ./gpu/cmd/gpukernels -out .gpu/kernels -bench ...
# -suite=false), the spec in specs/, executables gzipped, layerstep left out.
# The suite's cases of the bundle, the sanitizers over two prefill attention
# cases, fuser bench of the prefill attention shapes and the Llama-3-8B
# prefill layer, and bench/compare.py's prefill anchors beside them.
set -u
t0=$(date +%s)
here=$(cd "$(dirname "$0")" && pwd)
out=${OUT:?}
for f in "$here"/*.gz; do [ -f "$f" ] && gunzip -f "$f"; done
chmod +x "$here"/fuser "$here"/gpu.test
export FUSER_KERNELS=$here/kernels PYTHONUNBUFFERED=1
sum=$out/summary.txt
nvidia-smi >"$out/nvidia-smi.txt" 2>&1
timeout -k 10 240 "$here/gpu.test" -test.v -test.run '^TestSuite$' -kernels "$here/kernels" -summary "$out/suite_summary.json" >"$out/suite.log" 2>&1
echo "suite: exit $? after $(($(date +%s) - t0)) s" >>"$sum"
grep -E '^(--- FAIL|FAIL|ok|PASS)|^    --- FAIL' "$out/suite.log" | head -40 >>"$sum"
sed -n '/summary:/,/^[-=]/p' "$out/suite.log" | head -20 >>"$sum"
san=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
for tool in memcheck racecheck; do
	start=$(date +%s)
	timeout -k 10 120 "$san" --tool "$tool" --error-exitcode 9 --print-limit 50 "$here/gpu.test" -test.run '^TestSuite$' \
		-kernels "$here/kernels" -cases '^dec_(paged16|c64)/small/B=2,S=[0-9]{3},' >"$out/$tool.log" 2>&1
	echo "$tool: exit $? after $(($(date +%s) - start)) s" >>"$sum"
	grep -E 'ERROR SUMMARY|RACECHECK SUMMARY|^ok|FAIL' "$out/$tool.log" | tail -4 >>"$sum"
done
start=$(date +%s)
timeout -k 10 90 "$here/fuser" bench "$here/specs/decode_attention.fu" -dims B=1,S=16384,T=0 -dims B=2,S=4096,T=0 -dims B=8,S=1024,T=0 \
	-unfused=false -reps 20 -json-out "$out/attn.json" >"$out/attn.txt" 2>&1
echo "bench attention: exit $? after $(($(date +%s) - start)) s" >>"$sum"
start=$(date +%s)
timeout -k 10 60 "$here/fuser" bench llama3_8b -dims B=1,S=4096,T=0 -dims B=1,S=512,T=0 -unfused=false -reps 20 -json-out "$out/layer.json" >"$out/layer.txt" 2>&1
echo "bench layer: exit $? after $(($(date +%s) - start)) s" >>"$sum"
grep -E 'step:|k0[0-9]_' "$out/layer.txt" >>"$sum"
left=$((570 - ($(date +%s) - t0)))
if [ "$left" -gt 60 ]; then
	start=$(date +%s)
	timeout -k 10 "$left" python3 "$here/compare.py" --prefill-only --prefill-attention 1x16384,2x4096,8x1024 --prefill 4096,512 \
		--ours "$out/layer.json" --more "$out/attn.json" --out "$out/compare" >"$out/compare.log" 2>&1
	echo "compare: exit $? after $(($(date +%s) - start)) s" >>"$sum"
	sed -n '/^prefill attention/,$p' "$out/compare.log" >>"$sum"
else
	echo "compare: left out at $(($(date +%s) - t0)) s" >>"$sum"
fi
