#!/usr/bin/env bash
# suite.sh (on the device from the repository root, .gpu carried): the
# on-device suite's small cases, fused and unfused, with the error budget
# of gpu/budget.go beside the dtype tolerances, and the determinism test,
# through gpu/run.sh (runtime tests, suite; no ladder, sanitizers, bench,
# compare, ncu or refcheck: the kernels are those of the last full run,
# bench/results/2026-12-06-rows/final). .gpu: the rows round's bundle
# (make gpu-bundle at c370371, whose kernels the tree still generates byte
# for byte) with gpu.test and refdump rebuilt at this directory's commit
# (go test -c -tags cuda; go build -tags cuda ./gpu/cmd/refdump; gzipped)
# and gpu/run.sh, gpu/refcheck.sh copied in. OUT/suite.tgz holds run.sh's
# RESULTS_DIR.
set -u
here=$(pwd)/.gpu
out=${OUT:?}
r=$(mktemp -d)/suite
mkdir -p "$r"
for f in "$here"/*.gz; do [ -f "$f" ] && gunzip -f "$f"; done
chmod +x "$here"/fuser "$here"/gpu.test "$here"/runtime.test "$here"/refdump "$here"/run.sh "$here"/refcheck.sh
(while sleep 20; do tar czf "$out/suite.tgz.part" -C "$(dirname "$r")" suite && mv "$out/suite.tgz.part" "$out/suite.tgz"; done) &
tarloop=$!
SUITE_CASES='/small/' SKIP_LADDER=1 SKIP_SANITIZER=1 SKIP_BENCH=1 SKIP_COMPARE=1 SKIP_NCU=1 SKIP_REFCHECK=1 \
	STEP_TIMEOUT=${SUITE_TIMEOUT:-500} "$here/run.sh" "$r"
echo "run.sh: exit $?" >>"$r/summary.txt"
kill "$tarloop" 2>/dev/null
gzip -f "$r/suite.log"
tar czf "$out/suite.tgz" -C "$(dirname "$r")" suite
cat "$r/summary.txt"
