#!/usr/bin/env bash
# tenth session, round 2: the decode attention asking L2 for its first keys and values before
# griddepcontrol.wait (the GEMVs back to 128 rows ahead, as on main) against main at 9abe610 (.gpu/base):
# ab.sh's base and new fused step at B1/B16/B64 and this tree's timeline, then the suite over every spec
# case with a flash decode attention (fused and unfused) and compute-sanitizer on the tiny cases and a Llama
# small decode case. Bundle: make gpu-bundle GPU_CASES='^(llama3_8b/|attn_|cascade/|paged_decode/|gemma2|mistral_swa/|tiny/|qwen_bias/)' GEN_SPECS=0
# ab.sh writes into $OUT as it goes, so that a call cut short returns what ran (a first try that
# wrote under /tmp and copied at the end lost everything to the device budget's cut).
# Run on the device from the repository root: bench/results/2026-12-03-h200-l2-ahead/attn/round.sh
set -u
h=$(pwd)/.gpu
AB_ROUNDS=1 AB_TIMEOUT=150 \
  AB_CASES='^(llama3_8b/|attn_|cascade/|paged_decode/|gemma2|mistral_swa/|tiny/|qwen_bias/)' \
  AB_SAN_CASES='^(tiny/small/|llama3_8b/small/B=4,S=1,T=2183)' \
  $h/ab.sh $OUT > $OUT/ab_stdout.txt 2>&1
