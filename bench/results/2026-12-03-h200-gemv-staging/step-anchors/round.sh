#!/usr/bin/env bash
# round 2 (seventh session): the fused decode step at B1, B16 and B64 and the PyTorch anchors in one call,
# then where the B1 kernels spend their time (ncu: SM-active spread, stall samples by instruction)
set -u
h=$(cd "$(dirname "$0")" && pwd)
r=/tmp/res2; mkdir -p $r
start=$(date +%s)
el() { echo "$1 after $(( $(date +%s) - start )) s" >> $r/progress.txt; }
. $h/bench.env
export FUSER_KERNELS=$h/kernels
dims=(); for d in $BENCH_DIMS; do dims+=(-dims "$d"); done
timeout 150 $h/fuser bench llama3_8b "${dims[@]}" -kernels $h/kernels -reps 30 -unfused=false -json-out $r/fuser_bench.json > $r/fuser_bench.txt 2>&1
el bench
timeout 200 env PYTHONUNBUFFERED=1 python3 $h/compare.py --ours $r/fuser_bench.json --out $r --batches 1,16,64 --compile-modes max-autotune-no-cudagraphs --shapes 1x4096 > $r/compare.log 2>&1
el compare
prof() { # NAME REGEX DIMS
  timeout 60 ncu --clock-control none --section SpeedOfLight --section WarpStateStats --section SourceCounters --section LaunchStats \
    --metrics sm__cycles_active.min,sm__cycles_active.max,sm__cycles_active.avg,dram__bytes_read.sum,dram__bytes_write.sum \
    -k regex:"$2" -c 1 -o $r/$1 $h/fuser profile llama3_8b -dims "$3" -kernels $h/kernels > $r/$1.log 2>&1
  ncu -i $r/$1.ncu-rep --page details > $r/$1.txt 2>&1
  ncu -i $r/$1.ncu-rep --page source --csv --print-source sass > $r/$1.sass.csv 2>&1
  python3 $h/ncu_stalls.py --top 12 --before 3 $r/$1.sass.csv > $r/$1.stalls.txt 2>&1
  rm -f $r/$1.ncu-rep $r/$1.sass.csv
  el $1
}
prof k01_b1 '^k01_gemm' B=1,S=1,T=4096
prof k03_b1 '^k03_gemm' B=1,S=1,T=4096
prof k02_b1 '^k02_att' B=1,S=1,T=4096
prof k06_b1 '^k06_gemm' B=1,S=1,T=4096
tar czf $OUT/res2.tgz -C /tmp res2
