#!/usr/bin/env bash
# round1.sh (run on the device from .gpu/ of the /work/main checkout, .gpu
# carried): the wgmma GEMM with K split over a cluster's blocks against the
# revision before it, in one call. The bundle: make gpu-bundle GEN_SPECS=32
# BENCH_DIMS="B=1,S=512,T=0 B=1,S=4096,T=0" and make gpu-base BASE=27bb5c2
# with the same BENCH_DIMS, executables gzipped, .gpu/layerstep left out;
# probe.cu beside this script. Steps:
#   probe.txt      the device's resident clusters of 256-thread blocks with
#                  the GEMM's shared memory, by cluster size
#                  (cudaOccupancyMaxActiveClusters)
#   ab/            gpu/ab.sh: the fused Llama-3-8B prefill layer at 512 and
#                  4096 tokens, base and this tree alternately twice, this
#                  tree's timeline, the suite's matmul, Llama-3-8B and
#                  Gemma-2 cases (fused and unfused), memcheck and
#                  racecheck over two split cases
#   compare/       bench/compare.py's prefill anchors (PyTorch eager,
#                  torch.compile, cuBLAS GEMMs) with this tree's layer
set -u
t0=$(date +%s)
here=$(cd "$(dirname "$0")" && pwd)
out=${OUT:?}
for f in "$here"/*.gz "$here"/base/*.gz; do [ -f "$f" ] && gunzip -f "$f"; done
chmod +x "$here"/fuser "$here"/gpu.test "$here"/base/fuser "$here"/*.sh
nvcc -arch=sm_90a -o /tmp/probe "$here/probe.cu" && /tmp/probe >"$out/probe.txt" 2>&1
nvidia-smi >"$out/nvidia-smi.txt" 2>&1
AB_DIMS="B=1,S=512,T=0 B=1,S=4096,T=0" AB_ROUNDS=2 AB_REPS=20 AB_TIMEOUT=140 \
	AB_CASES='^(mat_|llama3_8b/|gemma2/)' AB_SAN_CASES='^(mat_res_f16_1032x200|mat_tres_bf16_1032x200)/' \
	"$here/ab.sh" "$out/ab"
left=$((570 - ($(date +%s) - t0)))
if [ "$left" -lt 60 ]; then
	echo "compare: left out, $left s left" >"$out/compare_summary.txt"
	exit 0
fi
mkdir -p /tmp/cmp
tar xzf "$out/ab/ab.tgz" -C /tmp/cmp
timeout -k 10 "$left" env PYTHONUNBUFFERED=1 python3 "$here/compare.py" --prefill-only --prefill 512,4096 \
	--ours /tmp/cmp/ab/bench_new.2.json --out /tmp/cmp/compare >/tmp/cmp/compare.log 2>&1
echo "compare: exit $? after $(($(date +%s) - t0)) s" >"$out/compare_summary.txt"
tar czf "$out/compare.tgz" -C /tmp/cmp compare compare.log
