#!/usr/bin/env bash
# round.sh (as run on the device from .gpu-var/ of the /work/main checkout,
# with .gpu-var carried): the wgmma GEMM's speed round. Each variant under
# .gpu-var/v is the fuser CLI (go build -tags cuda -ldflags='-s -w', then
# gzip -9) and the kernels (go run -tags nvrtc ./gpu/cmd/gpukernels -out
# .gpu-var/v/NAME/kernels -bench 'llama3_8b:B=1,S=4096,T=0;llama3_8b:B=1,S=512,T=0;'
# -suite=false) of one tree: new = the tree of the commit that added this
# directory with plan.GemmWGK 64, plan.GemmWGStages 4 and no batched loop in
# the tile epilogue (gemm_wgmma.go passing batch 0 to emitTileEpilogue);
# bk32 = new with plan.GemmWGK 32 and plan.GemmWGStages 8 (the commit's
# values); g8 = new with FZ_GEMM_WG_GROUP 8; noepi = new without the tile
# epilogue (an ablation: its outputs are wrong). It times the Llama-3-8B prefill layer (B=1, S=4096
# and 512, no cache) with each, then bench/compare.py's prefill anchors
# (PyTorch eager, CUDA graph, torch.compile, cuBLAS per projection) beside
# new's, then Nsight Compute over new's output and down projections
# (gpu/ncu.sh).
set -u
here=$(cd "$(dirname "$0")" && pwd)
out=${OUT:?}
r=$(mktemp -d)/round
mkdir -p "$r"
sum=$r/summary.txt
nvidia-smi --query-gpu=name,clocks.max.sm,clocks.max.mem --format=csv,noheader >"$sum"
save() { tar czf "$out/round.tgz" -C "$(dirname "$r")" round; cp "$sum" "$out/summary.txt"; }
for f in "$here"/v/*/fuser.gz; do gunzip -f "$f"; chmod +x "${f%.gz}"; done
bench() {
	local name=$1 tag=$2 start=$(date +%s)
	timeout -k 10 120 "$here/v/$name/fuser" bench llama3_8b -dims B=1,S=4096,T=0 -dims B=1,S=512,T=0 \
		-kernels "$here/v/$name/kernels" -reps 20 -unfused=false -json-out "$r/$name.$tag.json" >"$r/$name.$tag.txt" 2>&1
	echo "$name.$tag: exit $? after $(($(date +%s) - start)) s" >>"$sum"
	grep -E 'step:|k0[1356]_gemm' "$r/$name.$tag.txt" >>"$sum"
	save
}
bench new 1
bench bk32 1
bench g8 1
bench noepi 1
bench new 2
start=$(date +%s)
timeout -k 10 240 env PYTHONUNBUFFERED=1 python3 "$here/compare.py" --prefill-only --prefill 4096,512 \
	--ours "$r/new.1.json" --out "$r/compare" >"$r/compare.log" 2>&1
echo "compare: exit $? after $(($(date +%s) - start)) s" >>"$sum"
sed -n '/^prefill, Llama/,$p' "$r/compare.log" >>"$sum"
save
cp "$here/ncu.sh" "$here/ncu_stalls.py" "$here/bench.env" "$here/v/new/"
NCU_TIMEOUT=100 "$here/v/new/ncu.sh" "$r/ncu" k03:'^k03_gemm':B=1,S=4096,T=0 k06:'^k06_gemm':B=1,S=4096,T=0 >>"$sum" 2>&1
save
