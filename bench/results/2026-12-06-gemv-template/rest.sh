#!/usr/bin/env bash
# rest.sh (on the device from the repository root, .gpu carried; the bundle
# suite.sh describes): the suite cases suite.sh leaves out (the regression
# and 32 generated specs, Llama-3-8B at full size at decode and prefill),
# then .gpu/ab.sh: the fused Llama-3-8B step at decode B1 and B16 (T=4096)
# and prefill (B1, 4096 tokens), this tree and base (efd984c) in turn, two
# rounds. OUT/rest.tgz, OUT/ab/ab.tgz.
set -u
here=$(pwd)/.gpu
out=${OUT:?}
r=$(mktemp -d)/rest
mkdir -p "$r"
for f in "$here"/*.gz "$here"/base/*.gz; do [ -f "$f" ] && gunzip -f "$f"; done
chmod +x "$here"/fuser "$here"/gpu.test "$here"/ab.sh "$here"/base/fuser
timeout -k 5 240 "$here/gpu.test" -test.v -test.run '^TestSuite$' -test.timeout 10m \
	-kernels "$here/kernels" -specs "$here/genspecs" -cases '(/file/|/full/)' \
	-summary "$r/rest_summary.json" >"$r/rest.log" 2>&1
echo "rest: exit $?" | tee "$r/summary.txt"
grep -E "^(--- FAIL|ok|FAIL|PASS)" "$r/rest.log" | tail -5 | tee -a "$r/summary.txt"
gzip -f "$r/rest.log"
tar czf "$out/rest.tgz" -C "$(dirname "$r")" rest
AB_ROUNDS=2 AB_REPS=50 AB_TIMEOUT=90 "$here/ab.sh" "$out/ab"
