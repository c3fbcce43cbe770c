#!/usr/bin/env bash
# round.sh (on the device from the repository root, .gpu carried as
# build.sh builds it at this directory's final commit, or the GPU_DIR it
# names): in one call, so that its ratios count,
#   ab/       fuser bench of the fused Llama-3-8B decode step at B1 and
#             B16 (T=4096) and of GPT-2 small's at B1 (T=1024, f16), for
#             narrow (010aa82: one-row GEMVs in narrow tiles), prologue
#             (93a9dc2: the norms the one-row GEMVs' prologues) and new
#             (this tree: the decode attention's tensor map encoded by
#             the host), two rounds;
#   runtime/  runtime's GPU tests, TestRowMap among them (the host's
#             map, copied through by the engine);
#   suite/    the on-device suite (fused and unfused against the float64
#             reference) over its one-row and matmul cases (CASES), then
#             memcheck and racecheck over the prologue cases and the
#             decode attention at head dims 64, 128 and 256 (SAN);
#   specs/    new's fused Mistral, Gemma-2 and Qwen decode steps at B1
#             T4096 (#17: at most 1.25x their floors);
#   timeline/ new's steps (Llama B1 and B16, GPT-2 B1) kernel by kernel in
#             one graph replay;
#   dram/     ncu's DRAM bytes alone (one pass) of new's four B1 GEMVs.
# In that order: ab round 1, timeline, runtime, suite (SUITE_TIMEOUT
# seconds, 240 unless set; SKIP_SUITE=1 leaves it and the sanitizers
# out, for a round whose full suite runs in a call of its own), specs,
# dram, ab round 2; OUT/summary.txt grows
# after every step. A step that would start BUDGET seconds (540 unless
# set) after the first is skipped, with a line in the summary, so that
# the call returns inside the device's 600 s.
set -u
h=$(pwd)/${GPU_DIR:-.gpu}
out=${OUT:?}
CASES='(/B=1,S=1(,|$)|^mat_)'
SAN='^(mat_rmsres_bf16_5000x2056/small/B=1|mat_zrms_f16_5000x2056/small/B=1|mat_lnres_f16_777x260/small/B=1|mat_rmsres_bf16_4104x120/small/B=1|llama3_8b/small/B=1,S=1|gpt2/small/B=1,S=1|gemma2/small/B=1,S=1)'
for f in "$h"/*.gz "$h"/narrow/*.gz "$h"/prologue/*.gz; do [ -f "$f" ] && gunzip -f "$f"; done
[ -d "$h/kernels" ] || tar xzf "$h/kernels.tgz" -C "$h"
chmod +x "$h/gpu.test" "$h/runtime.test" "$h/fuser" "$h/narrow/fuser" "$h/prologue/fuser"
mkdir -p "$out/ab" "$out/runtime" "$out/suite" "$out/specs" "$out/timeline"
sum=$out/summary.txt
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader >"$out/smi.txt"
dir() { if [ "$1" = new ]; then echo "$h"; else echo "$h/$1"; fi; }
# step NAME LOG TIMEOUT CMD...: CMD bounded, its output in LOG, its status
# and step lines in the summary.
t0=$(date +%s)
step() {
	local name=$1 log=$2 to=$3 start
	shift 3
	start=$(date +%s)
	if [ $((start - t0)) -gt "${BUDGET:-540}" ]; then
		echo "$name: skipped at $((start - t0)) s (BUDGET)" >>"$sum"
		return
	fi
	timeout -k 5 "$to" "$@" >"$log" 2>&1
	echo "$name: exit $? after $(($(date +%s) - start)) s" >>"$sum"
	grep -E 'step:' "$log" | sed "s|^|  $name |" >>"$sum"
}
ab() {
	for t in narrow prologue new; do
		d=$(dir $t)
		step "llama.$t.$1" "$out/ab/llama.$t.$1.txt" 60 "$d/fuser" bench llama3_8b -dims B=1,S=1,T=4096 \
			-dims B=16,S=1,T=4096 -kernels "$d/kernels" -reps 30 -unfused=false
		step "gpt2.$t.$1" "$out/ab/gpt2.$t.$1.txt" 40 "$d/fuser" bench gpt2 -dims B=1,S=1,T=1024 \
			-kernels "$d/kernels" -reps 100 -unfused=false
	done
}
ab 1
step timeline.llama "$out/timeline/llama.txt" 60 "$h/fuser" bench llama3_8b -dims B=1,S=1,T=4096 -dims B=16,S=1,T=4096 \
	-kernels "$h/kernels" -reps 30 -unfused=false -timeline
step timeline.gpt2 "$out/timeline/gpt2.txt" 30 "$h/fuser" bench gpt2 -dims B=1,S=1,T=1024 \
	-kernels "$h/kernels" -reps 100 -unfused=false -timeline
step runtime "$out/runtime/runtime_test.log" 60 "$h/runtime.test" -test.v
grep -E '^(--- |ok|PASS|FAIL)' "$out/runtime/runtime_test.log" >>"$sum"
if [ "${SKIP_SUITE:-0}" = 0 ]; then
	step suite "$out/suite/suite.log" "${SUITE_TIMEOUT:-240}" "$h/gpu.test" -test.v -test.run '^TestSuite$' -test.timeout 10m \
		-kernels "$h/kernels" -cases "$CASES" -summary "$out/suite/suite_summary.json"
	grep -E '^(--- FAIL|FAIL|ok|PASS)' "$out/suite/suite.log" | tail -20 >>"$sum"
	sed -n '/summary:/,/^[-=]/p' "$out/suite/suite.log" | head -40 >>"$sum"
	san=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
	for tool in memcheck racecheck; do
		step "$tool" "$out/suite/$tool.log" 70 "$san" --tool "$tool" --error-exitcode 9 --print-limit 200 \
			"$h/gpu.test" -test.v -test.run '^TestSuite$' -kernels "$h/kernels" -cases "$SAN"
		grep -E 'ERROR SUMMARY|RACECHECK SUMMARY|Error|Hazard' "$out/suite/$tool.log" | tail -5 >>"$sum"
	done
fi
for spec in mistral_swa gemma2 qwen_bias; do
	step "spec.$spec" "$out/specs/$spec.txt" 45 "$h/fuser" bench "$spec" -dims B=1,S=1,T=4096 \
		-kernels "$h/kernels" -reps 30 -unfused=false
done
# The GEMVs' DRAM bytes with the two DRAM counters alone (one ncu pass,
# no replay restoring their buffers): every ncu report on file has the
# fused GEMVs write about 2 MB, against kilobytes of outputs (#17).
mkdir -p "$out/dram"
for k in k00 k02 k03 k04; do
	step "dram.$k" "$out/dram/$k.txt" 60 "$(command -v ncu || echo /usr/local/cuda/bin/ncu)" --clock-control none \
		--metrics dram__bytes_read.sum,dram__bytes_write.sum -k "regex:^${k}_gemm" -c 1 \
		"$h/fuser" profile llama3_8b -dims B=1,S=1,T=4096 -kernels "$h/kernels"
	grep -E 'dram__bytes' "$out/dram/$k.txt" | sed "s|^|  dram.$k |" >>"$sum"
done
ab 2
[ -f "$out/suite/suite.log" ] && gzip -f "$out/suite/suite.log"
cat "$sum"
