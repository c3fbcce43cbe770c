#!/usr/bin/env python3
"""Where a kernel's warps wait, instruction by instruction.

Reads the CSV of ncu's source page with SASS:

  ncu --section WarpStateStats --section SourceCounters -o REP ...
  ncu -i REP.ncu-rep --page source --csv --print-source sass > SASS_CSV

and prints, for each file, the instructions with the most warp-stall
samples, their share of all samples and their stall reasons, each with the
instructions before it (the one a scoreboard wait is for is usually
there). Then, where the CSV has ncu's memory columns (the SourceCounters
section), the instructions with the most excess accesses: shared-memory
wavefronts past the ideal (bank conflicts) and global L2 sectors past the
ideal (uncoalesced), by opcode and by instruction, each with its share of
the kernel's excess, so that ncu's "uncoalesced accesses" advice comes with
its source lines.
Usage: ncu_stalls.py [--top N] [--before M] SASS_CSV... (plain or .gz)
"""
import argparse
import csv
import gzip
import sys


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("files", nargs="+")
    ap.add_argument("--top", type=int, default=6)
    ap.add_argument("--before", type=int, default=4)
    a = ap.parse_args()
    for f in a.files:
        hdr, data = read_source(f)
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
        for col, what in (("L1 Wavefronts Shared Excessive", "excess shared wavefronts"),
                          ("L2 Theoretical Sectors Global Excessive", "excess global sectors")):
            if col in hdr:
                excess(data, src, hdr.index(col), what, a.top)


def read_source(f):
    """The header row and the instruction rows of an ncu source CSV (plain
    or gzipped); exits naming the file when it has no header."""
    with (gzip.open if f.endswith(".gz") else open)(f, "rt") as fh:
        rows = list(csv.reader(fh))
    head = next((i for i, r in enumerate(rows) if r and r[0] == "Address"), None)
    if head is None:
        sys.exit(f"{f}: no ncu source CSV header (Address, Source, ...)")
    return rows[head], [r for r in rows[head + 1:] if len(r) == len(rows[head])]


def excess(data, src, col, what, top):
    """Prints the top instructions by the excess count in column col."""
    v = lambda r: int(float(r[col])) if r[col].replace(".", "", 1).isdigit() else 0
    total = sum(v(r) for r in data)
    print(f"-- {what}: {total}")
    if total == 0:
        return
    ops = {}
    for r in data:
        words = [w for w in r[src].split() if not w.startswith("@")]
        if words and v(r):
            op = words[0].split(".")[0]
            ops[op] = ops.get(op, 0) + v(r)
    print("   by opcode: " + ", ".join(f"{o} {100 * n / total:.0f}%" for o, n in sorted(ops.items(), key=lambda x: -x[1])))
    for k in sorted(range(len(data)), key=lambda k: -v(data[k]))[:top]:
        if v(data[k]) == 0:
            break
        print(f"{v(data[k]):9d} {100 * v(data[k]) / total:5.1f}%  {data[k][src].strip()}")


if __name__ == "__main__":
    main()
