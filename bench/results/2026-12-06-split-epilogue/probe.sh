#!/usr/bin/env bash
# probe: the fused Llama-3-8B decode step at B1/B16/B64 (HEAD 32b0216), then ncu of the split GEMVs at B64/B16.
set -u
here=$(pwd)/.gpu-var
out=${OUT:?}
gunzip -f "$here/fuser.gz"; chmod +x "$here/fuser" "$here/ncu.sh"
nvidia-smi --query-gpu=name,clocks.max.sm,clocks.max.mem --format=csv,noheader >"$out/smi.txt"
for d in B=1,S=1,T=4096 B=16,S=1,T=4096 B=64,S=1,T=4096; do
  timeout -k 5 90 "$here/fuser" bench llama3_8b -dims $d -kernels "$here/kernels" -reps 30 -unfused=false >>"$out/bench.txt" 2>&1
done
NCU_TIMEOUT=80 "$here/ncu.sh" "$out/ncu" k01_b64:'^k01_gemm':B=64,S=1,T=4096 k03_b64:'^k03_gemm':B=64,S=1,T=4096 k01_b16:'^k01_gemm':B=16,S=1,T=4096
