#!/usr/bin/env bash
# perf.sh (on the device from the repository root, .gpu-var carried): three
# trees in one call, so that their ratios count:
#   base  3e21e7c, before the decode attention's batched split merge;
#   mid   e925a6e, the merge (6a8308b) landed;
#   new   this tree: one-row GEMVs in narrow tiles, K unsplit (05d03bf,
#         010aa82).
#   ab/        fuser bench of the fused Llama-3-8B decode step at B1 and B16
#              (T=4096), base, mid and new in turn, two rounds;
#   gpt2/      the same for GPT-2 small (f16) at B1 over 1024 tokens, mid
#              and new, two rounds;
#   timeline/  new's B1 steps, kernel by kernel, in one graph replay;
#   dram_k0N.txt  ncu's DRAM bytes alone (one pass) of new's B1 QKV, O and
#              gate/up GEMVs;
#   ncu/       gpu/ncu.sh over new's B1 QKV GEMV and decode attention and
#              its B16 QKV GEMV.
# .gpu-var: fuser (go build -tags cuda -ldflags='-s -w') and kernels
#   go run -tags nvrtc ./gpu/cmd/gpukernels -out DIR -suite=false -bench
#   'llama3_8b:B=1,S=1,T=4096;llama3_8b:B=16,S=1,T=4096;llama3_8b:B=64,S=1,T=4096;gpt2:B=1,S=1,T=1024;gpt2:B=16,S=1,T=1024;'
# of each tree (base/ without gpt2's), gpu/ncu.sh, bench/compare.py,
# bench/ncu_stalls.py, bench/ncu_table.py and a bench.env naming llama3_8b;
# executables gzipped. OUT/perf.tgz, refreshed after every step,
# OUT/summary.txt and OUT/ncu.
set -u
h=$(pwd)/.gpu-var
for f in "$h"/*.gz "$h"/base/*.gz "$h"/mid/*.gz; do [ -f "$f" ] && gunzip -f "$f"; done
chmod +x "$h"/fuser "$h"/base/fuser "$h"/mid/fuser "$h"/ncu.sh
r=$(mktemp -d)/perf
mkdir -p "$r/ab" "$r/gpt2" "$r/timeline"
sum=$r/summary.txt
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader >"$r/smi.txt"
dir() { if [ "$1" = new ]; then echo "$h"; else echo "$h/$1"; fi; }
# step NAME LOG TIMEOUT CMD...: CMD bounded, its output in LOG, its status
# and step lines in the summary, then everything archived.
step() {
	local name=$1 log=$2 to=$3 start
	shift 3
	start=$(date +%s)
	timeout -k 5 "$to" "$@" >"$log" 2>&1
	echo "$name: exit $? after $(($(date +%s) - start)) s" >>"$sum"
	grep -E 'step:' "$log" | sed "s|^|  $name |" >>"$sum"
	tar czf "$OUT/perf.tgz" -C "$(dirname "$r")" perf
	cp "$sum" "$OUT/summary.txt"
}
for i in 1 2; do
	for t in base mid new; do
		d=$(dir $t)
		step "llama.$t.$i" "$r/ab/$t.$i.txt" 60 "$d/fuser" bench llama3_8b -dims B=1,S=1,T=4096 -dims B=16,S=1,T=4096 \
			-kernels "$d/kernels" -reps 30 -unfused=false
	done
done
for i in 1 2; do
	for t in mid new; do
		d=$(dir $t)
		step "gpt2.$t.$i" "$r/gpt2/$t.$i.txt" 40 "$d/fuser" bench gpt2 -dims B=1,S=1,T=1024 \
			-kernels "$d/kernels" -reps 100 -unfused=false
	done
done
step timeline.llama "$r/timeline/llama.txt" 40 "$h/fuser" bench llama3_8b -dims B=1,S=1,T=4096 -kernels "$h/kernels" \
	-reps 30 -unfused=false -timeline -json-out "$r/timeline/llama.json"
step timeline.gpt2 "$r/timeline/gpt2.txt" 30 "$h/fuser" bench gpt2 -dims B=1,S=1,T=1024 -kernels "$h/kernels" \
	-reps 100 -unfused=false -timeline -json-out "$r/timeline/gpt2.json"
gzip -f "$r"/timeline/*.json
tar czf "$OUT/perf.tgz" -C "$(dirname "$r")" perf
# The fused GEMVs' extra DRAM writes (about 2 MB a kernel in every ncu
# report on file, against kilobytes of outputs; the decode attention's
# are 1.5 KB): with the two DRAM counters alone ncu needs one pass, so no
# replay restores the kernel's buffers before it. If the extra bytes are
# those restores' dirty lines, evicted by the GEMV's stream, they vanish.
for k in k01 k03 k05; do
	step "dram.$k" "$r/dram_$k.txt" 60 "$(command -v ncu || echo /usr/local/cuda/bin/ncu)" --clock-control none \
		--metrics dram__bytes_read.sum,dram__bytes_write.sum -k "regex:^${k}_gemm" -c 1 \
		"$h/fuser" profile llama3_8b -dims B=1,S=1,T=4096 -kernels "$h/kernels"
	grep -E 'dram__bytes|replay|pass' "$r/dram_$k.txt" | sed "s|^|  dram.$k |" >>"$sum"
done
# Last, as the call's time allows: OUT/ncu/ncu.tgz after every kernel.
NCU_TIMEOUT=50 "$h/ncu.sh" "$OUT/ncu" k01_b1:'^k01_gemm':B=1,S=1,T=4096 \
	k02_b1:'^k02_att':B=1,S=1,T=4096 k01_b16:'^k01_gemm':B=16,S=1,T=4096 >"$r/ncu.log" 2>&1
echo "ncu: done" >>"$sum"
cp "$sum" "$OUT/summary.txt"
cat "$sum"
