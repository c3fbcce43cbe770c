#!/usr/bin/env bash
# round.sh (on the device from the repository root): this round's two
# calls, one after the other on the same machine.
#   REST=0 round.sh suite   (.gpu carried): suite.sh without its rest, the
#                           on-device suite at the round's kernels;
#   round.sh ab             (.gpu-var carried): ab.sh, the A/B against
#                           6fb88a9.
set -u
case "${1:-}" in
suite) bash "$(dirname "$0")/suite.sh" ;;
ab) bash "$(dirname "$0")/ab.sh" ;;
*) echo "usage: round.sh suite|ab" >&2; exit 2 ;;
esac
