#!/usr/bin/env bash
# build.sh (on the CPU machine, from the repository root): the bundle
# round.sh runs, in .gpu (git-ignored), about 45 MB with the tracked tree
# under the 64 MiB a device call carries:
#   .gpu/gpu.test, .gpu/fuser   this tree (tag cuda), gzipped;
#   .gpu/kernels.tgz            this tree's images of the suite cases of
#                               one row and the matmul cases (CASES), the
#                               determinism and ladder tests', and the
#                               bench steps (BENCH, and SPECS: Mistral,
#                               Gemma-2 and Qwen at B1 T4096);
#   .gpu/narrow, .gpu/mid       fuser and the bench steps' images of
#                               010aa82 (one-row GEMVs in narrow tiles,
#                               norms as row kernels) and e925a6e (before
#                               narrow tiles: split K);
#   .gpu/compare.py             bench/compare.py, for round.sh anchors.
set -eu
eval "$(scripts/cuda-sdk.sh "${CUDA_DIR:-$(pwd)/.cache/cuda}")"
CASES='(/B=1,S=1(,|$)|^mat_)'
BENCH='llama3_8b:B=1,S=1,T=4096;llama3_8b:B=16,S=1,T=4096;gpt2:B=1,S=1,T=1024;gpt2:B=16,S=1,T=1024;'
SPECS='mistral_swa:B=1,S=1,T=4096;gemma2:B=1,S=1,T=4096;qwen_bias:B=1,S=1,T=4096;'
root=$(pwd)
rm -rf .gpu && mkdir -p .gpu
go test -c -tags cuda -ldflags='-s -w' -o .gpu/gpu.test ./gpu
go build -tags cuda -ldflags='-s -w' -o .gpu/fuser ./cmd/fuser
go run -tags nvrtc ./gpu/cmd/gpukernels -out .gpu/kernels -bench "$BENCH$SPECS" -cases "$CASES"
cp bench/compare.py .gpu/
for pair in narrow:010aa82 mid:e925a6e; do
	name=${pair%%:*} rev=${pair#*:}
	wt=$(mktemp -d)
	git worktree add -f --detach "$wt" "$rev" >/dev/null
	(cd "$wt" && mkdir -p "$root/.gpu/$name" &&
		go build -tags cuda -ldflags='-s -w' -o "$root/.gpu/$name/fuser" ./cmd/fuser &&
		go run -tags nvrtc ./gpu/cmd/gpukernels -out "$root/.gpu/$name/kernels" -suite=false -bench "$BENCH")
	git worktree remove --force "$wt"
	echo "$rev" >".gpu/$name/REVISION"
done
for f in .gpu/gpu.test .gpu/fuser .gpu/narrow/fuser .gpu/mid/fuser; do
	if readelf -d "$f" | grep -qi nvrtc; then echo "$f links NVRTC, which the GPU machine lacks" >&2; exit 1; fi
	gzip -f "$f"
done
tar czf .gpu/kernels.tgz -C .gpu kernels && rm -rf .gpu/kernels
du -sh .gpu
