#!/usr/bin/env python3
"""Measured against modelled HBM traffic, kernel by kernel.

Joins `fuser profile --json-out PROFILE` (each kernel's launched entries and
the cost model's compulsory bytes, fused plan then unfused plan, in launch
order) with the CSV of ncu run over the same process:

  ncu --clock-control none --metrics dram__bytes_read.sum,dram__bytes_write.sum \
      --kernel-name regex:'^k[0-9]+_' --csv --print-units base --log-file NCU_CSV \
      fuser profile SPEC -dims ... --json-out PROFILE

ncu flushes the caches before each profiled launch (its default cache
control), so every kernel starts from a cold L2, as the model assumes.
Prints a Markdown table and writes it with the rows as JSON when --out is
given. The gap per kernel is a finding, not a failure.
"""
import argparse
import csv
import json
import re
import sys


def ncu_launches(path):
    """Launches in ncu ID order: (kernel name, {metric: bytes})."""
    with open(path) as f:
        lines = f.read().splitlines()
    start = next((i for i, l in enumerate(lines) if l.startswith('"ID"')), None)
    if start is None:
        sys.exit(f"{path}: no ncu CSV header (\"ID\",...)")
    by_id = {}
    for row in csv.DictReader(lines[start:]):
        if not row.get("ID", "").isdigit():
            continue
        i = int(row["ID"])
        name, metrics = by_id.setdefault(i, (row["Kernel Name"], {}))
        metrics[row["Metric Name"]] = float(row["Metric Value"].replace(",", ""))
    return [by_id[i] for i in sorted(by_id)]


def join(profile, launches):
    rows, at = [], 0
    for k in profile["kernels"]:
        row = {"plan": k["plan"], "kernel": k["kernel"], "strategy": k["strategy"],
               "model_read": k["model_read"], "model_written": k["model_written"]}
        if k.get("skipped"):
            row["skipped"] = k["skipped"]
            rows.append(row)
            continue
        read = written = 0.0
        for entry in k["entries"]:
            if at >= len(launches):
                sys.exit(f"ncu measured {len(launches)} launches; the profile has more ({k['kernel']} {entry})")
            name, m = launches[at]
            if not re.match(re.escape(entry) + r"\b", name):
                sys.exit(f"launch {at}: ncu has {name}, the profile {entry}")
            read += m.get("dram__bytes_read.sum", 0)
            written += m.get("dram__bytes_write.sum", 0)
            at += 1
        row.update(measured_read=int(read), measured_written=int(written))
        rows.append(row)
    if at != len(launches):
        sys.exit(f"ncu measured {len(launches)} launches, the profile {at}")
    return rows


def ratio(measured, model):
    return f"{measured / model:.3f}" if model else "-"


def table(profile, rows):
    mb = lambda b: f"{b / 1e6:.3f}"
    out = [f"# Measured vs modelled HBM bytes: {profile['spec']} at "
           + ",".join(f"{k}={v}" for k, v in sorted(profile["dims"].items())), "",
           "| plan | kernel | strategy | model read MB | measured read MB | read ratio | model write MB | measured write MB | write ratio |",
           "|---|---|---|---:|---:|---:|---:|---:|---:|"]
    totals = {}
    for r in rows:
        if "skipped" in r:
            out.append(f"| {r['plan']} | {r['kernel']} | {r['strategy']} | {mb(r['model_read'])} | skipped | | {mb(r['model_written'])} | | |")
            continue
        t = totals.setdefault(r["plan"], [0, 0, 0, 0])
        for i, key in enumerate(("model_read", "measured_read", "model_written", "measured_written")):
            t[i] += r[key]
        out.append(f"| {r['plan']} | {r['kernel']} | {r['strategy']} | {mb(r['model_read'])} | {mb(r['measured_read'])} | "
                   f"{ratio(r['measured_read'], r['model_read'])} | {mb(r['model_written'])} | {mb(r['measured_written'])} | "
                   f"{ratio(r['measured_written'], r['model_written'])} |")
    for plan, t in totals.items():
        out.append(f"| {plan} | **total** | | {mb(t[0])} | {mb(t[1])} | {ratio(t[1], t[0])} | {mb(t[2])} | {mb(t[3])} | {ratio(t[3], t[2])} |")
    return "\n".join(out) + "\n"


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("profile", help="fuser profile --json-out file")
    ap.add_argument("ncu_csv", help="ncu --csv --print-units base log")
    ap.add_argument("--out", help="write OUT.md and OUT.json")
    a = ap.parse_args()
    with open(a.profile) as f:
        profile = json.load(f)
    rows = join(profile, ncu_launches(a.ncu_csv))
    md = table(profile, rows)
    print(md)
    if a.out:
        with open(a.out + ".md", "w") as f:
            f.write(md)
        with open(a.out + ".json", "w") as f:
            json.dump({"spec": profile["spec"], "dims": profile["dims"], "kernels": rows}, f, indent=1)


if __name__ == "__main__":
    main()
