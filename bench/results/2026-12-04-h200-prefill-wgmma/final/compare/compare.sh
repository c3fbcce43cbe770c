#!/usr/bin/env bash
# compare.sh (run on the device from .gpu-var/, right after ../round.sh on
# the same machine, which ran out of the call's time before its compare
# step): bench/compare.py's Llama-3-8B prefill and prefill attention anchors
# beside ../prefill/final.json and ../prefill/attn.json (copied into
# .gpu-var/).
cd .gpu-var && timeout -k 5 200 env PYTHONUNBUFFERED=1 python3 compare.py --prefill-only --prefill 4096,512 \
	--prefill-attention 1x16384,2x4096,8x1024 --ours final.json --more attn.json --out $OUT/compare >$OUT/compare.log 2>&1
