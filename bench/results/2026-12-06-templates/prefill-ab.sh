#!/usr/bin/env bash
# prefill-ab.sh (on the device from the repository root, .gpu carried as
# for perf.sh): the fused Llama-3-8B prefill (B1, 4096 tokens) of this tree
# and base (768de20) alternating, this tree first, three rounds, and ncu's
# duration of the gate/up GEMM (k05) of each; OUT/prefill-ab.tgz.
set -u
here=$(pwd)/.gpu
out=${OUT:?}
r=$(mktemp -d)/prefill-ab
mkdir -p "$r"
for f in "$here"/*.gz "$here"/base/*.gz; do [ -f "$f" ] && gunzip -f "$f"; done
chmod +x "$here"/fuser "$here"/base/fuser
for i in 1 2 3; do
	for side in new base; do
		dir=$here
		[ "$side" = base ] && dir=$here/base
		timeout -k 5 60 "$dir/fuser" bench llama3_8b -dims B=1,S=4096,T=0 -kernels "$dir/kernels" \
			-reps 50 -unfused=false >"$r/bench_$side.$i.txt" 2>&1
		echo "$side.$i: $(grep -E '^  k05_|step:' "$r/bench_$side.$i.txt" | tr -s ' ' | tr '\n' ' ')" >>"$r/summary.txt"
	done
done
ncu=$(command -v ncu || echo /usr/local/cuda/bin/ncu)
for side in new base; do
	dir=$here
	[ "$side" = base ] && dir=$here/base
	timeout -k 5 90 "$ncu" --section SpeedOfLight -k regex:^k05_gemm -c 1 \
		"$dir/fuser" profile llama3_8b -dims B=1,S=4096,T=0 -kernels "$dir/kernels" >"$r/ncu_k05_$side.txt" 2>&1
	echo "ncu $side: $(grep -E 'Duration|Elapsed Cycles|SM Frequency' "$r/ncu_k05_$side.txt" | tr -s ' ' | tr '\n' ' ')" >>"$r/summary.txt"
done
cat "$r/summary.txt"
tar czf "$out/prefill-ab.tgz" -C "$(dirname "$r")" prefill-ab
