#!/usr/bin/env bash
# round.sh (on the device from the repository root, .gpu-var carried as
# build.sh builds it): in one call, so that its ratios count,
#   ab/        fuser bench's fused Llama-3-8B decode step at B1 and B16
#              (T=4096) and GPT-2 small's at B1 and B16 (T=1024, f16) for
#              each tree of build.sh, two rounds in turn (ROUNDS);
#   timeline/  each tree's B1 steps kernel by kernel in one graph replay;
#   more/      base's Mistral, Gemma-2 and Qwen steps at B1 T=4096, with
#              their timelines (MORE=0 leaves them out);
#   anchors/   bench/compare.py's PyTorch eager and eager + CUDA graph of
#              the GPT-2 small layer at B1 and B16 beside base's step
#              (ANCHORS=0 leaves them out);
#   ncu/       ncu's warp states and stall sampling of the GPT-2 small B1
#              decode attention of base and both (NCU=0 leaves it out).
# Everything is packed into OUT/round.tgz; OUT/summary.txt has the step
# lines.
set -u
h=$(pwd)/${GPU_DIR:-.gpu-var}
r=$(mktemp -d)/round
mkdir -p "$r/ab" "$r/timeline" "$r/more" "$r/anchors" "$r/ncu"
sum=$r/summary.txt
trees='base wide mst64 both'
for t in $trees; do gunzip -f "$h/$t/fuser.gz"; chmod +x "$h/$t/fuser"; cat "$h/$t/launch.txt" | sed "s|^|  $t |" >>"$sum"; done
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
for t in ${TIMELINE-$trees}; do
	timeout -k 5 60 "$h/$t/fuser" bench llama3_8b -dims B=1,S=1,T=4096 -kernels "$h/$t/kernels" -reps 30 \
		-unfused=false -timeline >"$r/timeline/llama.$t.txt" 2>&1
	timeout -k 5 30 "$h/$t/fuser" bench gpt2 -dims B=1,S=1,T=1024 -kernels "$h/$t/kernels" -reps 100 \
		-unfused=false -timeline >"$r/timeline/gpt2.$t.txt" 2>&1
	grep -h 'attention_attention  \|step:' "$r/timeline/llama.$t.txt" "$r/timeline/gpt2.$t.txt" | sed "s|^|  timeline.$t |" >>"$sum"
done
if [ "${MORE:-1}" != 0 ]; then
	for s in mistral_swa gemma2 qwen_bias; do
		timeout -k 5 60 "$h/base/fuser" bench $s -dims B=1,S=1,T=4096 -kernels "$h/base/kernels" -reps 30 \
			-unfused=false -timeline >"$r/more/$s.txt" 2>&1
		echo "more.$s: exit $?" >>"$sum"
		grep -h 'step:' "$r/more/$s.txt" | sed "s|^|  $s |" >>"$sum"
	done
fi
if [ "${ANCHORS:-1}" != 0 ]; then
	timeout -k 5 60 "$h/base/fuser" bench gpt2 -dims B=1,S=1,T=1024 -dims B=16,S=1,T=1024 -kernels "$h/base/kernels" \
		-reps 100 -unfused=false -json-out "$r/anchors/ours.json" >"$r/anchors/fuser_bench.txt" 2>&1
	timeout -k 5 120 python3 "$h/compare.py" --prefill-only --compile-modes "" --small 1x1024,16x1024 \
		--ours "$r/anchors/ours.json" --out "$r/anchors" >"$r/anchors/compare.log" 2>&1
	echo "compare.py --small: exit $?" >>"$sum"
	grep -A8 'small' "$r/anchors/compare.log" | head -30 >>"$sum"
fi
if [ "${NCU:-1}" != 0 ]; then
	ncu=$(command -v ncu || echo /usr/local/cuda/bin/ncu)
	for t in base both; do
		timeout -k 5 90 "$ncu" --clock-control none --section SpeedOfLight --section WarpStateStats \
			--section LaunchStats --section Occupancy --section SourceCounters \
			--metrics sm__cycles_active.avg,sm__cycles_active.max,gpu__time_duration.sum -k 'regex:attention' -c 1 \
			-o "$r/ncu/gpt2.$t" "$h/$t/fuser" profile gpt2 -dims B=1,S=1,T=1024 -kernels "$h/$t/kernels" >"$r/ncu/gpt2.$t.log" 2>&1
		"$ncu" -i "$r/ncu/gpt2.$t.ncu-rep" --page details >"$r/ncu/gpt2.$t.txt" 2>&1
		"$ncu" -i "$r/ncu/gpt2.$t.ncu-rep" --page source --csv --print-source sass 2>/dev/null | gzip >"$r/ncu/gpt2.$t.sass.csv.gz"
		rm -f "$r/ncu/gpt2.$t.ncu-rep"
		grep -E 'Duration|sm__cycles_active|Warp Cycles Per Issued|Grid Size|Block Size' "$r/ncu/gpt2.$t.txt" | sed "s|^|  ncu.$t |" >>"$sum"
	done
fi
cp "$sum" "$OUT/summary.txt"
tar czf "$OUT/round.tgz" -C "$(dirname "$r")" round
cat "$sum"
