#!/usr/bin/env bash
# perf.sh (on the device from the repository root, .gpu carried): the
# speed side of this round, in one call.
#   ab/   .gpu/ab.sh: the fused Llama-3-8B step at decode B1 and B16
#         (T=4096) and prefill (B1, 4096 tokens), this tree and base
#         (768de20, before the templates) in turn, two rounds, and this
#         tree's timeline;
#   alt/  decode B1 with the one-row GEMV on the wgmma ring
#         (plan.GemvCUDACoreRows 0; .gpu/alt: fuser and the B1 kernels of a
#         worktree so patched) against this tree, alternating, twice;
#   ncu/  .gpu/ncu.sh over the QKV, attention and O kernels at B1 and QKV
#         at B16.
# .gpu: the bundle of suite.sh with fuser back, gpu.test, runtime.test and
# genspecs set aside and .gpu/kernels only the bench targets'
# (go run -tags nvrtc ./gpu/cmd/gpukernels -out .gpu/kernels -suite=false
# -bench "llama3_8b:B=1,S=1,T=4096;llama3_8b:B=16,S=1,T=4096;llama3_8b:B=1,S=4096,T=0;");
# make gpu-base BASE=768de20 with the same BENCH_DIMS (.gpu/base); .gpu/alt
# from a worktree of this commit with plan.GemvCUDACoreRows 0:
# go build -tags cuda -ldflags='-s -w' -o .gpu/alt/fuser ./cmd/fuser and
# go run -tags nvrtc ./gpu/cmd/gpukernels -out .gpu/alt/kernels -suite=false
# -bench "llama3_8b:B=1,S=1,T=4096;"; executables gzipped.
set -u
here=$(pwd)/.gpu
out=${OUT:?}
for f in "$here"/*.gz "$here"/base/*.gz "$here"/alt/*.gz; do [ -f "$f" ] && gunzip -f "$f"; done
chmod +x "$here"/fuser "$here"/ab.sh "$here"/ncu.sh "$here"/base/fuser "$here"/alt/fuser
AB_ROUNDS=2 AB_REPS=50 AB_TIMEOUT=90 "$here/ab.sh" "$out/ab"
mkdir -p "$out/alt"
for i in 1 2; do
	timeout -k 5 60 "$here/alt/fuser" bench llama3_8b -dims B=1,S=1,T=4096 -kernels "$here/alt/kernels" \
		-reps 50 -unfused=false >"$out/alt/bench_alt.$i.txt" 2>&1
	timeout -k 5 60 "$here/fuser" bench llama3_8b -dims B=1,S=1,T=4096 -kernels "$here/kernels" \
		-reps 50 -unfused=false >"$out/alt/bench_new.$i.txt" 2>&1
done
grep -H "step:" "$out"/alt/*.txt
NCU_TIMEOUT=60 "$here/ncu.sh" "$out/ncu" k01_b1:'^k01_gemm':B=1,S=1,T=4096 k02_b1:'^k02_att':B=1,S=1,T=4096 \
	k03_b1:'^k03_gemm':B=1,S=1,T=4096 k01_b16:'^k01_gemm':B=16,S=1,T=4096
