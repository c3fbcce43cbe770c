#!/usr/bin/env python3
"""The external-reference check (issue #19, item 2), on the GPU machine.

    python3 bench/refcheck.py DIR [--out OUT] [--device cuda] [--ratio 2] [--eps-rel 1e-6]

DIR is what gpu/cmd/refdump wrote: cases.json and, per case, the layer's
program exported by `fuser export --torch` (layer.py), its inputs
(inputs.safetensors) and our fused and unfused plans' outputs and states
after the step (fused.safetensors, unfused.safetensors). For every case and
every result (output, or state an append writes) it computes

    ref64   the exported program in float64 (every op in float64)
    torch   the exported program in the spec's dtypes, as PyTorch computes
            them (bf16 matmuls accumulating in float32, ...)

and requires, as FlashAttention's tests do,

    max|ours - ref64| <= RATIO * max|torch - ref64| + EPS_REL * max|ref64|

(an element that is not finite in ours where ref64 is finite fails). For
Llama-3-8B it also runs bench/reference/llama3_8b.py, the layer written as
Meta's reference code writes it, which must agree with the exported
program in float64 to 1e-9 of the result's largest magnitude (both
references would otherwise share a mistake), and reports that reference's
own bf16 error beside PyTorch's. Once per run, one small case's program is
also run through its own main, as a user would, and must write what
layer() returns.

Prints a table (case, plan, result, our err, torch err, ratio, pass),
writes OUT/refcheck.json, and exits 1 unless every plan of every case was
compared and passed: a failed comparison or check, a case that could not
run, a plan skipped (refdump could not run it or read its results) or no
comparison at all each fail the run, and the verdict line says which.
"""
import argparse
import importlib.util
import json
import math
import os
import subprocess
import sys
import tempfile

import torch
from safetensors.torch import load_file

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "reference"))
import llama3_8b  # noqa: E402  (bench/reference, or beside this file in .gpu/reference)

AGREE = 1e-9  # the two float64 references, relative to max|ref64|


def load_program(path, name):
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def max_err(x, ref):
    """max|x - ref| over the elements where ref is finite (inf where x is
    not finite there), and whether x equals ref where ref is not finite."""
    x, ref = x.double(), ref.double()
    fin = torch.isfinite(ref)
    d = (x - ref).abs()
    d = torch.where(fin, d, torch.zeros_like(d))
    d = torch.nan_to_num(d, nan=math.inf)
    err = d.max().item() if d.numel() else 0.0
    odd = ~fin
    same = bool(((x[odd] == ref[odd]) | (torch.isnan(x[odd]) & torch.isnan(ref[odd]))).all()) if odd.any() else True
    return err, same


def scale(ref):
    fin = ref.double()[torch.isfinite(ref)]
    return fin.abs().max().item() if fin.numel() else 0.0


def check_main(case, root, dev, ref):
    """Runs the case's program as a user would (python3 layer.py INPUTS) and
    compares what its main wrote in ref64 with layer()'s results."""
    with tempfile.TemporaryDirectory() as tmp:
        prefix = os.path.join(tmp, "out")
        cmd = [sys.executable, os.path.join(root, case["program"]), os.path.join(root, case["inputs"]),
               "--mode", "ref64", "--out", prefix, "--device", dev,
               "--dims", ",".join(f"{k}={v}" for k, v in case["dims"].items())]
        p = subprocess.run(cmd, capture_output=True, text=True)
        if p.returncode != 0:
            return False, f"{' '.join(cmd)}: exit {p.returncode}: {p.stderr[-2000:]}"
        got = load_file(prefix + ".ref64.safetensors", device=dev)
        for name in case["results"]:
            err, same = max_err(got[name], ref[name])
            if err > AGREE * scale(ref[name]) or not same:
                return False, f"{name}: main's ref64 is {err:.3g} off layer()'s"
    return True, "main wrote layer()'s results"


