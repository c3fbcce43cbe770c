#!/usr/bin/env bash
# round 2: where the split-K tensor-core GEMV spends its time (ncu source counters)
set -u
h=$(cd "$(dirname "$0")" && pwd)
r=/tmp/res; mkdir -p $r
export FUSER_KERNELS=$h/kernels
prof() { # NAME REGEX DIMS
  timeout 120 ncu --clock-control none --section SpeedOfLight --section WarpStateStats --section SourceCounters --section LaunchStats --section Occupancy \
    --metrics sm__cycles_active.min,sm__cycles_active.max,sm__cycles_active.avg,smsp__inst_executed.sum,sm__warps_active.avg.pct_of_peak_sustained_active \
    -k regex:"$2" -c 1 -o $r/$1 $h/fuser profile llama3_8b -dims "$3" -kernels $h/kernels > $r/$1.log 2>&1
  ncu -i $r/$1.ncu-rep --page details > $r/$1.txt 2>&1
  ncu -i $r/$1.ncu-rep --page source --csv --print-source sass > $r/$1.sass.csv 2>&1
  python3 $h/ncu_stalls.py --top 12 --before 3 $r/$1.sass.csv > $r/$1.stalls.txt 2>&1
  rm -f $r/$1.ncu-rep
}
prof k03_b64 '^k03_gemm' B=64,S=1,T=4096
prof k03_b16 '^k03_gemm' B=16,S=1,T=4096
prof k01_b16 '^k01_gemm' B=16,S=1,T=4096
prof k03_b1 '^k03_gemm' B=1,S=1,T=4096
tar czf $OUT/res.tgz -C /tmp res
