#!/bin/bash
# On the GPU machine, from the repository root: bash bench/results/2026-12-03-h200-wgmma/layout-check/run.sh
# Builds harness.cu with the device libraries it tests and prints the worst absolute error per case.
set -e
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../../.." && pwd)
tmp=$(mktemp -d)
cp "$here/harness.cu" "$root/codegen/cuda/device/prelude.cuh" "$root/codegen/cuda/device/gemv_wgmma.cuh" "$tmp/"
nvcc -std=c++17 -gencode arch=compute_90a,code=sm_90a -O2 -o "$tmp/harness" "$tmp/harness.cu"
"$tmp/harness"
