#!/usr/bin/env python3
"""Where a kernel's warps wait, instruction by instruction.

Reads the CSV of ncu's source page with SASS:

  ncu --section WarpStateStats --section SourceCounters -o REP ...
  ncu -i REP.ncu-rep --page source --csv --print-source sass > SASS_CSV

and prints, for each file, the instructions with the most warp-stall
samples, their share of all samples and their stall reasons, each with the
instructions before it (the one a scoreboard wait is for is usually
there). Usage: ncu_stalls.py [--top N] [--before M] SASS_CSV...
"""
import argparse
import csv
import sys


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("files", nargs="+")
    ap.add_argument("--top", type=int, default=6)
    ap.add_argument("--before", type=int, default=4)
    a = ap.parse_args()
    for f in a.files:
        rows = list(csv.reader(open(f)))
        head = next((i for i, r in enumerate(rows) if r and r[0] == "Address"), None)
        if head is None:
            sys.exit(f"{f}: no ncu source CSV header (Address, Source, ...)")
        hdr, data = rows[head], [r for r in rows[head + 1:] if len(r) == len(rows[head])]
        src, smp = hdr.index("Source"), hdr.index("Warp Stall Sampling (All Samples)")
        why = [i for i, h in enumerate(hdr) if h.startswith("stall_") and "Not Issued" not in h]
        n = lambda r: int(r[smp]) if r[smp].isdigit() else 0
        total = sum(n(r) for r in data)
        print(f"== {f}: {total} samples, {len(data)} instructions")
        for k in sorted(range(len(data)), key=lambda k: -n(data[k]))[:a.top]:
            r = data[k]
            reasons = ", ".join(f"{hdr[i][6:]} {r[i]}" for i in why if r[i] not in ("", "0"))
            print(f"{n(r):7d} {100 * n(r) / max(total, 1):5.1f}%  {r[src].strip()}   [{reasons}]")
            for p in data[max(k - a.before, 0):k]:
                print(f"{'':15s}before: {p[src].strip()}")


if __name__ == "__main__":
    main()
