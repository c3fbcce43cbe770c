#!/usr/bin/env bash
# anchors.sh (on the device from the repository root, .gpu carried as
# build.sh builds it, or the GPU_DIR it names; after round.sh on the same
# machine): this tree's fused steps beside PyTorch's in one call.
#   llama/  fuser bench's fused Llama-3-8B decode step at B1 and B16
#           (T=4096), then bench/compare.py's anchors: PyTorch eager, eager
#           + CUDA graph and torch.compile max-autotune-no-cudagraphs of
#           the same layer, and cuDNN / SDPA decode attention at B1 L4096;
#   small/  the same for GPT-2 small (specs/gpt2.fu, f16) at B1 and B16
#           over 1024 cached tokens, against compare.py --small.
set -u
h=$(pwd)/${GPU_DIR:-.gpu}
for f in "$h"/*.gz; do [ -f "$f" ] && gunzip -f "$f"; done
[ -d "$h/kernels" ] || tar xzf "$h/kernels.tgz" -C "$h"
chmod +x "$h"/fuser
export FUSER_KERNELS="$h/kernels"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader >"$OUT/smi.txt"
l=$OUT/llama s=$OUT/small
mkdir -p "$l" "$s"
timeout -k 5 150 "$h/fuser" bench llama3_8b -dims B=1,S=1,T=4096 -dims B=16,S=1,T=4096 \
	-kernels "$h/kernels" -reps 30 -unfused=false -json-out "$l/ours.json" >"$l/fuser_bench.txt" 2>&1
echo "fuser bench llama3_8b: exit $?" >"$OUT/summary.txt"
timeout -k 5 200 env PYTHONUNBUFFERED=1 python3 "$h/compare.py" --ours "$l/ours.json" --out "$l" --batches 1,16 \
	--compile-modes max-autotune-no-cudagraphs --shapes 1x4096 >"$l/compare.log" 2>&1
echo "compare.py llama3_8b: exit $?" >>"$OUT/summary.txt"
timeout -k 5 60 "$h/fuser" bench gpt2 -dims B=1,S=1,T=1024 -dims B=16,S=1,T=1024 -kernels "$h/kernels" \
	-reps 100 -unfused=false -timeline -json-out "$s/ours.json" >"$s/fuser_bench.txt" 2>&1
echo "fuser bench gpt2: exit $?" >>"$OUT/summary.txt"
timeout -k 5 120 python3 "$h/compare.py" --prefill-only --compile-modes "" --small 1x1024,16x1024 \
	--ours "$s/ours.json" --out "$s" >"$s/compare.log" 2>&1
echo "compare.py --small: exit $?" >>"$OUT/summary.txt"
grep -hE "fused plan|step:" "$l/fuser_bench.txt" "$s/fuser_bench.txt" >>"$OUT/summary.txt"
for f in "$l/ours.json" "$s/ours.json" "$l/compare.json" "$s/compare.json"; do [ -f "$f" ] && gzip -f "$f"; done
cat "$OUT/summary.txt"
