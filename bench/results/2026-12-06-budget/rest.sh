#!/usr/bin/env bash
# rest.sh (on the device from the repository root, .gpu carried; the bundle
# suite.sh describes): the suite cases suite.sh leaves out (the regression
# and 32 generated specs of .gpu/genspecs, Llama-3-8B at full size at
# decode and prefill), then the external-reference check (.gpu/refcheck.sh:
# every case of gpu.RefCases, Llama-3-8B at full size included), in one
# call. OUT/rest.tgz.
set -u
here=$(pwd)/.gpu
out=${OUT:?}
r=$(mktemp -d)/rest
mkdir -p "$r"
for f in "$here"/*.gz; do [ -f "$f" ] && gunzip -f "$f"; done
chmod +x "$here"/gpu.test "$here"/refdump "$here"/refcheck.sh
pack() { tar czf "$out/rest.tgz" -C "$(dirname "$r")" rest; }
timeout -k 5 240 "$here/gpu.test" -test.v -test.run '^TestSuite$' -test.timeout 10m \
	-kernels "$here/kernels" -specs "$here/genspecs" -cases '(/file/|/full/)' \
	-summary "$r/rest_summary.json" >"$r/rest.log" 2>&1
echo "rest: exit $?" | tee "$r/summary.txt"
grep -E "^(--- FAIL|ok|FAIL|PASS)" "$r/rest.log" | tail -5 | tee -a "$r/summary.txt"
gzip -f "$r/rest.log"
pack
REF_TIMEOUT=280 "$here/refcheck.sh" "$r/refcheck" >"$r/refcheck.out" 2>&1
echo "refcheck: exit $?" | tee -a "$r/summary.txt"
grep -E '^verdict|exit' "$r/refcheck/summary.txt" | tee -a "$r/summary.txt"
pack
