#!/usr/bin/env bash
# build.sh (on the CPU machine, from the repository root): the bundle
# round.sh runs, in .gpu-var (git-ignored; GPU_DIR names another). Each
# tree is the revision REV (default HEAD) with the decode attention's
# launch (passes/launch_attention.go) changed as its name says, built in
# a temporary worktree: fuser (tag cuda, gzipped) and the kernels of the
# bench steps (Llama-3-8B B1 and B16 at T=4096, GPT-2 small B1 and B16 at
# T=1024; base also Mistral, Gemma-2 and Qwen at B1 T=4096):
#   base    the launch as it is: one block an SM of 4 warps whenever the
#           splits fill the SMs, 8 warps only for splits of 4096 keys or
#           more, splits of at least 256 keys;
#   wide    8 warps whatever the split's length (wideMinKeys 0);
#   mst64   splits of at least 64 keys (minSplitTokens 64);
#   both    wide and mst64.
set -eu
eval "$(scripts/cuda-sdk.sh "${CUDA_DIR:-$(pwd)/.cache/cuda}")"
rev=$(git rev-parse --short "${REV:-HEAD}")
STEPS='llama3_8b:B=1,S=1,T=4096;llama3_8b:B=16,S=1,T=4096;gpt2:B=1,S=1,T=1024;gpt2:B=16,S=1,T=1024;'
MORE='mistral_swa:B=1,S=1,T=4096;gemma2:B=1,S=1,T=4096;qwen_bias:B=1,S=1,T=4096;'
root=$(pwd)
g=${GPU_DIR:-.gpu-var}
rm -rf "$g" && mkdir -p "$g"
cp bench/compare.py "$g/"
for name in base wide mst64 both; do
	wt=$(mktemp -d)
	git worktree add -f --detach "$wt" "$rev" >/dev/null
	(
		cd "$wt"
		f=passes/launch_attention.go
		case $name in wide | both)
			grep -q 'wideMinKeys         = 4096' $f
			sed -i 's/wideMinKeys         = 4096/wideMinKeys         = 0/' $f ;;
		esac
		case $name in mst64 | both)
			grep -q 'minSplitTokens      = 256' $f
			sed -i 's/minSplitTokens      = 256/minSplitTokens      = 64/' $f ;;
		esac
		bench=$STEPS
		[ "$name" = base ] && bench="$STEPS$MORE"
		mkdir -p "$root/$g/$name"
		go build -tags cuda -ldflags='-s -w' -o "$root/$g/$name/fuser" ./cmd/fuser
		go run -tags nvrtc ./gpu/cmd/gpukernels -out "$root/$g/$name/kernels" -suite=false -bench "$bench"
		for s in llama3_8b:B=1,S=1,T=4096 gpt2:B=1,S=1,T=1024; do
			go run ./cmd/fuser plan "${s%%:*}" -dims "${s#*:}" | grep attention_attention >>"$root/$g/$name/launch.txt"
		done
	)
	git worktree remove --force "$wt"
	echo "$rev" >"$g/$name/REVISION"
	if readelf -d "$g/$name/fuser" | grep -qi nvrtc; then echo "$g/$name/fuser links NVRTC, which the GPU machine lacks" >&2; exit 1; fi
	gzip -f "$g/$name/fuser"
done
du -sh "$g"
