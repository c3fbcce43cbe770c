#!/usr/bin/env bash
# round2.sh (run on the device from .gpu-var/ of the /work/main checkout,
# .gpu-var carried): the wgmma prefill attention with its K and V tiles by
# the tensor copy engine. .gpu-var holds that tree's gpu.test and fuser
# (tag cuda) and its kernels of the suite's prefill cases and of the bench
# shapes (go run -tags nvrtc ./gpu/cmd/gpukernels -out .gpu/kernels -cases
# '^(dec_[a-z0-9]+/small/B=[0-9]+,(L=[0-9]+,)?S=[0-9]{3,}|llama3_8b/small/B=[0-9]+,S=[0-9]{2,}|gemma2/small/B=[0-9]+,S=[0-9]{2,}|gemma2_softcap/small/B=[0-9]+,S=[0-9]{2,})'
# -bench 'SPECS/decode_attention.fu:B=1,S=16384,T=0;SPECS/decode_attention.fu:B=2,S=4096,T=0;SPECS/decode_attention.fu:B=8,S=1024,T=0;llama3_8b:B=1,S=4096,T=0;llama3_8b:B=1,S=512,T=0'),
# the bench specs in specs/, executables gzipped. The suite's prefill
# cases, memcheck and racecheck over two of them, fuser bench of the
# prefill attention shapes and the Llama-3-8B prefill layer, the SDPA
# anchors of the attention shapes beside them; all into OUT/r2.tgz.
set -u
t0=$(date +%s)
here=$(cd "$(dirname "$0")" && pwd)
r=$(mktemp -d)/r2; mkdir -p "$r"
for f in "$here"/*.gz; do [ -f "$f" ] && gunzip -f "$f"; done
chmod +x "$here"/fuser "$here"/gpu.test
export FUSER_KERNELS=$here/kernels PYTHONUNBUFFERED=1
sum=$r/summary.txt
save() { tar czf "$OUT/r2.tgz" -C "$(dirname "$r")" r2; }
timeout -k 10 150 "$here/gpu.test" -test.v -test.run '^TestSuite$' -kernels "$here/kernels" -summary "$r/suite_summary.json" >"$r/suite.log" 2>&1
echo "suite: exit $? after $(($(date +%s) - t0)) s" >>"$sum"
grep -E '^    --- (PASS|FAIL)' "$r/suite.log" | sed 's/ (.*//' >>"$sum"
save
san=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
for tool in memcheck racecheck; do
	start=$(date +%s)
	timeout -k 10 100 "$san" --tool "$tool" --error-exitcode 9 --print-limit 50 "$here/gpu.test" -test.v -test.run '^TestSuite$' \
		-kernels "$here/kernels" -cases '^dec_(c128|c64)/small/B=2,S=[0-9]{3},' >"$r/$tool.log" 2>&1
	echo "$tool: exit $? after $(($(date +%s) - start)) s" >>"$sum"
	grep -E 'ERROR SUMMARY|RACECHECK SUMMARY|^    --- (PASS|FAIL)' "$r/$tool.log" | tail -4 >>"$sum"
done
save
timeout -k 10 90 "$here/fuser" bench "$here/specs/decode_attention.fu" -dims B=1,S=16384,T=0 -dims B=2,S=4096,T=0 -dims B=8,S=1024,T=0 \
	-unfused=false -reps 20 -json-out "$r/attn.json" >"$r/attn.txt" 2>&1
echo "bench attention: exit $?" >>"$sum"
timeout -k 10 60 "$here/fuser" bench llama3_8b -dims B=1,S=4096,T=0 -dims B=1,S=512,T=0 -unfused=false -reps 20 -json-out "$r/layer.json" >"$r/layer.txt" 2>&1
echo "bench layer: exit $?" >>"$sum"
grep -E 'step:|k0[0-9]_' "$r/layer.txt" >>"$sum"
save
timeout -k 10 120 python3 "$here/compare.py" --prefill-only --prefill-attention 1x16384,2x4096,8x1024 \
	--ours "$r/attn.json" --out "$r/compare" >"$r/compare.log" 2>&1
echo "compare: exit $? after $(($(date +%s) - t0)) s" >>"$sum"
sed -n '/^prefill attention, causal/,$p' "$r/compare.log" >>"$sum"
save
