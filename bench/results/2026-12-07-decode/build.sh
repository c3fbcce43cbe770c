#!/usr/bin/env bash
# build.sh (on the CPU machine, from the repository root): the bundle
# round.sh runs, in .gpu (git-ignored; GPU_DIR names another), about
# 28 MB, which with the tracked tree (35 MB) stays under the 64 MiB a
# device call carries:
#   .gpu/gpu.test, .gpu/fuser,  this tree (tag cuda), gzipped;
#   .gpu/runtime.test
#   .gpu/kernels.tgz            this tree's images of the suite cases of
#                               one row and the matmul cases (CASES), the
#                               determinism and ladder tests', and the
#                               bench steps (BENCH, and SPECS: Mistral,
#                               Gemma-2 and Qwen at B1 T4096);
#   .gpu/narrow, .gpu/prologue  fuser and the bench steps' images of
#                               010aa82 (one-row GEMVs in narrow tiles,
#                               norms as row kernels, the decode
#                               attention's tensor map built on the
#                               device) and 93a9dc2 (the norms the
#                               one-row GEMVs' prologues);
#   .gpu/compare.py             bench/compare.py, for anchors.sh.
set -eu
eval "$(scripts/cuda-sdk.sh "${CUDA_DIR:-$(pwd)/.cache/cuda}")"
CASES='(/B=1,S=1(,|$)|^mat_)'
BENCH='llama3_8b:B=1,S=1,T=4096;llama3_8b:B=16,S=1,T=4096;gpt2:B=1,S=1,T=1024;gpt2:B=16,S=1,T=1024;'
SPECS='mistral_swa:B=1,S=1,T=4096;gemma2:B=1,S=1,T=4096;qwen_bias:B=1,S=1,T=4096;'
root=$(pwd)
g=${GPU_DIR:-.gpu}
rm -rf "$g" && mkdir -p "$g"
go test -c -tags cuda -ldflags='-s -w' -o $g/gpu.test ./gpu
go test -c -tags cuda -ldflags='-s -w' -o $g/runtime.test ./runtime
go build -tags cuda -ldflags='-s -w' -o $g/fuser ./cmd/fuser
go run -tags nvrtc ./gpu/cmd/gpukernels -out $g/kernels -bench "$BENCH$SPECS" -cases "$CASES"
cp bench/compare.py $g/
for pair in narrow:010aa82 prologue:93a9dc2; do
	name=${pair%%:*} rev=${pair#*:}
	wt=$(mktemp -d)
	git worktree add -f --detach "$wt" "$rev" >/dev/null
	(cd "$wt" && mkdir -p "$root/$g/$name" &&
		go build -tags cuda -ldflags='-s -w' -o "$root/$g/$name/fuser" ./cmd/fuser &&
		go run -tags nvrtc ./gpu/cmd/gpukernels -out "$root/$g/$name/kernels" -suite=false -bench "$BENCH")
	git worktree remove --force "$wt"
	echo "$rev" >"$g/$name/REVISION"
done
for f in $g/gpu.test $g/runtime.test $g/fuser $g/narrow/fuser $g/prologue/fuser; do
	if readelf -d "$f" | grep -qi nvrtc; then echo "$f links NVRTC, which the GPU machine lacks" >&2; exit 1; fi
	gzip -f "$f"
done
tar czf $g/kernels.tgz -C "$g" kernels && rm -rf $g/kernels
du -sh "$g"
