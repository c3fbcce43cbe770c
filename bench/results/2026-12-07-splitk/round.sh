#!/usr/bin/env bash
# round.sh (on the device from the repository root, .gpu carried as
# build.sh builds it): in one call, so that its ratios count,
#   ab/       fuser bench's fused Llama-3-8B decode step at B1 and B16
#             (T=4096) and GPT-2 small's at B1 and B16 (T=1024, f16), for
#             each tree of build.sh, two rounds in turn;
#   timeline/ split's and split-np's steps kernel by kernel in one graph
#             replay;
#   anchors/  bench/compare.py's PyTorch anchors of the Llama-3-8B layer
#             (eager, eager + CUDA graph, torch.compile
#             max-autotune-no-cudagraphs) at B1 and B16 beside split's
#             step.
#   dram/     ncu's DRAM bytes alone of split's B1 QKV and down GEMVs and
#             of PyTorch's sum and GEMV over the down weight
#             (dram_probe.py), ncu's cache control on and off; DRAM=0
#             leaves them out.
#   ncu/      ncu over split's GPT-2 small B1 kernels k00-k03 (SMALL_NCU=0
#             leaves it out).
# ROUNDS (default "1 2", empty for none) names the A/B rounds; TIMELINE
# (default "split split-np") the trees whose timelines are taken; ANCHORS=0 leaves the
# anchors out. Everything is packed into OUT/round.tgz (a call brings few
# files back); OUT/summary.txt has the step lines.
set -u
h=$(pwd)/${GPU_DIR:-.gpu}
r=$(mktemp -d)/round
mkdir -p "$r/ab" "$r/timeline" "$r/anchors"
sum=$r/summary.txt
trees='split split-np warm narrow'
for t in $trees; do gunzip -f "$h/$t/fuser.gz"; chmod +x "$h/$t/fuser"; done
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader >"$r/smi.txt"
for round in ${ROUNDS-1 2}; do
	for t in $trees; do
		timeout -k 5 60 "$h/$t/fuser" bench llama3_8b -dims B=1,S=1,T=4096 -dims B=16,S=1,T=4096 \
			-kernels "$h/$t/kernels" -reps 30 -unfused=false >"$r/ab/llama.$t.$round.txt" 2>&1
		echo "llama.$t.$round: exit $?" >>"$sum"
		timeout -k 5 40 "$h/$t/fuser" bench gpt2 -dims B=1,S=1,T=1024 -dims B=16,S=1,T=1024 \
			-kernels "$h/$t/kernels" -reps 100 -unfused=false >"$r/ab/gpt2.$t.$round.txt" 2>&1
		echo "gpt2.$t.$round: exit $?" >>"$sum"
		grep -h 'step:' "$r/ab/llama.$t.$round.txt" "$r/ab/gpt2.$t.$round.txt" | sed "s|^|  $t.$round |" >>"$sum"
	done
done
for t in ${TIMELINE-split split-np}; do
	timeout -k 5 60 "$h/$t/fuser" bench llama3_8b -dims B=1,S=1,T=4096 -kernels "$h/$t/kernels" -reps 30 \
		-unfused=false -timeline >"$r/timeline/llama.$t.txt" 2>&1
	timeout -k 5 30 "$h/$t/fuser" bench gpt2 -dims B=1,S=1,T=1024 -kernels "$h/$t/kernels" -reps 100 \
		-unfused=false -timeline >"$r/timeline/gpt2.$t.txt" 2>&1
done
if [ "${ANCHORS:-1}" != 0 ]; then
	timeout -k 5 60 "$h/split/fuser" bench llama3_8b -dims B=1,S=1,T=4096 -dims B=16,S=1,T=4096 \
		-kernels "$h/split/kernels" -reps 30 -unfused=false -json-out "$r/anchors/ours.json" >"$r/anchors/fuser_bench.txt" 2>&1
	timeout -k 5 200 env PYTHONUNBUFFERED=1 python3 "$h/compare.py" --ours "$r/anchors/ours.json" --out "$r/anchors" \
		--batches 1,16 --compile-modes max-autotune-no-cudagraphs --shapes 1x4096 >"$r/anchors/compare.log" 2>&1
	echo "compare.py: exit $?" >>"$sum"
	grep -A12 '^B16_T4096 fused_eager' "$r/anchors/compare.log" >>"$sum"
fi
if [ "${DRAM:-1}" != 0 ]; then
	# DRAM bytes alone (one ncu pass) of split's B1 QKV and down GEMVs
	# and of PyTorch's sum and cuBLAS GEMV over the down weight, with
	# ncu's cache control on (flush before each kernel) and off.
	mkdir -p "$r/dram"
	ncu=$(command -v ncu || echo /usr/local/cuda/bin/ncu)
	for cc in all none; do
		for k in k00 k04; do
			timeout -k 5 60 "$ncu" --clock-control none --cache-control $cc \
				--metrics dram__bytes_read.sum,dram__bytes_write.sum -k "regex:^${k}_gemm" -c 1 \
				"$h/split/fuser" profile llama3_8b -dims B=1,S=1,T=4096 -kernels "$h/split/kernels" \
				>"$r/dram/$k.$cc.txt" 2>&1
			grep -E 'dram__bytes' "$r/dram/$k.$cc.txt" | sed "s|^|  dram.$k.$cc |" >>"$sum"
		done
		timeout -k 5 90 "$ncu" --clock-control none --cache-control $cc --profile-from-start off \
			--metrics dram__bytes_read.sum,dram__bytes_write.sum python3 "$h/dram_probe.py" \
			>"$r/dram/torch.$cc.txt" 2>&1
		grep -E '^  [a-zA-Z_]|dram__bytes' "$r/dram/torch.$cc.txt" | sed "s|^|  dram.torch.$cc |" >>"$sum"
	done
fi
if [ "${SMALL_NCU:-1}" != 0 ]; then
	# ncu over split's GPT-2 small B1 kernels (the step is latency: each
	# runs 6-8 µs over well under 2 µs of bytes), stalls by instruction.
	mkdir -p "$r/ncu"
	ncu=$(command -v ncu || echo /usr/local/cuda/bin/ncu)
	for k in k00 k01 k02 k03; do
		timeout -k 5 90 "$ncu" --clock-control none --section SpeedOfLight --section WarpStateStats \
			--section SchedulerStats --section LaunchStats --section Occupancy --section SourceCounters \
			--metrics sm__cycles_active.avg,gpu__time_duration.sum -k "regex:^${k}_" -c 1 -o "$r/ncu/gpt2.$k" \
			"$h/split/fuser" profile gpt2 -dims B=1,S=1,T=1024 -kernels "$h/split/kernels" >"$r/ncu/gpt2.$k.log" 2>&1
		"$ncu" -i "$r/ncu/gpt2.$k.ncu-rep" --page details >"$r/ncu/gpt2.$k.txt" 2>&1
		"$ncu" -i "$r/ncu/gpt2.$k.ncu-rep" --page source --csv --print-source sass 2>/dev/null | gzip >"$r/ncu/gpt2.$k.sass.csv.gz"
		rm -f "$r/ncu/gpt2.$k.ncu-rep"
		grep -E 'Duration|Elapsed Cycles|Warp Cycles Per Issued|Registers Per|Grid Size|Block Size' "$r/ncu/gpt2.$k.txt" | sed "s|^|  ncu.gpt2.$k |" >>"$sum"
	done
fi
cp "$sum" "$OUT/summary.txt"
tar czf "$OUT/round.tgz" -C "$(dirname "$r")" round
cat "$sum"