def run_case(case, root, args, rows, notes):
    dev = args.device
    mod = load_program(os.path.join(root, case["program"]), "layer_" + case["program"].split("/")[0])
    t = load_file(os.path.join(root, case["inputs"]), device=dev)
    dims = case["dims"]
    with torch.no_grad():
        ref = mod.layer(t, dims, "ref64")
        nat = mod.layer(t, dims, "native")
    meta = None
    if case["spec"] == "llama3_8b":
        hand = llama3_8b.layer(t, case["consts"], torch.float64)
        for name in case["results"]:
            err, same = max_err(hand[name], ref[name])
            ok = err <= AGREE * scale(ref[name]) and same
            notes.append({"case": case["name"], "check": f"references agree ({name})", "pass": ok,
                          "detail": f"max|meta64 - ref64| = {err:.3g}, {err / max(scale(ref[name]), 1e-300):.3g} of max|ref64|"})
        meta = llama3_8b.layer(t, case["consts"], torch.bfloat16)
    if args.check_main and not case["full"]:
        ok, detail = check_main(case, root, dev, ref)
        notes.append({"case": case["name"], "check": "program main", "pass": ok, "detail": detail})
        args.check_main = False
    for plan in ["fused", "unfused"]:
        info = case["plans"].get(plan, {"skip": "not run"})
        if "file" not in info:
            rows.append({"case": case["name"], "plan": plan, "result": "-", "status": "skip", "detail": info.get("skip", "")})
            continue
        ours = load_file(os.path.join(root, info["file"]), device=dev)
        for name in case["results"]:
            if name not in ours:
                rows.append({"case": case["name"], "plan": plan, "result": name, "status": "fail",
                             "detail": f"not in {info['file']}"})
                continue
            r, o, n = ref[name], ours[name], nat[name]
            if list(o.shape) != list(r.shape):
                rows.append({"case": case["name"], "plan": plan, "result": name, "status": "fail",
                             "detail": f"shape {list(o.shape)}, the reference's {list(r.shape)}"})
                continue
            ours_err, ours_same = max_err(o, r)
            torch_err, _ = max_err(n, r)
            eps = args.eps_rel * scale(r)
            ok = ours_same and ours_err <= args.ratio * torch_err + eps
            row = {"case": case["name"], "plan": plan, "result": name, "status": "pass" if ok else "fail",
                   "ours_err": ours_err, "torch_err": torch_err, "eps": eps, "max_ref": scale(r),
                   "ratio": ours_err / torch_err if torch_err > 0 else (0.0 if ours_err == 0 else math.inf)}
            if meta is not None and name in meta:
                row["meta_bf16_err"] = max_err(meta[name], r)[0]
            if not ours_same:
                row["detail"] = "not finite where the reference is not, differently"
            rows.append(row)


def matmul_flags():
    """PyTorch's matmul settings the native results were computed under."""
    m = torch.backends.cuda.matmul
    try:
        return {"allow_tf32": m.allow_tf32, "allow_bf16_reduced_precision_reduction": m.allow_bf16_reduced_precision_reduction,
                "allow_fp16_reduced_precision_reduction": m.allow_fp16_reduced_precision_reduction}
    except (AssertionError, AttributeError):  # an older PyTorch
        return {}


def finite(x):
    """x with infinities and NaNs as strings, so that the JSON is standard."""
    if isinstance(x, dict):
        return {k: finite(v) for k, v in x.items()}
    if isinstance(x, list):
        return [finite(v) for v in x]
    if isinstance(x, float) and not math.isfinite(x):
        return str(x)
    return x


