#!/usr/bin/env bash
# round2.sh (run on the device from .gpu-var/ of the /work/main checkout,
# .gpu-var carried): the consumers of the wgmma prefill attention taking
# turns to issue their wgmmas (ping-pong), against a82cdd6 (2003eb6's
# kernels) in one short call. .gpu-var holds the gpu.test and fuser of
# a82cdd6 with round2/pingpong.patch applied (not kept in the tree)
# (tag cuda), their kernels of the suite's prefill cases and of the bench
# targets (go run -tags nvrtc ./gpu/cmd/gpukernels -out .gpu-var/kernels
# -cases '^(dec_[a-z0-9]+/small/B=[0-9]+,S=[0-9]{3,}|(attn_|cascade|gemma2|gpt2|llama3|mistral|mixtral|paged|qwen|tiny)[a-z0-9_]*/[a-z]+/B=[0-9]+,S=[0-9]{2,})'
# -bench 'SPECS/decode_attention.fu:B=1,S=16384,T=0;SPECS/decode_attention.fu:B=2,S=4096,T=0;SPECS/decode_attention.fu:B=8,S=1024,T=0;llama3_8b:B=1,S=4096,T=0'),
# base/ the fuser and bench kernels of a82cdd6 (the same -bench,
# -suite=false), specs/ bench/specs. Steps: the suite's prefill cases;
# the prefill attention shapes base, new, base, new; the Llama-3-8B
# prefill layer at 4096 tokens base and new; all into OUT/r2.tgz.
set -u
t0=$(date +%s)
here=$(cd "$(dirname "$0")" && pwd)
r=$(mktemp -d)/r2; mkdir -p "$r"
chmod +x "$here"/fuser "$here"/gpu.test "$here"/base/fuser
sum=$r/summary.txt
save() { tar czf "$OUT/r2.tgz" -C "$(dirname "$r")" r2; cp "$sum" "$OUT/summary.txt"; }
step() { echo "$1: exit $2 after $(($(date +%s) - t0)) s" >>"$sum"; save; }
FUSER_KERNELS=$here/kernels timeout -k 5 90 "$here/gpu.test" -test.v -test.run '^TestSuite$' -kernels "$here/kernels" \
	-cases '^(dec_[a-z0-9]+/small/B=[0-9]+,S=[0-9]{3,}|(attn_|cascade|gemma2|gpt2|llama3|mistral|mixtral|paged|qwen|tiny)[a-z0-9_]*/[a-z]+/B=[0-9]+,S=[0-9]{2,})' \
	-summary "$r/suite_summary.json" >"$r/suite.log" 2>&1
step suite $?
grep -cE '^    --- PASS' "$r/suite.log" >>"$sum"
grep -E '^    --- FAIL' "$r/suite.log" | head -20 >>"$sum"
for i in 1 2; do
	for side in base new; do
		if [ $side = base ]; then bin=$here/base/fuser; k=$here/base/kernels; else bin=$here/fuser; k=$here/kernels; fi
		timeout -k 5 30 "$bin" bench "$here/specs/decode_attention.fu" -dims B=1,S=16384,T=0 -dims B=2,S=4096,T=0 -dims B=8,S=1024,T=0 \
			-kernels "$k" -unfused=false -reps 20 -json-out "$r/attn_$side.$i.json" >"$r/attn_$side.$i.txt" 2>&1
		step "attention $side.$i" $?
		grep -E 'k01_' "$r/attn_$side.$i.txt" >>"$sum"
	done
done
for side in base new; do
	if [ $side = base ]; then bin=$here/base/fuser; k=$here/base/kernels; else bin=$here/fuser; k=$here/kernels; fi
	timeout -k 5 30 "$bin" bench llama3_8b -dims B=1,S=4096,T=0 -kernels "$k" -unfused=false -reps 20 \
		-json-out "$r/layer_$side.json" >"$r/layer_$side.txt" 2>&1
	step "layer $side" $?
	grep -E 'step:|k02_' "$r/layer_$side.txt" >>"$sum"
done
