#!/usr/bin/env bash
# round1.sh (run on the device from .gpu-var/ of the /work/main checkout,
# .gpu-var carried): the warp-specialized wgmma prefill attention against
# f2b5844 (the one before it) in one call (the second try: the first
# hung, its consumers waiting for registers the block did not hold). .gpu-var holds this tree's
# gpu.test and fuser (tag cuda), its kernels of the suite's prefill cases
# and of the bench targets (go run -tags nvrtc ./gpu/cmd/gpukernels -out
# .gpu-var/kernels -cases '^(dec_[a-z0-9]+/small/B=[0-9]+,(S=[0-9]{3,}|S=[0-9]+,T=[0-9]+,L=[0-9]+)|(attn_|cascade|gemma2|gpt2|llama3|mistral|mixtral|paged|qwen|tiny)[a-z0-9_]*/[a-z]+/B=[0-9]+,S=[0-9]{2,})'
# -bench 'SPECS/decode_attention.fu:B=1,S=16384,T=0;SPECS/decode_attention.fu:B=2,S=4096,T=0;SPECS/decode_attention.fu:B=8,S=1024,T=0;llama3_8b:B=1,S=4096,T=0;llama3_8b:B=1,S=512,T=0'),
# base/ the fuser and bench kernels of f2b5844 (the same -bench, -suite=false),
# specs/ bench/specs; executables as built. Steps: the suite's prefill
# cases; the prefill attention shapes and the Llama-3-8B prefill layer,
# base and new in turn, twice; memcheck and racecheck over two prefill
# attention cases (one through the copy engine, one paged); all into
# OUT/r1.tgz.
set -u
t0=$(date +%s)
here=$(cd "$(dirname "$0")" && pwd)
r=$(mktemp -d)/r1; mkdir -p "$r"
chmod +x "$here"/fuser "$here"/gpu.test "$here"/base/fuser
export PYTHONUNBUFFERED=1
sum=$r/summary.txt
save() { tar czf "$OUT/r1.tgz" -C "$(dirname "$r")" r1; cp "$sum" "$OUT/summary.txt"; }
step() { echo "$1: exit $2 after $(($(date +%s) - t0)) s" >>"$sum"; save; }
FUSER_KERNELS=$here/kernels timeout -k 10 120 "$here/gpu.test" -test.v -test.run '^TestSuite$' -kernels "$here/kernels" \
	-cases '^(dec_[a-z0-9]+/small/B=[0-9]+,(S=[0-9]{3,}|S=[0-9]+,T=[0-9]+,L=[0-9]+)|(attn_|cascade|gemma2|gpt2|llama3|mistral|mixtral|paged|qwen|tiny)[a-z0-9_]*/[a-z]+/B=[0-9]+,S=[0-9]{2,})' \
	-summary "$r/suite_summary.json" >"$r/suite.log" 2>&1
step suite $?
grep -E '^    --- (PASS|FAIL)' "$r/suite.log" | sed 's/ (.*//' | sort | uniq -c | sort -rn | head -5 >>"$sum"
grep -E '^    --- FAIL' "$r/suite.log" | head -20 >>"$sum"
for i in 1 2; do
	for side in base new; do
		if [ $side = base ]; then bin=$here/base/fuser; k=$here/base/kernels; else bin=$here/fuser; k=$here/kernels; fi
		timeout -k 10 60 "$bin" bench "$here/specs/decode_attention.fu" -dims B=1,S=16384,T=0 -dims B=2,S=4096,T=0 -dims B=8,S=1024,T=0 \
			-kernels "$k" -unfused=false -reps 20 -json-out "$r/attn_$side.$i.json" >"$r/attn_$side.$i.txt" 2>&1
		step "attention $side.$i" $?
		grep -E 'step:|k0[0-9]_' "$r/attn_$side.$i.txt" >>"$sum"
		timeout -k 10 60 "$bin" bench llama3_8b -dims B=1,S=4096,T=0 -dims B=1,S=512,T=0 \
			-kernels "$k" -unfused=false -reps 20 -json-out "$r/layer_$side.$i.json" >"$r/layer_$side.$i.txt" 2>&1
		step "layer $side.$i" $?
		grep -E 'step:|k0[0-9]_' "$r/layer_$side.$i.txt" >>"$sum"
	done
done
san=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
for tool in memcheck racecheck; do
	FUSER_KERNELS=$here/kernels timeout -k 10 60 "$san" --tool "$tool" --error-exitcode 9 --print-limit 50 "$here/gpu.test" -test.v -test.run '^TestSuite$' \
		-kernels "$here/kernels" -cases '^dec_(c128/small/B=2,S=307|paged16)/' >"$r/$tool.log" 2>&1
	step "$tool" $?
	grep -E 'ERROR SUMMARY|RACECHECK SUMMARY|^    --- (PASS|FAIL)' "$r/$tool.log" | tail -4 >>"$sum"
done
