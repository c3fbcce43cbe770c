#!/usr/bin/env bash
# ab.sh (on the device from the repository root, .gpu-var carried): module
# globals warmed before the wait and the acq_rel split join (353f9d1)
# against 6fb88a9 (.gpu-var/base): gpu/ab.sh over the fused Llama-3-8B
# decode step at B1 and B16 (T=4096), base and this tree in turn, two
# rounds, then this tree's timeline. OUT/ab.
# .gpu-var: fuser (go build -tags cuda -ldflags='-s -w'), base/fuser the
# same at 6fb88a9, each with the kernels of
#   go run -tags nvrtc ./gpu/cmd/gpukernels -out DIR -suite=false -bench
#   'llama3_8b:B=1,S=1,T=4096;llama3_8b:B=16,S=1,T=4096;llama3_8b:B=64,S=1,T=4096;'
# (DIR .gpu-var/kernels and .gpu-var/base/kernels), gpu/ab.sh and a
# bench.env naming those dims; executables gzipped.
set -u
h=$(pwd)/.gpu-var
for f in "$h"/*.gz "$h"/base/*.gz; do [ -f "$f" ] && gunzip -f "$f"; done
chmod +x "$h"/fuser "$h"/base/fuser "$h"/ab.sh
nvidia-smi --query-gpu=name --format=csv,noheader >"$OUT/smi.txt"
AB_DIMS="B=1,S=1,T=4096 B=16,S=1,T=4096" AB_ROUNDS=2 AB_REPS=30 AB_TIMEOUT=40 "$h/ab.sh" "$OUT/ab"
