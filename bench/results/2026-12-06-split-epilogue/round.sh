#!/usr/bin/env bash
# round.sh (on the device from the repository root, .gpu and .gpu-var/base
# carried): the split GEMV epilogue change (7cd3152) in one call, fitted to
# the device time this session had left (about 280 s):
#   ab/     the fused Llama-3-8B decode step (T=4096) at B1 and B64, base
#           (32b0216: .gpu-var/base/fuser; its images, gpukernels -bench at
#           those dims, copied into .gpu/kernels, whose keys are content
#           hashes) then this tree (.gpu), fused only, graph replay;
#   suite/  the on-device suite at this tree over 36 of the 80 small cases
#           whose fused or unfused plan has a split GEMV (split_cases.txt:
#           every suite case planned on the CPU, kept where a kernel's
#           source declares the split count; split_cases_run.txt: those of
#           the Llama, Mixtral, Qwen, Gemma-2 softcap, GPT-2, tiny and matmul
#           specs), fused and unfused, and the determinism test; memcheck and racecheck over SAN_CASES (split
#           GEMVs with residual, cast, RoPE + KV append, and Mixtral
#           decode); then Llama-3-8B at full size (decode B=2 over ~4100
#           tokens with split GEMVs, and a prefill).
# .gpu: make gpu-bundle GEN_SPECS=32 BENCH_SPEC=llama3_8b
# BENCH_DIMS="B=1,S=1,T=4096 B=16,S=1,T=4096 B=1,S=4096,T=0", plus the
# B64 decode images (gpukernels -bench 'llama3_8b:B=64,S=1,T=4096;'),
# executables gzipped, layerstep and refdump left out, .gpu/kernels as
# one tgz (kernels.tgz: the call's size limit).
set -u
here=$(pwd)/.gpu
base=$(pwd)/.gpu-var/base
out=${OUT:?}
[ -f "$here/kernels.tgz" ] && tar xzf "$here/kernels.tgz" -C "$here" && rm "$here/kernels.tgz"
for f in "$here"/*.gz "$base"/*.gz; do [ -f "$f" ] && gunzip -f "$f"; done
chmod +x "$here"/fuser "$here"/gpu.test "$here"/runtime.test "$here"/run.sh "$base"/fuser
mkdir -p "$out/ab"
nvidia-smi --query-gpu=name,clocks.max.sm,clocks.max.mem --format=csv,noheader >"$out/ab/smi.txt"
for v in base new; do
	bin=$here/fuser
	[ $v = base ] && bin=$base/fuser
	timeout -k 5 60 "$bin" bench llama3_8b -dims B=1,S=1,T=4096 -dims B=64,S=1,T=4096 \
		-kernels "$here/kernels" -reps 20 -unfused=false >"$out/ab/bench_$v.txt" 2>&1
	echo "$v: exit $?" >>"$out/ab/summary.txt"
	grep -E "fused plan|k0[1356]_gemm|step:" "$out/ab/bench_$v.txt" >>"$out/ab/summary.txt"
done
r=$(mktemp -d)/suite
mkdir -p "$r"
(while sleep 15; do tar czf "$out/suite.tgz.part" -C "$(dirname "$r")" suite && mv "$out/suite.tgz.part" "$out/suite.tgz"; done) &
tarloop=$!
SAN_CASES='^(mat_res_bf16_4104x120/small/B=17,S=1|mat_cast_bf16_1001x517/small/B=3,S=1|llama3_8b/small/B=4,S=1,T=2183|mixtral_moe/small/B=2,S=1,T=2994)' \
	SUITE_CASES='^(gemma2_softcap/small/B=3,S=1,T=2041|gemma2_softcap/small/B=2,S=21,T=268|gemma2_softcap/small/B=2,S=2,T=661|gpt2/small/B=2,S=1,T=2426|gpt2/small/B=1,S=27,T=246|gpt2/small/B=7,S=2,T=556|llama3_70b/small/B=2,S=1,T=1754|llama3_70b/small/B=2,S=19,T=206|llama3_70b/small/B=1,S=2,T=468|llama3_8b/small/B=4,S=1,T=2183|llama3_8b/small/B=3,S=2,T=590|mixtral_moe/small/B=2,S=1,T=2994|mixtral_moe/small/B=5,S=2,T=137|qwen_bias/small/B=2,S=1,T=2212|qwen_bias/small/B=3,S=3,T=285|tiny/small/B=4,S=1,T=1720|tiny/small/B=1,S=21,T=108|tiny/small/B=6,S=3,T=172|mat_res_bf16_4104x120/small/B=1,S=1|mat_swiglu_bf16_1000x1000/small/B=2,S=1|mat_cast_bf16_1001x517/small/B=3,S=1|mat_res_f16_777x260/small/B=7,S=1|mat_res_bf16_4104x120/small/B=8,S=1|mat_swiglu_bf16_1000x1000/small/B=9,S=1|mat_cast_bf16_1001x517/small/B=15,S=1|mat_res_f16_777x260/small/B=16,S=1|mat_res_bf16_4104x120/small/B=17,S=1|mat_swiglu_bf16_1000x1000/small/B=63,S=1|mat_res_bf16_4104x120/small/B=2,S=8|mat_swiglu_bf16_1000x1000/small/B=1,S=1|mat_swiglu_bf16_1000x1000/small/B=2,S=8|mat_cast_bf16_1001x517/small/B=1,S=1|mat_cast_bf16_1001x517/small/B=2,S=8|mat_res_f16_777x260/small/B=1,S=1|mat_res_f16_777x260/small/B=2,S=8|mat_swiglu_f16_776x136/small/B=2,S=8)' SKIP_LADDER=1 SKIP_BENCH=1 SKIP_COMPARE=1 SKIP_NCU=1 SKIP_REFCHECK=1 \
	STEP_TIMEOUT=120 "$here/run.sh" "$r"
echo "run.sh: exit $?" >>"$r/summary.txt"
timeout -k 5 40 "$here/gpu.test" -test.v -test.run '^TestSuite$' -test.timeout 10m \
	-kernels "$here/kernels" -cases '/full/' -summary "$r/rest_summary.json" >"$r/rest.log" 2>&1
echo "full: exit $?" >>"$r/summary.txt"
gzip -f "$r/rest.log"
kill "$tarloop" 2>/dev/null
gzip -f "$r/suite.log"
tar czf "$out/suite.tgz" -C "$(dirname "$r")" suite
cat "$r/summary.txt"
