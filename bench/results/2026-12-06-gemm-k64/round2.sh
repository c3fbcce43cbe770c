#!/usr/bin/env bash
# round2.sh (run on the device from .gpu/ of the /work/main checkout, .gpu
# carried): the wgmma GEMM's tile epilogue unrolling rows only where its
# elements read memory at their columns (tileEpiRowUnroll) against round
# 1's tree (stages of 64 positions, every batch unrolled), in one call.
# The bundle: make gpu-bundle GEN_SPECS=0 GPU_CASES='^(mat_|llama3_8b/)'
# BENCH_DIMS="B=1,S=512,T=0 B=1,S=4096,T=0"; .gpu/base is round 1's
# .gpu/fuser and .gpu/kernels; executables gzipped, .gpu/layerstep left
# out. Steps:
#   ab/     gpu/ab.sh: the fused Llama-3-8B prefill layer at 512 and 4096
#           tokens, base and this tree alternately twice, this tree's
#           timeline, the suite's matmul and Llama-3-8B cases (fused and
#           unfused), memcheck and racecheck over two split cases
#   ncu/    time left, gpu/ncu.sh over this tree's QKV and gate/up GEMMs at 512 tokens
set -u
t0=$(date +%s)
here=$(cd "$(dirname "$0")" && pwd)
out=${OUT:?}
for f in "$here"/*.gz "$here"/base/*.gz; do [ -f "$f" ] && gunzip -f "$f"; done
chmod +x "$here"/fuser "$here"/gpu.test "$here"/base/fuser "$here"/*.sh
nvidia-smi >"$out/nvidia-smi.txt" 2>&1
AB_DIMS="B=1,S=512,T=0 B=1,S=4096,T=0" AB_ROUNDS=2 AB_REPS=20 AB_TIMEOUT=140 \
	AB_CASES='^(mat_|llama3_8b/)' AB_SAN_CASES='^(mat_res_f16_1032x200|mat_tres_bf16_1032x200)/' \
	"$here/ab.sh" "$out/ab"
left=$((585 - ($(date +%s) - t0)))
if [ "$left" -ge 60 ]; then
	NCU_TIMEOUT=$((left - 10)) "$here/ncu.sh" "$out/ncu" k01_512:'^k01_gemm':B=1,S=512,T=0 k05_512:'^k05_gemm':B=1,S=512,T=0
fi
