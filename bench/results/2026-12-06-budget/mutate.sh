#!/usr/bin/env bash
# mutate.sh (on the device from the repository root, .gpu carried; the
# bundle suite.sh describes): mutation runs, each expected to FAIL. After
# every eager launch of a kernel whose name matches "attention", what it
# writes is multiplied by 1.1, or by 0 (gpu.Mutation; gpu.test -mutate,
# refdump -mutate through REF_MUTATE): the suite over the small Llama-3-8B,
# tiny and Gemma-2 cases and Llama-3-8B at full size (the B=2 decode case
# of issue #19, whose layer check passed zeroed attention at 0.34 of its
# tolerance), and the external-reference check over Llama-3-8B's cases.
# OUT/mutate.tgz: per run its log, summary JSON and exit status.
set -u
here=$(pwd)/.gpu
out=${OUT:?}
r=$(mktemp -d)/mutate
mkdir -p "$r"
for f in "$here"/*.gz; do [ -f "$f" ] && gunzip -f "$f"; done
chmod +x "$here"/gpu.test "$here"/refdump "$here"/refcheck.sh
pack() { tar czf "$out/mutate.tgz" -C "$(dirname "$r")" mutate; }
for scale in 1.1 0; do
	timeout -k 5 170 "$here/gpu.test" -test.v -test.run '^TestSuite$' -test.timeout 10m -kernels "$here/kernels" \
		-cases '^(llama3_8b|tiny|gemma2)/(small|full)/' -mutate "attention=$scale" \
		-summary "$r/suite_x$scale.json" >"$r/suite_x$scale.log" 2>&1
	echo "suite, attention x$scale: exit $? (want 1)" | tee -a "$r/summary.txt"
	gzip -f "$r/suite_x$scale.log"
	pack
done
REF_MUTATE='attention=1.1' REF_CASES='^llama3_8b/' REF_TIMEOUT=200 "$here/refcheck.sh" "$r/refcheck_x1.1" >"$r/refcheck_x1.1.out" 2>&1
echo "refcheck, attention x1.1: exit $? (want 1)" | tee -a "$r/summary.txt"
grep -E '^verdict' "$r/refcheck_x1.1/summary.txt" | tee -a "$r/summary.txt"
pack
