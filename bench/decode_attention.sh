#!/usr/bin/env bash
# bench/decode_attention.sh BUNDLE OUTDIR [SUITE_CASES] [SUITE_SECONDS]: on the
# GPU machine, from the repository root, with BUNDLE built by
# `make gpu-attn-bundle` (default .gpu-attn). One call measures our decode
# attention (fuser bench on bench/specs: contiguous, paged page 16, cascade;
# SPLITS="256 1024" adds -split-keys runs) and the PyTorch SDPA flash and
# cuDNN anchors (compare.py --attention-only) on the same device, then runs
# the on-device suite's decode attention cases and the determinism test.
# The table of ours vs the anchors ends the output; everything is in OUTDIR.
# NCU=1 adds ncu reports (speed of light, memory workload, warp states,
# occupancy) of the first launch of the attention kernel at B1 L32768 and at
# B64 L4096, contiguous and paged: ncu_*.txt. SKIP_BENCH=1 leaves out the
# timed runs and the anchors (the ncu reports and the suite still run).
set -u
H=$(cd "${1:?bundle}" && pwd)
R=${2:?outdir}; CASES=${3:-^dec_}; SUITE_S=${4:-300}
mkdir -p "$R"
export FUSER_KERNELS=$H/kernels PYTHONUNBUFFERED=1
S=$H/specs
F="$H/fuser bench"
SH="-dims B=1,S=1,T=4095 -dims B=1,S=1,T=32767 -dims B=1,S=1,T=131071 -dims B=16,S=1,T=8191 -dims B=64,S=1,T=4095"
nvidia-smi > "$R/nvidia-smi.txt" 2>&1
t0=$(date +%s)
if [ "${SKIP_BENCH:-0}" != 1 ]; then
	echo "== $(date +%T) bench contiguous"; $F $S/decode_attention.fu $SH -dims B=64,S=1,T=8703 -unfused=false -reps 100 -json-out "$R/ours.json" > "$R/bench_contiguous.txt" 2>&1; echo "rc $?"
	echo "== $(date +%T) bench paged"; $F $S/decode_attention_paged.fu $SH -unfused=false -reps 100 -json-out "$R/paged.json" > "$R/bench_paged.txt" 2>&1; echo "rc $?"
	echo "== $(date +%T) bench cascade"; $F $S/decode_cascade.fu -dims B=64,S=1,T=511,L=8192 -unfused=false -reps 100 -json-out "$R/cascade.json" > "$R/bench_cascade.txt" 2>&1; echo "rc $?"
	for sk in ${SPLITS:-}; do
		echo "== $(date +%T) bench split-keys $sk"; $F $S/decode_attention.fu $SH -unfused=false -reps 100 -split-keys "$sk" -json-out "$R/sk$sk.json" > "$R/bench_sk$sk.txt" 2>&1; echo "rc $?"
	done
fi
if [ "${NCU:-0}" = 1 ]; then
	ncu=$(command -v ncu || echo /usr/local/cuda/bin/ncu)
	for sd in decode_attention:B=1,S=1,T=32767 decode_attention:B=64,S=1,T=4095 decode_attention_paged:B=64,S=1,T=4095; do
		spec=${sd%%:*} dims=${sd#*:}
		name=ncu_${spec}_$(echo "$dims" | tr -d '=,S')
		echo "== $(date +%T) $name"
		"$ncu" --clock-control none --kernel-name regex:attention --launch-count 1 --section SpeedOfLight \
			--section MemoryWorkloadAnalysis --section WarpStateStats --section Occupancy --section LaunchStats \
			$F "$S/$spec.fu" -dims "$dims" -unfused=false -reps 1 -warmup 0 > "$R/$name.txt" 2>&1; echo "rc $?"
	done
fi
if [ "${SKIP_BENCH:-0}" != 1 ]; then
	more=""; for f in "$R"/paged.json "$R"/cascade.json "$R"/sk*.json; do [ -f "$f" ] && more="$more --more $f"; done
	echo "== $(date +%T) anchors"; python3 "$H/compare.py" --attention-only --ours "$R/ours.json" $more --out "$R" > "$R/compare.txt" 2>&1; echo "rc $?"
fi
echo "== $(date +%T) suite $CASES"
timeout -k 5 "$SUITE_S" "$H/gpu.test" -test.run 'TestSuite|TestDeterministicDecode' -test.v -kernels "$H/kernels" -cases "$CASES" -summary "$R/suite_summary.json" > "$R/suite.log" 2>&1; echo "rc $?"
grep -E 'bit-identical|^(--- FAIL|FAIL|ok|PASS)|^    --- (PASS|FAIL)' "$R/suite.log" | tail -40
echo "== total $(( $(date +%s) - t0 )) s"
[ -f "$R/compare.txt" ] && sed -n '/^decode attention/,$p' "$R/compare.txt"
