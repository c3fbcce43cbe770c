#!/usr/bin/env python3
"""A kernel's warp-stall samples by phase, in program order.

Reads the CSV of ncu's source page with SASS (ncu_stalls.read_source: plain
or gzipped) and prints, at each instruction whose SASS matches the
landmark regular expression, the samples up to and including it: their
count and their share of the kernel's samples, with the instruction's
execution count. The landmarks mark the phases of a kernel (the main loop's
wgmma and block barriers, the split join's atomic and fences, the
epilogue's partial loads and stores), so that the difference between two
lines is the share of the phase between them. Landmarks never executed are
left out unless --all.
Usage: ncu_phases.py [--marks REGEX] [--all] SASS_CSV
"""
import argparse
import re

from ncu_stalls import read_source


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("file")
    ap.add_argument("--marks", default=r"HGMMA|BAR\.SYNC|ATOMG|NANOSLEEP|MEMBAR|LDG\.E\.STRONG|STG|EXIT")
    ap.add_argument("--all", action="store_true")
    a = ap.parse_args()
    hdr, data = read_source(a.file)
    src = hdr.index("Source")
    smp = hdr.index("Warp Stall Sampling (All Samples)")
    exe = hdr.index("Instructions Executed")
    count = lambda r: int(r[smp]) if r[smp].isdigit() else 0
    total = sum(count(r) for r in data)
    marks = re.compile(a.marks)
    cum = 0
    for i, r in enumerate(data):
        cum += count(r)
        s = r[src].strip()
        if not marks.search(s) or (r[exe] in ("", "0") and not a.all):
            continue
        print(f"{i:6d} {cum:7d} {100 * cum / max(total, 1):5.1f}%  exec {r[exe]:>8}  {s[:80]}")
    print(f"total {total} samples")


if __name__ == "__main__":
    main()
