#!/usr/bin/env bash
# .gpu/ncu.sh OUT NAME:REGEX:DIMS...: on the GPU machine, Nsight Compute over
# single kernels of the fused step of BENCH_SPEC (bench.env), one for each
# argument, e.g. k05_b64:'^k05_gemm':B=64,S=1,T=4096. For each it keeps
#
#   NAME.txt          ncu's details page (speed of light, memory workload,
#                     warp states, source counters, launch statistics, the
#                     SM-active spread and DRAM bytes)
#   NAME.stalls.txt   ncu_stalls.py over the SASS source page: the stalls by
#                     instruction, then the excess shared wavefronts and
#                     global sectors by opcode and instruction
#   NAME.sass.csv.gz  that source page
#
# all of it returned as OUT/ncu.tgz plus OUT/summary.txt (the device tool
# brings back a few files per call), archived after every kernel so that a
# call cut short returns what ran. Each profile is bounded by NCU_TIMEOUT
# seconds (default 90).
set -u
here=$(cd "$(dirname "$0")" && pwd)
out=${1:?usage: .gpu/ncu.sh OUT NAME:REGEX:DIMS...}
shift
mkdir -p "$out"
out=$(cd "$out" && pwd)
# shellcheck source=/dev/null
. "$here/bench.env"
export FUSER_KERNELS="$here/kernels"
ncu=$(command -v ncu || echo /usr/local/cuda/bin/ncu)
r=$(mktemp -d)/ncu
mkdir -p "$r"
sum=$r/summary.txt
: >"$sum"
for spec in "$@"; do
	IFS=: read -r name regex dims <<<"$spec"
	if [ -z "$name" ] || [ -z "$regex" ] || [ -z "$dims" ]; then
		echo "$spec: not NAME:REGEX:DIMS" >>"$sum"
		continue
	fi
	start=$(date +%s)
	timeout -k 10 "${NCU_TIMEOUT:-90}" "$ncu" --clock-control none \
		--section SpeedOfLight --section MemoryWorkloadAnalysis --section WarpStateStats \
		--section SourceCounters --section LaunchStats \
		--metrics sm__cycles_active.min,sm__cycles_active.max,sm__cycles_active.avg,dram__bytes_read.sum,dram__bytes_write.sum \
		-k "regex:$regex" -c 1 -o "$r/$name" \
		"$here/fuser" profile "$BENCH_SPEC" -dims "$dims" -kernels "$here/kernels" >"$r/$name.log" 2>&1
	echo "$name: ncu exit $? after $(($(date +%s) - start)) s" >>"$sum"
	"$ncu" -i "$r/$name.ncu-rep" --page details >"$r/$name.txt" 2>&1
	"$ncu" -i "$r/$name.ncu-rep" --page source --csv --print-source sass >"$r/$name.sass.csv" 2>&1
	python3 "$here/ncu_stalls.py" --top 14 --before 3 "$r/$name.sass.csv" >"$r/$name.stalls.txt" 2>&1
	grep -E '^-- |by opcode' "$r/$name.stalls.txt" >>"$sum"
	gzip -f "$r/$name.sass.csv"
	rm -f "$r/$name.ncu-rep"
	tar czf "$out/ncu.tgz" -C "$(dirname "$r")" ncu
	cp "$sum" "$out/summary.txt"
done
cp "$sum" "$out/summary.txt"
cat "$sum"
