#!/usr/bin/env bash
# build.sh (on the CPU machine, from the repository root): the bundle
# round.sh runs, in .gpu (git-ignored; GPU_DIR names another): for
# each tree below, fuser (tag cuda, gzipped) and the kernels of the bench
# steps (Llama-3-8B B1 and B16 at T=4096, GPT-2 small B1 and B16 at
# T=1024), each built in a temporary worktree of its revision:
#   split     dc0ca57: one-row GEMVs split K again where a narrow tile's
#             share of the weight is more than a block has in flight;
#   split-np  dc0ca57 with the prologue pass taken out of the pass list
#             (passes/pipeline.go), so the norms stay row kernels;
#   warm      e925a6e: before the narrow tiles and the prologues (the
#             warm round, ../2026-12-06-warm/: 180 µs at B1 on the H100);
#   narrow    010aa82: narrow tiles, no prologues.
# And bench/compare.py, for the anchors.
set -eu
eval "$(scripts/cuda-sdk.sh "${CUDA_DIR:-$(pwd)/.cache/cuda}")"
BENCH='llama3_8b:B=1,S=1,T=4096;llama3_8b:B=16,S=1,T=4096;gpt2:B=1,S=1,T=1024;gpt2:B=16,S=1,T=1024;'
root=$(pwd)
g=${GPU_DIR:-.gpu}
rm -rf "$g" && mkdir -p "$g"
cp bench/compare.py bench/results/2026-12-07-splitk/dram_probe.py "$g/"
for tree in split:dc0ca57 split-np:dc0ca57 warm:e925a6e narrow:010aa82; do
	name=${tree%%:*} rev=${tree#*:}
	wt=$(mktemp -d)
	git worktree add -f --detach "$wt" "$rev" >/dev/null
	(
		cd "$wt"
		if [ "$name" = split-np ]; then
			grep -q '{Name: "prologue",' passes/pipeline.go
			sed -i '/{Name: "prologue",/d' passes/pipeline.go
		fi
		mkdir -p "$root/$g/$name"
		go build -tags cuda -ldflags='-s -w' -o "$root/$g/$name/fuser" ./cmd/fuser
		go run -tags nvrtc ./gpu/cmd/gpukernels -out "$root/$g/$name/kernels" -suite=false -bench "$BENCH"
	)
	git worktree remove --force "$wt"
	echo "$rev" >"$g/$name/REVISION"
	if readelf -d "$g/$name/fuser" | grep -qi nvrtc; then echo "$g/$name/fuser links NVRTC, which the GPU machine lacks" >&2; exit 1; fi
	gzip -f "$g/$name/fuser"
done
du -sh "$g"
