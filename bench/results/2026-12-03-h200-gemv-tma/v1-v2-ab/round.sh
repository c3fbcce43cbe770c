#!/usr/bin/env bash
# ninth session, round 3: the fused Llama-3-8B decode step at B16 and B64 for 6fff288 (.gpu/base), the
# mbarrier ring fed by warp 0 and the tensor copy engine (v1, .gpu/fuser) and the block-barrier ring with
# only the weight by the engine (v2, .gpu/v2), then ncu on gate/up at B16 for v1 and v2
set -u
h=$(cd "$(dirname "$0")" && pwd)
r=/tmp/res3; rm -rf $r; mkdir -p $r
start=$(date +%s)
el() { echo "$1 after $(( $(date +%s) - start )) s" >> $r/progress.txt; cp $r/progress.txt $OUT/; }
dims=(-dims B=16,S=1,T=4096 -dims B=64,S=1,T=4096)
for v in base v1 v2; do
  case $v in base) f=$h/base/fuser; k=$h/base/kernels;; v1) f=$h/fuser; k=$h/kernels;; v2) f=$h/v2/fuser; k=$h/v2/kernels;; esac
  timeout 70 $f bench llama3_8b "${dims[@]}" -kernels $k -reps 30 -unfused=false -json-out $r/$v.json > $r/$v.txt 2>&1
  el "$v exit $?"
  grep -E "k05|step:" $r/$v.txt >> $r/progress.txt
done
prof() { # NAME FUSER KERNELS
  timeout 60 ncu --clock-control none --section SpeedOfLight --section WarpStateStats --section SourceCounters --section LaunchStats --section MemoryWorkloadAnalysis \
    --metrics sm__cycles_active.avg,sm__cycles_active.max,dram__bytes_read.sum \
    -k regex:'^k05_gemm' -c 1 -o $r/$1 $2 profile llama3_8b -dims B=16,S=1,T=4096 -kernels $3 > $r/$1.log 2>&1
  ncu -i $r/$1.ncu-rep --page details > $r/$1.txt 2>&1
  ncu -i $r/$1.ncu-rep --page source --csv --print-source sass > $r/$1.sass.csv 2>&1
  python3 $h/ncu_stalls.py --top 14 --before 3 $r/$1.sass.csv > $r/$1.stalls.txt 2>&1
  rm -f $r/$1.ncu-rep $r/$1.sass.csv
  el $1
}
prof v1_k05_b16 $h/fuser $h/kernels
tar czf $OUT/res3.tgz -C /tmp res3
prof v2_k05_b16 $h/v2/fuser $h/v2/kernels
tar czf $OUT/res3.tgz -C /tmp res3
