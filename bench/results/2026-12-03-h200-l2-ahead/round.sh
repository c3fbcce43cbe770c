#!/usr/bin/env bash
# tenth session, round 1: L2 ahead (the decode attention asks L2 for its first keys and values, and every
# GEMV for its share of 24 MiB of weight rows, before griddepcontrol.wait) against main at 9abe610
# (.gpu/base, make gpu-base BASE=9abe610): ab.sh's base and new fused step at B1/B16/B64 and this tree's
# timeline, then the PyTorch anchors (eager + CUDA graph, torch.compile max-autotune-no-cudagraphs) in
# the same call. Run on the device from the repository root: bench/results/2026-12-03-h200-l2-ahead/round.sh
set -u
h=$(pwd)/.gpu
r=/tmp/l2ab; rm -rf $r; mkdir -p $r
AB_ROUNDS=1 AB_TIMEOUT=140 $h/ab.sh $r/ab > $r/ab_stdout.txt 2>&1
cp $r/ab/summary.txt $OUT/ 2>/dev/null
tar xzf $r/ab/ab.tgz -C $r
timeout 150 env PYTHONUNBUFFERED=1 python3 $h/compare.py --ours $r/ab/timeline.json --out $r/compare --batches 1,16,64 \
  --compile-modes max-autotune-no-cudagraphs --shapes 1x4096 > $r/compare.log 2>&1
echo "compare: exit $?" >> $r/ab/summary.txt
rm -f $r/ab/ab.tgz
tar czf $OUT/l2ab.tgz -C /tmp l2ab
