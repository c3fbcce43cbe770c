#!/usr/bin/env bash
# bench/decode_variants.sh prepare DIR | run DIR OUTDIR
#
# Ablations of the generated decode attention kernel, timed beside cuDNN in
# one call. `prepare` (here, with Go) generates the kernels.cu of each
# configuration with fuser build and derives the variants by editing one
# line each; `run` (on the GPU machine, which has nvcc but no Go; DIR
# carried) compiles each with the harness (bench/decode_variants/harness.cu)
# and times it at the issue's shapes, then the SDPA anchors by compare.py's
# method. Variants, at each shape's plan (base):
#   nomerge    the last split does not merge (the merge's cost)
#   nocompute  no scores, softmax or P·V: only the tile loads (the compute's cost)
#   nohint     cp.async without the L2::128B prefetch hint
#   nobulk     every tile by cp.async into padded rows: no tensor copy engine
#   g33        B1: 33 splits at two blocks an SM (deterministic mode's
#              fixed chunk of 1008 keys), the plan before one block an SM
# and, for solo (B1), the steps from the loads to the whole kernel:
#   nocompute-nopart   the loads alone: no compute, and the block ends after
#                      its last tile (no partial, no arrival, no merge)
#   nocompute-nomerge  the loads, the partials and the arrival, no merge
# and wide, the 8-warp kernel (3 stages a warp, one block an SM) that the
# plan gives long splits filling the SMs (B16 L8192, B1 L131072), beside
# solo and pair at the same shapes (solo and pair are generated at shapes
# whose plans take 4 warps: B1 L4096, B64 L4096; every kernel gets a
# workspace for all the harness's shapes),
# and the kernels of bench/specs/decode_attention_paged.fu over pools of
# 16-token pages that each sequence owns in a random order (as fuser bench
# draws them) and in order (paged-solo, paged-pair; the harness built with
# -DPAGED). NCU=1 adds, after the timings, ncu's warp-stall samples per
# instruction of the contiguous and the paged kernel at B16 L8192 and B1
# L32768 (pages shuffled), summarised by bench/ncu_stalls.py: stalls.txt.
# `run` first times bench/decode_variants/read_floor.cu, the fastest read of
# each shape's K and V bytes under the same timing (floor.txt), and
# bench/decode_variants/loader.cu, the kernel's tile loop alone by three
# copy paths (loader.txt).
set -eu
cmd=${1:?prepare or run}; D=${2:?dir}
case "$cmd" in
prepare)
	mkdir -p "$D"
	S=bench/specs/decode_attention.fu
	gen() {
		rm -rf "$D/_b"; go run ./cmd/fuser build "$S" -dims "$2" $3 -o "$D/_b" >/dev/null
		sed 's/^static __device__ float fz_workspace\[[0-9]*\];$/static __device__ float fz_workspace[4194304];/' "$D/_b/kernels.cu" > "$D/$1.cu"; rm -rf "$D/_b"
		grep -q 'fz_workspace\[4194304\]' "$D/$1.cu" || { echo "$1: no workspace to size"; exit 1; }
	}
	gen solo B=1,S=1,T=4095 ""
	gen pair B=64,S=1,T=4095 ""
	gen wide B=16,S=1,T=8191 ""
	grep -q '__launch_bounds__(256, 1) k01_attention_attention(' "$D/wide.cu" || { echo "wide: not an 8-warp kernel"; exit 1; }
	gen g33 B=1,S=1,T=32767 "-split-keys 1008"
	S=bench/specs/decode_attention_paged.fu
	gen paged-solo B=1,S=1,T=4095,P=256,N=256 ""
	gen paged-pair B=64,S=1,T=4095,P=16384,N=16384 ""
	for v in solo pair; do
		sed 's/^          if (!fz_att_last) continue;$/          continue;/' "$D/$v.cu" > "$D/$v-nomerge.cu"
		python3 - "$D/$v.cu" "$D/$v-nocompute.cu" <<'PY'
import sys
s = open(sys.argv[1]).read()
a = s.index("            if constexpr (BULK) fz_att_qk_sw<DP, QREG, BF>(s, qf, sq, fz_smem_addr(sk), lane);")
b = s.index("\n", s.index("            else fz_att_pv<DP, 16, NPAIR, BF>(o, p, sk + 16 * LDS, lane, 0, 1);"))
open(sys.argv[2], "w").write(s[:a] + "            o[0][0] += (float)sk[lane] + (float)sk[16 * LDS + lane];" + s[b:])
PY
		sed 's/cp.async.cg.shared.global.L2::128B /cp.async.cg.shared.global /' "$D/$v.cu" > "$D/$v-nohint.cu"
		sed 's/constexpr bool BULK = FZ_TMA && /constexpr bool BULK = false \&\& /' "$D/$v.cu" > "$D/$v-nobulk.cu"
	done
	sed 's/^          if (!fz_att_last) continue;$/          continue;/' "$D/solo-nocompute.cu" > "$D/solo-nocompute-nomerge.cu"
	python3 - "$D/solo-nocompute.cu" "$D/solo-nocompute-nopart.cu" <<'PY'
