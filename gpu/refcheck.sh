#!/usr/bin/env bash
# .gpu/refcheck.sh OUT: on the GPU machine, the external-reference check
# (issue #19, item 2) in one call, returned as one archive, OUT/refcheck.tgz,
# with OUT/summary.txt beside it:
#
#   refdump.log     .gpu/refdump: every case of gpu.RefCases (each shipped
#                   spec, shrunk, at decode and prefill; Llama-3-8B at full
#                   size at both; decode attention over ragged and paged
#                   caches; the every-op layers), its fused and unfused
#                   plans run on the GPU, the inputs and our results written
#                   to a data directory (not archived: the full-size layer's
#                   weights are hundreds of MB)
#   refcheck.log    .gpu/refcheck.py's table: per case, plan and result, our
#                   error and PyTorch's (bf16 as PyTorch computes it) against
#                   float64, each from the program `fuser export --torch`
#                   wrote (and, for Llama-3-8B, the layer as Meta's code
#                   writes it, bench/reference/llama3_8b.py), ours failing
#                   past RATIO times PyTorch's
#   refcheck.json   every row and check, and the summary
#   cases.json, programs/CASE/layer.py   what refdump wrote, but the data
#   summary.txt     each step's exit status and time, the table's verdict
#
# Environment: REF_CASES (regexps of the case names separated by spaces, refdump -cases),
# REF_RATIO (default 2), REF_EPS_REL (default 1e-6 of max|float64|),
# REF_TIMEOUT (seconds per step, default 300), REF_MUTATE (a mutation run:
# refdump -mutate KERNEL_REGEXP=SCALE, after which the check must fail),
# REF_DATA (keep the data there instead of a scratch directory), PYTHON
# (default python3).
# Exits 1 when a step failed or a check did not pass (refcheck.py fails a
# run where a plan was skipped or nothing was compared; its verdict line,
# in the summary, says why).
set -u
here=$(cd "$(dirname "$0")" && pwd)
out=${1:?usage: .gpu/refcheck.sh OUT}
mkdir -p "$out"
out=$(cd "$out" && pwd)
export FUSER_KERNELS="$here/kernels"
data=${REF_DATA:-$(mktemp -d)}
mkdir -p "$data"
r=$(mktemp -d)/refcheck
mkdir -p "$r"
sum=$r/summary.txt
: >"$sum"
status=0

# step NAME LOG CMD...: CMD bounded by REF_TIMEOUT, its output in LOG, its
# status and time in the summary; then the archive of what there is, so
# that a call cut short still returns it.
step() {
	local name=$1 log=$2 start rc
	shift 2
	start=$(date +%s)
	timeout -k 10 "${REF_TIMEOUT:-300}" "$@" >"$log" 2>&1
	rc=$?
	echo "$name: exit $rc after $(($(date +%s) - start)) s" >>"$sum"
	[ "$rc" = 0 ] || status=1
	tar czf "$out/refcheck.tgz" -C "$(dirname "$r")" refcheck
	cp "$sum" "$out/summary.txt"
}

cases=()
if [ -n "${REF_CASES:-}" ]; then cases=(-cases "$REF_CASES"); fi
if [ -n "${REF_MUTATE:-}" ]; then cases+=(-mutate "$REF_MUTATE"); fi
step refdump "$r/refdump.log" "$here/refdump" -out "$data" -kernels "$here/kernels" "${cases[@]}"
if [ -f "$data/cases.json" ]; then
	cp "$data/cases.json" "$r/"
	for p in "$data"/*/layer.py; do
		[ -f "$p" ] || continue
		mkdir -p "$r/programs/$(basename "$(dirname "$p")")"
		cp "$p" "$r/programs/$(basename "$(dirname "$p")")/"
	done
	step refcheck "$r/refcheck.log" env PYTHONUNBUFFERED=1 "${PYTHON:-python3}" "$here/refcheck.py" "$data" --out "$r" \
		--ratio "${REF_RATIO:-2}" --eps-rel "${REF_EPS_REL:-1e-6}"
	grep -E 'fail|FAIL|ERROR|^verdict|^\{' "$r/refcheck.log" | tail -40 >>"$sum"
else
	echo "refcheck: not run, refdump wrote no cases.json" >>"$sum"
	status=1
fi
tar czf "$out/refcheck.tgz" -C "$(dirname "$r")" refcheck
cp "$sum" "$out/summary.txt"
cat "$sum"
exit "$status"
