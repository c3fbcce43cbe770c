#!/usr/bin/env bash
# rest.sh (run on the device from the /work/main checkout's root, .gpu
# carried; the bundle suite.sh describes): the suite cases suite.sh's call
# did not reach in its 330 s (the file specs: regression and 32 generated;
# the full-size Llama-3-8B prefill case) and the determinism test, then
# bench.sh, in one call. OUT/rest.log, OUT/rest_summary.json.
set -u
here=$(pwd)/.gpu
out=${OUT:?}
for f in "$here"/*.gz; do [ -f "$f" ] && gunzip -f "$f"; done
chmod +x "$here"/gpu.test
timeout -k 5 150 "$here/gpu.test" -test.v -test.run '^(TestSuite|TestDeterministicDecode)$' -test.timeout 10m \
	-kernels "$here/kernels" -specs "$here/genspecs" -cases '(/file/|^llama3_8b/full/B=1,S=25)' \
	-summary "$out/rest_summary.json" >"$out/rest.log" 2>&1
echo "rest: exit $?" | tee "$out/rest_exit.txt"
grep -E "^(--- |ok|FAIL|PASS)" "$out/rest.log" | tail -5
gzip -f "$out/rest.log"
bash "$here/bench.sh"