import sys
s = open(sys.argv[1]).read()
a = "          fz_cp_wait<0>();\n          fz_att_lsum(l);\n"
if s.count(a) != 1: sys.exit("nopart: the loop's end not found")
open(sys.argv[2], "w").write(s.replace(a, "          fz_cp_wait<0>();\n          if (o[0][0] == 12345.f) ws[0] = 1.f;\n          continue;\n          fz_att_lsum(l);\n"))
PY
	for x in nomerge nopart; do
		if cmp -s "$D/solo-nocompute.cu" "$D/solo-nocompute-$x.cu"; then echo "solo-nocompute-$x: the edit did not apply"; exit 1; fi
	done
	for v in solo pair; do
		for x in nomerge nocompute nohint nobulk; do
			if cmp -s "$D/$v.cu" "$D/$v-$x.cu"; then echo "$v-$x: the edit did not apply"; exit 1; fi
		done
	done
	cp bench/decode_variants/harness.cu bench/decode_variants/timing.cuh bench/decode_variants/read_floor.cu bench/decode_variants/loader.cu bench/compare.py bench/ncu_stalls.py "$D/"
	ls "$D"
	;;
run)
	R=${3:?outdir}; mkdir -p "$R"; B=/tmp/decode_variants; mkdir -p $B
	D=$(cd "$D" && pwd)
	for f in "$D"/*.cu; do
		v=$(basename "$f" .cu); case "$v" in harness | read_floor | loader) continue ;; esac
		paged=""; case "$v" in paged-*) paged=-DPAGED ;; esac
		nth=""; case "$v" in wide*) nth=-DNTH=256 ;; esac
		nvcc -O3 -gencode=arch=compute_90a,code=sm_90a -std=c++17 -w -lineinfo $paged $nth -DKFILE="\"$f\"" -o "$B/$v" "$D/harness.cu" -lcuda &
	done
	nvcc -O3 -gencode=arch=compute_90a,code=sm_90a -std=c++17 -w -o "$B/read_floor" "$D/read_floor.cu" &
	nvcc -O3 -gencode=arch=compute_90a,code=sm_90a -std=c++17 -w -o "$B/loader" "$D/loader.cu" -lcuda &
	wait
	# K and V bytes of B1 L4096, B1 L32768, B1 L131072 and B16 L8192, B64 L4096.
	"$B/read_floor" 16777216 134217728 536870912 1073741824 > "$R/floor.txt"
	grep -v '^read ' "$R/floor.txt"
	"$B/loader" | tee "$R/loader.txt"
	solo=213248 pair=108800
	{
		for v in solo solo-nomerge solo-nocompute solo-nocompute-nomerge solo-nocompute-nopart solo-nohint solo-nobulk; do
			for l in 4096 32768 131072; do "$B/$v" 1 $l 16 $solo "$v"; done
		done
		for l in 32768 131072; do "$B/g33" 1 $l 33 $pair g33; done
		for l in 32768 131072; do "$B/wide" 1 $l 16 $solo wide; done
		"$B/wide" 16 8192 1 $solo wide; "$B/wide" 64 4096 1 $solo wide
		for v in pair pair-nomerge pair-nocompute pair-nohint pair-nobulk; do
			"$B/$v" 16 8192 2 $pair "$v"; "$B/$v" 64 4096 1 $pair "$v"
		done
		for o in shuffled ordered; do
			for l in 32768 131072; do "$B/paged-solo" 1 $l 16 $solo "paged-$o" $o; done
			"$B/paged-pair" 16 8192 2 $pair "paged-$o" $o; "$B/paged-pair" 64 4096 1 $pair "paged-$o" $o
		done
	} | tee "$R/variants.txt"
	python3 "$D/compare.py" --attention-only --shapes 1x4096,1x32768,1x131072,16x8192,64x4096 --out "$R" > "$R/anchors.txt" 2>&1
	python3 - "$R/anchors.json" <<'PY'
import json, sys
a = json.load(open(sys.argv[1]))["decode_attention"]
for k, row in a.items():
    for n in ("flash", "cudnn"):
        x = row.get(n)
        if isinstance(x, dict):
            print(f"{n:14s} {k}: per-launch median {x['us']:.2f} us {x['TBps']:.2f} TB/s | do_bench {x['do_bench_us']:.2f} us")
PY
	if [ "${NCU:-0}" = 1 ]; then
		ncu=$(command -v ncu || echo /usr/local/cuda/bin/ncu)
		for x in "pair 16 8192 2 $pair" "paged-pair 16 8192 2 $pair" "solo 1 32768 16 $solo" "paged-solo 1 32768 16 $solo"; do
			set -- $x; v=$1; shift
			"$ncu" --clock-control none --kernel-name regex:k01 --launch-skip 3 --launch-count 1 --section WarpStateStats \
				--section SourceCounters -f -o "$B/$v-$2" "$B/$v" "$@" "$v" shuffled > /dev/null 2>&1
			"$ncu" -i "$B/$v-$2.ncu-rep" --page source --csv --print-source sass > "$B/$v-$2.csv"
		done
		python3 "$D/ncu_stalls.py" "$B"/*-8192.csv "$B"/*-32768.csv > "$R/stalls.txt"
	fi
	;;
*) echo "usage: $0 prepare DIR | run DIR OUTDIR"; exit 2 ;;
esac