def table(rows, notes):
    lines = [f"{'case':<44} {'plan':<8} {'result':<6} {'our err':>10} {'torch err':>10} {'ratio':>7} {'meta bf16':>10}  pass"]
    for r in rows:
        if r["status"] == "skip":
            lines.append(f"{r['case']:<44} {r['plan']:<8} {'-':<6} {'':>10} {'':>10} {'':>7} {'':>10}  skip: {r['detail']}")
            continue
        if "ours_err" not in r:
            lines.append(f"{r['case']:<44} {r['plan']:<8} {r['result']:<6} {'':>41}  fail: {r['detail']}")
            continue
        meta = f"{r['meta_bf16_err']:.3g}" if "meta_bf16_err" in r else ""
        lines.append(f"{r['case']:<44} {r['plan']:<8} {r['result']:<6} {r['ours_err']:>10.3g} {r['torch_err']:>10.3g} "
                     f"{r['ratio']:>7.3f} {meta:>10}  {r['status']}")
    for n in notes:
        lines.append(f"{n['case']}: {n['check']}: {'pass' if n['pass'] else 'FAIL'} ({n['detail']})")
    return "\n".join(lines)


def verdict(rows, notes, errors):
    """Why the run did not pass (empty when it did): a comparison or check
    that failed, a case that could not run, a plan not checked (a skip is
    never a pass), or no comparison passing at all."""
    why = []
    fails = [r for r in rows if r["status"] == "fail"]
    if fails:
        why.append(f"{len(fails)} comparison(s) failed, first {fails[0]['case']} {fails[0]['plan']} {fails[0]['result']}")
    bad = [n for n in notes if not n["pass"]]
    if bad:
        why.append(f"{len(bad)} check(s) failed, first {bad[0]['case']}: {bad[0]['check']}")
    if errors:
        why.append(f"{len(errors)} case(s) could not run, first {errors[0]['case']}: {errors[0]['error']}")
    skips = [r for r in rows if r["status"] == "skip"]
    if skips:
        why.append(f"{len(skips)} plan(s) not checked, first {skips[0]['case']} {skips[0]['plan']}: {skips[0]['detail']}")
    if not any(r["status"] == "pass" for r in rows):
        why.append("no comparison passed")
    return why


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("dir", help="refdump's output: cases.json and the case directories")
    ap.add_argument("--out", help="directory of refcheck.json (default: DIR)")
    ap.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    ap.add_argument("--ratio", type=float, default=2.0, help="ours may be this many times PyTorch's error")
    ap.add_argument("--eps-rel", type=float, default=1e-6, help="plus this much of max|ref64|")
    ap.add_argument("--cases", default="", help="only the cases whose name contains this")
    args = ap.parse_args(argv)
    args.check_main = True
    out = args.out or args.dir
    os.makedirs(out, exist_ok=True)
    with open(os.path.join(args.dir, "cases.json")) as f:
        manifest = json.load(f)
    rows, notes, errors = [], [], []
    for case in manifest["cases"]:
        if args.cases not in case["name"]:
            continue
        try:
            run_case(case, args.dir, args, rows, notes)
        except Exception as e:  # a case that cannot run fails, and the others still run
            errors.append({"case": case["name"], "error": f"{type(e).__name__}: {e}"})
            print(f"{case['name']}: {type(e).__name__}: {e}", file=sys.stderr)
        if args.device == "cuda":
            torch.cuda.empty_cache()
    why = verdict(rows, notes, errors)
    summary = {
        "torch": torch.__version__,
        "device": torch.cuda.get_device_name() if args.device == "cuda" else args.device,
        "matmul": matmul_flags(),
        "ratio": args.ratio, "eps_rel": args.eps_rel,
        "passed": not why, "why": why,
        "counts": {s: sum(r["status"] == s for r in rows) for s in ["pass", "fail", "skip"]},
        "worst_ratio": max((r["ratio"] for r in rows if "ratio" in r), default=0.0),
        "rows": rows, "checks": notes, "errors": errors,
    }
    print(table(rows, notes))
    for e in errors:
        print(f"{e['case']}: ERROR {e['error']}")
    print("verdict: " + ("pass" if not why else "FAIL: " + "; ".join(why)))
    print(json.dumps({k: summary[k] for k in ["torch", "device", "passed", "counts", "worst_ratio"]}))
    with open(os.path.join(out, "refcheck.json"), "w") as f:
        json.dump(finite(summary), f, indent=1)
    return 0 if summary["passed"] else 1


if __name__ == "__main__":
    sys.exit(main())
