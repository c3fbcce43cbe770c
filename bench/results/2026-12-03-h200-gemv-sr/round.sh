#!/usr/bin/env bash
# round.sh: on the GPU machine, beside the bundle it runs (make gpu-bundle
# GEN_SPECS=0; make gpu-base BASE=main; the executables gzipped to fit the
# call's 64 MiB, so unpacked here first): the fused step of
# base and of this tree at B1, B16, B64, then run.sh's runtime tests,
# ladder, suite (SUITE_CASES: by default the cases of the GEMVs and the
# decode attention, fused and unfused; determinism) and sanitizers,
# everything archived into $OUT/round.tgz after each part.
set -u
g=$(cd "$(dirname "$0")" && pwd)
out=${OUT:?}
for f in "$g"/fuser.gz "$g"/base/fuser.gz "$g"/gpu.test.gz "$g"/runtime.test.gz "$g"/refdump.gz; do
	[ -f "$f" ] && gunzip -f "$f" && chmod +x "${f%.gz}"
done
r=$(mktemp -d)/round
mkdir -p "$r"
save() { tar czf "$out/round.tgz" -C "$(dirname "$r")" round; cp "$r/summary.txt" "$out/summary.txt"; }
export FUSER_KERNELS="$g/kernels"
dims=(-dims B=1,S=1,T=4096 -dims B=16,S=1,T=4096 -dims B=64,S=1,T=4096)
: >"$r/summary.txt"
for v in new base; do
	bin=$g/fuser kern=$g/kernels
	[ $v = base ] && bin=$g/base/fuser kern=$g/base/kernels
	start=$(date +%s)
	timeout -k 10 120 "$bin" bench llama3_8b "${dims[@]}" -kernels "$kern" -reps 30 -unfused=false \
		-json-out "$r/bench_$v.json" >"$r/bench_$v.txt" 2>&1
	echo "bench_$v: exit $? after $(($(date +%s) - start)) s" >>"$r/summary.txt"
	grep -E 'step:|k0[0-6]_' "$r/bench_$v.txt" >>"$r/summary.txt"
	save
done
# run.sh writes as it goes: archive what there is every 20 s meanwhile.
(while sleep 20; do tar czf "$out/part.tgz" -C "$(dirname "$r")" round && mv "$out/part.tgz" "$out/round.tgz"; done) &
saver=$!
SUITE_CASES=${SUITE_CASES:-^(mat_|llama3_8b/|tiny/|attn_|cascade/|paged_decode/|mistral_swa/|qwen_bias/)} SKIP_BENCH=1 SKIP_COMPARE=1 SKIP_NCU=1 STEP_TIMEOUT=200 "$g/run.sh" "$r/suite" >/dev/null 2>&1
kill $saver
cat "$r/suite/summary.txt" >>"$r/summary.txt"
save
