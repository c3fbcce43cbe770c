#!/usr/bin/env bash
# bench.sh (run on the device from .gpu/ of the /work/main checkout, .gpu
# carried; the bundle suite.sh describes): fuser bench of the prefill
# attention shapes, of the Llama-3-8B prefill layer at 512 and 4096 tokens
# and of the row specs of bench/specs, then bench/compare.py's anchors for
# all three (SDPA flash and cuDNN attention; the layer eager, as a CUDA
# graph and under torch.compile max-autotune, its GEMMs through cuBLAS; the
# row expressions under torch.compile and eager and a copy of as many
# bytes) in the same call. Everything under OUT/bench, archived into
# OUT/bench.tgz.
set -u
here=$(cd "$(dirname "$0")" && pwd)
out=${OUT:?}
p=$(mktemp -d)/bench
mkdir -p "$p"
for f in "$here"/*.gz; do [ -f "$f" ] && gunzip -f "$f"; done
chmod +x "$here"/fuser
nvidia-smi >"$p/nvidia-smi.txt" 2>&1
run() {
	name=$1
	shift
	timeout -k 5 90 "$here/fuser" bench "$@" -kernels "$here/kernels" -unfused=false -json-out "$p/$name.json" >"$p/$name.txt" 2>&1
	echo "bench $name: exit $?" >>"$p/summary.txt"
	grep -E 'fused plan at|step:|k0[0-9]_' "$p/$name.txt" >>"$p/summary.txt"
}
run attn "$here/specs/decode_attention.fu" -dims B=1,S=16384,T=0 -dims B=2,S=4096,T=0 -dims B=8,S=1024,T=0 -reps 20
run layer llama3_8b -dims B=1,S=512,T=0 -dims B=1,S=4096,T=0 -reps 20
run add_rmsnorm "$here/specs/add_rmsnorm.fu" -dims N=1024 -dims N=4096 -dims N=8192 -reps 50
run swiglu "$here/specs/swiglu.fu" -dims N=1024 -dims N=8192 -reps 50
tar czf "$out/bench.tgz" -C "$(dirname "$p")" bench
timeout -k 5 420 env PYTHONUNBUFFERED=1 python3 "$here/compare.py" --prefill-only --compile-modes max-autotune-no-cudagraphs \
	--prefill-attention 1x16384,2x4096,8x1024 --prefill 4096,512 --rows 1024,4096,8192 \
	--ours "$p/layer.json" --more "$p/attn.json" --more "$p/add_rmsnorm.json" --more "$p/swiglu.json" \
	--out "$p/compare" >"$p/compare.log" 2>&1
echo "compare: exit $?" >>"$p/summary.txt"
sed -n '/^prefill attention/,$p' "$p/compare.log" >>"$p/summary.txt"
tar czf "$out/bench.tgz" -C "$(dirname "$p")" bench
cat "$p/summary.txt"
