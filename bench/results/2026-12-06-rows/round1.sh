#!/usr/bin/env bash
# round1.sh (run on the device from the /work/main checkout's root, .gpu-var
# carried): the row and element-wise kernels of bench/specs before and after
# the row cache, beside torch.compile and eager PyTorch of the same
# expressions, in one call. .gpu-var holds three builds, each the fuser CLI
# (go build -tags cuda -ldflags='-s -w' ./cmd/fuser) and its kernels
# (go run -tags nvrtc ./gpu/cmd/gpukernels -suite=false -bench
# "bench/specs/add_rmsnorm.fu:N=1024;...N=4096;...N=8192;bench/specs/swiglu.fu:N=1024;...N=8192"):
#   base  a70e936 (no row cache)
#   new1  the row cache, launch bounds (256, 1)
#   new4  the row cache, launch bounds (256, 4) (rowCacheBlocks = 4)
# Each variant's fuser bench runs twice, the variants taking turns; then
# bench/compare.py --rows with new4's JSON; then ncu over base's and new4's
# add_rmsnorm and base's swiglu at N=8192.
set -u
v=.gpu-var
out=${OUT:?}
chmod +x $v/*/fuser
nvidia-smi >"$out/nvidia-smi.txt" 2>&1
for round in 1 2; do
	for b in base new1 new4; do
		for s in add_rmsnorm swiglu; do
			dims="-dims N=1024 -dims N=8192"
			[ $s = add_rmsnorm ] && dims="-dims N=1024 -dims N=4096 -dims N=8192"
			timeout -k 5 60 $v/$b/fuser bench bench/specs/$s.fu $dims -kernels $v/$b/kernels -reps 50 -unfused=false \
				-json-out "$out/$b.$s.$round.json" >"$out/$b.$s.$round.txt" 2>&1
			echo "$b $s round $round: exit $?" >>"$out/summary.txt"
			grep -E 'fused plan at|k00_' "$out/$b.$s.$round.txt" >>"$out/summary.txt"
		done
	done
done
timeout -k 5 240 python3 bench/compare.py --prefill-only --compile-modes "" --rows 1024,4096,8192 \
	--ours "$out/new4.add_rmsnorm.2.json" --more "$out/new4.swiglu.2.json" --out "$out/compare" >"$out/compare.log" 2>&1
echo "compare: exit $?" >>"$out/summary.txt"
sed -n '/^row and element-wise/,/^$/p' "$out/compare.log" >>"$out/summary.txt"
ncu=$(command -v ncu || echo /usr/local/cuda/bin/ncu)
for job in base:add_rmsnorm new4:add_rmsnorm base:swiglu; do
	IFS=: read -r b s <<<"$job"
	timeout -k 5 90 "$ncu" --clock-control none --section SpeedOfLight --section MemoryWorkloadAnalysis \
		--section WarpStateStats --section LaunchStats --section Occupancy \
		--metrics dram__bytes_read.sum,dram__bytes_write.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed \
		-k regex:k00_ -c 1 $v/$b/fuser profile bench/specs/$s.fu -dims N=8192 -kernels $v/$b/kernels \
		>"$out/ncu.$b.$s.txt" 2>&1
	echo "ncu $b $s: exit $?" >>"$out/summary.txt"
	grep -E 'Duration|DRAM Throughput|Memory Throughput|Achieved Occupancy|Registers Per|dram__bytes|Theoretical Occupancy|Warp Cycles Per Issued' "$out/ncu.$b.$s.txt" >>"$out/summary.txt"
done
