#!/usr/bin/env python3
"""PyTorch anchors on the same shapes as fuser's benchmarks, in the same run.

Usage on the GPU machine (no Go there):
    python3 bench/compare.py --ours RESULTS/fuser_bench.json --out RESULTS [--prefill 4096,512]
Measures the anchors (PyTorch eager, eager + CUDA graph, torch.compile of the
Llama-3-8B layer at decode and, with --prefill, at prefill, with the layer's
GEMMs through cuBLAS; SDPA flash and cuDNN for decode attention and, with
--prefill-attention, for causal prefill attention; copy
bandwidth and GEMM ceilings), reads fuser's own measurements from --ours when
given, and writes anchors.json, compare.json (ratios; ours beside the prefill
anchors under prefill) and compare.png (when matplotlib is there).
"""
import argparse, json, math, os, sys

import torch
import torch.nn.functional as F
from triton.testing import do_bench
from torch.nn.attention import sdpa_kernel, SDPBackend

DEV = "cuda"


def bench_ms(fn, rep=200):
    return do_bench(fn, warmup=25, rep=rep, return_mode="median")


def ceilings():
    x = torch.randn(1 << 30, device=DEV, dtype=torch.bfloat16)
    y = torch.empty_like(x)
    copy = 2 * x.numel() * 2 / bench_ms(lambda: y.copy_(x)) / 1e9
    del x, y
    a = torch.randn(8192, 8192, device=DEV, dtype=torch.bfloat16)
    b = torch.randn_like(a)
    gemm = 2 * 8192 ** 3 / bench_ms(lambda: a @ b) / 1e9
    return {"copy_TBps": round(copy, 3), "gemm_bf16_TFLOPs": round(gemm, 1)}


def launch_median_us(f, reps=100, warmup=10):
    """fuser bench's method (gpu/benchrun.go): f(r) timed between two events a
    launch, every launch queued behind a sleeping kernel so that the events
    time the GPU and not the host, f rotating its buffers; the median in us."""
    for r in range(warmup):
        f(r)
    torch.cuda.synchronize()
    start = [torch.cuda.Event(enable_timing=True) for _ in range(reps)]
    end = [torch.cuda.Event(enable_timing=True) for _ in range(reps)]
    torch.cuda._sleep(reps * 100_000)  # about 50 us a launch at 2 GHz
    for r in range(reps):
        start[r].record()
        f(warmup + r)
        end[r].record()
    torch.cuda.synchronize()
    us = sorted(a.elapsed_time(b) * 1e3 for a, b in zip(start, end))
    return us[reps // 2]


def decode_attention(shapes):
    """SDPA flash and cuDNN on our decode shapes, timed as fuser bench times
    ours (us, TBps: K/V copies rotated over 3x the L2, a launch between two
    events) and, as ANCHORS.md did, by do_bench with its L2 flush before each
    call (do_bench_us: the flush's write-back also costs the call time)."""
    out = {}
    l2 = getattr(torch.cuda.get_device_properties(0), "L2_cache_size", 60 << 20)
    for (b, l) in shapes:
        q = torch.randn(b, 32, 1, 128, device=DEV, dtype=torch.bfloat16)
        kv_bytes = 2 * b * 8 * l * 128 * 2
        rot = max(1, -(-3 * l2 // kv_bytes))
        ks = [torch.randn(b, 8, l, 128, device=DEV, dtype=torch.bfloat16) for _ in range(rot)]
        vs = [torch.randn_like(ks[0]) for _ in range(rot)]
        row = {"kv_bytes": kv_bytes, "rotation": rot}
        for name, be in [("flash", SDPBackend.FLASH_ATTENTION), ("cudnn", SDPBackend.CUDNN_ATTENTION)]:
            try:
                with sdpa_kernel(be):
                    f = lambda r: F.scaled_dot_product_attention(q, ks[r % rot], vs[r % rot], enable_gqa=True)
                    us = launch_median_us(f)
                    db = bench_ms(lambda: f(0)) * 1e3
                row[name] = {"us": round(us, 2), "TBps": round(kv_bytes / us / 1e6, 3), "do_bench_us": round(db, 2)}
            except Exception as e:  # a backend may refuse a shape
                row[name] = "err: " + str(e)[:80]
        out[f"B{b}_L{l}"] = row
        del q, ks, vs
    return out


def causal_flops(b, n, h=32, dh=128):
    """The FLOPs of causal attention over n queries and n keys: query i
    sees i + 1 keys, 4·dh FLOPs a (query, key) pair a head (QKᵀ and PV)."""
    return 4 * dh * h * b * n * (n + 1) // 2


def prefill_attention(shapes):
    """SDPA flash and cuDNN causal attention on our prefill shapes (32 query
    heads over 8 kv heads of 128, bf16, no cache), timed as fuser bench times
    ours; TFLOPs = causal_flops / median time."""
    out = {}
    for (b, n) in shapes:
        q = torch.randn(b, 32, n, 128, device=DEV, dtype=torch.bfloat16)
        k = torch.randn(b, 8, n, 128, device=DEV, dtype=torch.bfloat16)
        v = torch.randn_like(k)
        row = {"flops": causal_flops(b, n)}
        for name, be in [("flash", SDPBackend.FLASH_ATTENTION), ("cudnn", SDPBackend.CUDNN_ATTENTION)]:
            try:
                with sdpa_kernel(be):
                    us = launch_median_us(lambda r: F.scaled_dot_product_attention(q, k, v, is_causal=True, enable_gqa=True), reps=20)
                row[name] = {"us": round(us, 2), "TFLOPs": round(row["flops"] / us / 1e6, 1)}
            except Exception as e:  # a backend may refuse a shape
                row[name] = "err: " + str(e)[:80]
        out[f"B{b}_N{n}"] = row
        del q, k, v
    return out


def prefill_attention_table(anchors, ours):
    """Prefill attention side by side: ours (fuser bench's prefill_attention
    rows) against SDPA flash and cuDNN, TFLOP/s and their time / ours."""
    lines, table = [], {}
    for key, a in anchors.get("prefill_attention", {}).items():
        mine = ours.get("prefill_attention", {}).get(key, {})
        parts = [key]
        if mine.get("us"):
            parts.append(f"ours {mine['us']:.1f} us {a['flops'] / mine['us'] / 1e6:.0f} TFLOP/s")
            table[f"prefill attention {key} ours TFLOPs"] = round(a["flops"] / mine["us"] / 1e6, 1)
        for name in ("flash", "cudnn"):
            x = a.get(name)
            if isinstance(x, dict):
                parts.append(f"{name} {x['us']:.1f} us {x['TFLOPs']:.0f} TFLOP/s")
                if mine.get("us"):
                    table[f"prefill attention {key} speedup vs {name}"] = round(x["us"] / mine["us"], 3)
        lines.append("  ".join(parts))
    return lines, table


def add_rmsnorm(x, r, w):
    """bench/specs/add_rmsnorm.fu: the residual stream h = x + r and its RMSNorm."""
    h = x + r
    hf = h.float()
    return (hf * torch.rsqrt(hf.pow(2).mean(-1, keepdim=True) + 1e-6) * w.float()).to(x.dtype), h


# The row and element-wise expressions of bench/specs that --rows anchors:
# spec -> (f, the inputs' shapes at n rows, the bytes a kernel must move).
ROW_SPECS = {
    "add_rmsnorm": (add_rmsnorm, lambda n: [(n, 4096), (n, 4096), (4096,)], lambda n: 4 * n * 4096 * 2 + 4096 * 2),
    "swiglu": (lambda gu: swiglu(gu), lambda n: [(n, 2 * 14336)], lambda n: 3 * n * 14336 * 2),
}


def rows_anchor(ns):
    """torch.compile (Inductor, mode max-autotune-no-cudagraphs, static
    shapes: one generated kernel each) of the expressions of ROW_SPECS at n rows, timed
    as fuser bench times ours (launch_median_us, every launch on another
    set of inputs, the sets together past 3x the L2), and a device copy of
    as many bytes timed the same way; TBps = the bytes the expression must
    move (ROW_SPECS) / median time. Keyed <spec>_N<n>."""
    l2 = torch.cuda.get_device_properties(0).L2_cache_size
    out = {}
    for name, (f, shapes, nbytes) in ROW_SPECS.items():
        for n in ns:
            # A compile of its own for each shape: a second shape would
            # otherwise recompile the function for dynamic shapes.
            torch._dynamo.reset()
            cf = torch.compile(f, mode="max-autotune-no-cudagraphs", dynamic=False)
            b = nbytes(n)
            sets = max(1, math.ceil(3 * l2 / b))
            ins = [[torch.randn(*sh, device=DEV, dtype=torch.bfloat16) for sh in shapes(n)] for _ in range(sets)]
            row = {"bytes": b, "rotation": sets}
            for key, fn in (("eager", f), ("compile", cf)):
                us = launch_median_us(lambda r: fn(*ins[r % sets]))
                row[key] = {"us": round(us, 2), "TBps": round(b / us / 1e6, 3)}
            del ins
            # The copy of as many bytes (read + write), the ceiling a
            # kernel of this size meets, launch and tail included.
            src = [torch.empty(b // 4, device=DEV, dtype=torch.bfloat16) for _ in range(sets)]
            dst = [torch.empty_like(x) for x in src]
            us = launch_median_us(lambda r: dst[r % sets].copy_(src[r % sets]))
            row["copy"] = {"us": round(us, 2), "TBps": round(b / us / 1e6, 3)}
            out[f"{name}_N{n}"] = row
            del src, dst
    return out


def rows_table(anchors, ours):
    """Row kernels side by side: each --ours target of a ROW_SPECS spec (its
    fused plan's one kernel: model bytes / median time) against torch.compile
    and eager on the same rows, against the run's copy ceiling (torch's
    copy of ceilings, 2 GiB; ours is fuser bench's own) and against a copy
    of as many bytes as the kernel moves."""
    lines, table = [], {}
    an = anchors.get("rows", {})
    copy = anchors.get("ceilings", {}).get("copy_TBps")
    mine = {}
    for t in ours.get("targets", []):
        ks = (t.get("fused") or {}).get("kernels") or []
        if t["spec"] in ROW_SPECS and len(ks) == 1 and ks[0].get("median_us"):
            mine[f"{t['spec']}_N{t['dims']['N']}"] = ks[0]
    for key in dict.fromkeys([*an, *mine]):
        a, k = an.get(key, {}), mine.get(key)
        parts = [f"{key:22s}"]
        if k:
            tb = k["model_bytes"] / k["median_us"] / 1e6
            parts.append(f"ours {k['median_us']:8.2f} us {tb:5.2f} TB/s")
            table[f"rows {key} ours TBps"] = round(tb, 3)
            if positive(copy):
                parts.append(f"{tb / copy:5.3f} of copy")
                table[f"rows {key} ours of copy"] = round(tb / copy, 3)
            same = (a.get("copy") or {}).get("TBps")
            if positive(same):
                parts.append(f"{tb / same:5.3f} of a copy of its bytes")
                table[f"rows {key} ours of same-size copy"] = round(tb / same, 3)
        for name in ("compile", "eager", "copy"):
            x = a.get(name)
            if isinstance(x, dict):
                parts.append(f"{name} {x['us']:8.2f} us {x['TBps']:5.2f} TB/s")
                if k:
                    table[f"rows {key} speedup vs {name}"] = round(x["us"] / k["median_us"], 3)
        lines.append("  ".join(parts))
    return lines, table


class Llama(torch.nn.Module):
    """The default spec (specs/llama3_8b.fu) written in PyTorch: one decode
    step (forward) and a prefill with no cache before it (forward_prefill),
    on the same weights."""

    def __init__(self):
        super().__init__()
        self.qkv = torch.nn.Linear(4096, 6144, bias=False)
        self.o = torch.nn.Linear(4096, 4096, bias=False)
        self.gu = torch.nn.Linear(4096, 2 * 14336, bias=False)
        self.down = torch.nn.Linear(14336, 4096, bias=False)
        self.w1 = torch.nn.Parameter(torch.ones(4096))
        self.w2 = torch.nn.Parameter(torch.ones(4096))

    @staticmethod
    def rms(x, w):
        xf = x.float()
        return (xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + 1e-5)).to(x.dtype) * w

    @staticmethod
    def rope(t, cos, sin):
        t1, t2 = t[..., :64], t[..., 64:]
        return torch.cat([t1 * cos - t2 * sin, t2 * cos + t1 * sin], -1)

    def mlp(self, x, a):
        """The layer after attention: output projection and residual add,
        RMSNorm, SwiGLU over the halves of the gate/up projection, down
        projection and residual add."""
        x = x + self.o(a)
        g, u = self.gu(self.rms(x, self.w2)).chunk(2, -1)
        return x + self.down(F.silu(g) * u)

    def forward(self, x, kc, vc, cos, sin):
        b = x.shape[0]
        h = self.rms(x, self.w1)
        q, k, v = self.qkv(h).split([4096, 1024, 1024], -1)
        q = self.rope(q.view(b, 32, 1, 128), cos, sin)
        k = self.rope(k.view(b, 8, 1, 128), cos, sin)
        kc[:, :, -1:] = k
        vc[:, :, -1:] = v.view(b, 8, 1, 128)
        a = F.scaled_dot_product_attention(q, kc, vc, enable_gqa=True).reshape(b, 4096)
        return self.mlp(x, a)

    def forward_prefill(self, x, cos, sin):
        """x [B, S, 4096], cos and sin [S, 64]: the S tokens attend causally
        to each other (no cache before them, none written)."""
        b, s, _ = x.shape
        h = self.rms(x, self.w1)
        q, k, v = self.qkv(h).split([4096, 1024, 1024], -1)
        q = self.rope(q.view(b, s, 32, 128).transpose(1, 2), cos, sin)
        k = self.rope(k.view(b, s, 8, 128).transpose(1, 2), cos, sin)
        v = v.view(b, s, 8, 128).transpose(1, 2)
        a = F.scaled_dot_product_attention(q, k, v, is_causal=True, enable_gqa=True)
        return self.mlp(x, a.transpose(1, 2).reshape(b, s, 4096))


COMPILE_MODES = {"default": "compile_us", "max-autotune-no-cudagraphs": "compile_max_autotune_us"}


def time_modes(fn, args, modes):
    """fn(*args) under no_grad, medians of bench_ms in us: eagerly
    (eager_us), as one CUDA graph captured after 3 warm-up calls on a side
    stream and replayed (eager_graph_us), and under torch.compile in each
    of modes (COMPILE_MODES names the key; "err: ..." where it failed)."""
    row = {}
    with torch.no_grad():
        row["eager_us"] = round(bench_ms(lambda: fn(*args)) * 1e3, 1)
        s = torch.cuda.Stream()
        s.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(s):
            for _ in range(3):
                fn(*args)
        torch.cuda.current_stream().wait_stream(s)
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph):
            fn(*args)
        row["eager_graph_us"] = round(bench_ms(graph.replay) * 1e3, 1)
        # torch.compile in its default mode and in PyTorch's fastest for
        # this layer (max-autotune without its own CUDA graphs, which
        # ANCHORS.md measured ahead of reduce-overhead).
        for mode in modes:
            key = COMPILE_MODES[mode]
            try:
                torch._dynamo.reset()
                compiled = torch.compile(fn, mode=mode)
                for _ in range(3):
                    compiled(*args)
                row[key] = round(bench_ms(lambda: compiled(*args)) * 1e3, 1)
            except Exception as e:
                row[key] = "err: " + str(e)[:100]
    return row


def llama_decode(batches, context, modes):
    layer = Llama().to(DEV, torch.bfloat16).eval()
    weight_bytes = sum(p.numel() for p in layer.parameters()) * 2
    out = {}
    for b in batches:
        x = torch.randn(b, 4096, device=DEV, dtype=torch.bfloat16)
        kc = torch.randn(b, 8, context + 1, 128, device=DEV, dtype=torch.bfloat16)
        vc = torch.randn_like(kc)
        cos = torch.randn(64, device=DEV, dtype=torch.bfloat16)
        sin = torch.randn_like(cos)
        row = {"floor_bytes": weight_bytes + 2 * kc.numel() * 2}
        row.update(time_modes(layer, (x, kc, vc, cos, sin), modes))
        out[f"B{b}_T{context}"] = row
    return out


class GPT2Small(torch.nn.Module):
    """specs/gpt2.fu's block, GPT-2 small as its checkpoints ship it: D 768,
    12 heads of 64 (no grouping), pre-norm LayerNorm with bias, q, k and v
    in one projection, a bias on every projection, the erf GELU (the
    spec's gelu) over an MLP of width 3072, f16. forward is one decode
    step over a cache of T + 1 tokens whose last slot it writes."""

    def __init__(self):
        super().__init__()
        self.ln1 = torch.nn.LayerNorm(768, eps=1e-5)
        self.attn = torch.nn.Linear(768, 3 * 768)
        self.proj = torch.nn.Linear(768, 768)
        self.ln2 = torch.nn.LayerNorm(768, eps=1e-5)
        self.fc = torch.nn.Linear(768, 3072)
        self.out = torch.nn.Linear(3072, 768)

    def forward(self, x, kc, vc):
        b = x.shape[0]
        q, k, v = self.attn(self.ln1(x)).split(768, -1)
        kc[:, :, -1:] = k.view(b, 12, 1, 64)
        vc[:, :, -1:] = v.view(b, 12, 1, 64)
        a = F.scaled_dot_product_attention(q.view(b, 12, 1, 64), kc, vc).reshape(b, 768)
        h = x + self.proj(a)
        return h + self.out(F.gelu(self.fc(self.ln2(h))))


def small_decode(shapes, modes):
    """GPT-2 small's decode step (GPT2Small) at each (B, T) of shapes: its
    floor bytes (weights and the cache, f16) and time_modes' times."""
    layer = GPT2Small().to(DEV, torch.float16).eval()
    weight_bytes = sum(p.numel() for p in layer.parameters()) * 2
    out = {}
    for b, t in shapes:
        x = torch.randn(b, 768, device=DEV, dtype=torch.float16)
        kc = torch.randn(b, 12, t + 1, 64, device=DEV, dtype=torch.float16)
        vc = torch.randn_like(kc)
        row = {"floor_bytes": weight_bytes + 2 * kc.numel() * 2}
        row.update(time_modes(layer, (x, kc, vc), modes))
        out[f"B{b}_T{t}"] = row
    return out


# The layer's projections as fuser stores their weights, [K, N] row-major:
# name -> (K, N).
PROJECTIONS = {"qkv": (4096, 6144), "o": (4096, 4096), "gate_up": (4096, 2 * 14336), "down": (14336, 4096)}


def prefill_flops(b, s, t=0):
    """The Llama-3-8B layer's FLOPs for S new tokens a sequence after T
    cached ones: 2·M·K·N over the 4 projections (M = B·S) and causal
    attention, 2·2·(S·T + S²/2)·32 heads·128 (the norms, RoPE and SwiGLU
    left out)."""
    m = b * s
    return 2 * m * sum(k * n for k, n in PROJECTIONS.values()) + 2 * 2 * b * (s * t + s * s // 2) * 32 * 128


def llama_prefill(tokens, modes):
    """The layer at prefill, batch 1, S new tokens and no cache (causal SDPA
    over them), timed by time_modes; keyed prefill_B1_S<S>, with the
    layer's FLOPs (prefill_flops)."""
    layer = Llama().to(DEV, torch.bfloat16).eval()
    out = {}
    for s in tokens:
        x = torch.randn(1, s, 4096, device=DEV, dtype=torch.bfloat16)
        cos = torch.randn(s, 64, device=DEV, dtype=torch.bfloat16)
        sin = torch.randn_like(cos)
        row = {"B": 1, "S": s, "T": 0, "flops": prefill_flops(1, s)}
        row.update(time_modes(layer.forward_prefill, (x, cos, sin), modes))
        out[f"prefill_B1_S{s}"] = row
        del x, cos, sin
    return out


def swiglu(h):
    g, u = h.chunk(2, -1)
    return F.silu(g) * u


# The epilogue fuser fuses into each projection at prefill, as PyTorch runs
# it eagerly after the matmul h = x @ w (r: the residual): name -> (what, f(h, r)).
EPILOGUES = {"o": ("residual add", lambda h, r: r + h), "gate_up": ("silu(g) * u", lambda h, r: swiglu(h)),
             "down": ("residual add", lambda h, r: r + h)}


def prefill_gemms(tokens):
    """cuBLAS (torch.matmul, bf16) on the layer's projections at M = S rows:
    x [M, K] @ w [K, N] alone (matmul_us) and, where fuser fuses an
    epilogue into the projection, followed by PyTorch's eager kernel for it
    (matmul_epilogue_us); medians of bench_ms, TFLOP/s = 2·M·K·N / time.
    Keyed M<m>, then by projection."""
    out = {}
    for m in tokens:
        rows = {}
        for name, (k, n) in PROJECTIONS.items():
            x = torch.randn(m, k, device=DEV, dtype=torch.bfloat16)
            w = torch.randn(k, n, device=DEV, dtype=torch.bfloat16) / math.sqrt(k)
            flops = 2 * m * k * n
            us = bench_ms(lambda: x @ w) * 1e3
            row = {"M": m, "K": k, "N": n, "flops": flops, "matmul_us": round(us, 1), "matmul_TFLOPs": round(flops / us / 1e6, 1)}
            if name in EPILOGUES:
                what, epi = EPILOGUES[name]
                r = torch.randn(m, n, device=DEV, dtype=torch.bfloat16)
                us = bench_ms(lambda: epi(x @ w, r)) * 1e3
                row.update({"epilogue": what, "matmul_epilogue_us": round(us, 1), "matmul_epilogue_TFLOPs": round(flops / us / 1e6, 1)})
                del r
            rows[name] = row
            del x, w
        out[f"M{m}"] = rows
    return out


def decode_attention_table(anchors, ours):
    """Decode attention side by side: ours (K+V bytes / median time) against
    SDPA flash and cuDNN on the same shape, timed the same way (the note
    adds cuDNN by do_bench, as ANCHORS.md measured), paged against our contiguous,
    cascade against our non-cascade batch of the same keys, with ratios
    (speedup = their time / ours)."""
    an = anchors.get("decode_attention", {})
    mine = ours.get("decode_attention", {})
    lines = [f"{'shape':28s} {'ours us':>9s} {'TB/s':>6s} {'flash us':>9s} {'TB/s':>6s} {'cuDNN us':>9s} {'TB/s':>6s} {'vs flash':>8s} {'vs cuDNN':>8s}  note"]
    table = {}

    def num(x, k):
        return x.get(k) if isinstance(x, dict) and isinstance(x.get(k), (int, float)) else None

    for key in sorted(mine, key=lambda k: (k.split(" ")[0] if " " in k and k[0].isalpha() and not k[0] == "B" else "", k)):
        row = mine[key]
        us, tb = num(row, "us"), num(row, "TBps")
        if us is None:
            lines.append(f"{key:28s} skipped: {str(row.get('skipped', ''))[:70]}")
            continue
        base = key.split(" sk=")[0]
        note, fl, cu = "", None, None
        if base.startswith("paged "):
            c = mine.get(base[len("paged "):])
            if num(c, "us"):
                table[f"attention {key} paged/contiguous time"] = round(us / c["us"], 3)
                note = f"paged/contiguous time {us / c['us']:.3f}"
            base = base[len("paged "):]
        elif base.startswith("cascade "):
            b, rest = base[len("cascade "):].split("_L")
            pre, own = rest.split("+")
            flat = f"{b}_L{int(pre) + int(own)}"
            c = mine.get(flat)
            if num(c, "us"):
                table[f"attention {key} cascade speedup vs ours {flat}"] = round(c["us"] / us, 3)
                note = f"{c['us'] / us:.2f}x faster than ours at {flat}"
            base = flat
        a = an.get(base, {})
        fl, cu = a.get("flash"), a.get("cudnn")
        cells = []
        for x in (fl, cu):
            cells += [f"{x['us']:9.2f}", f"{x['TBps']:6.3f}"] if isinstance(x, dict) else [f"{'-':>9s}", f"{'-':>6s}"]
        sp = []
        for name, x in (("flash", fl), ("cudnn", cu)):
            if isinstance(x, dict):
                table[f"attention {key} speedup vs {name}"] = round(x["us"] / us, 3)
                sp.append(f"{x['us'] / us:8.2f}x")
            else:
                sp.append(f"{'-':>9s}")
        tbs = f"{tb:6.3f}" if tb is not None else f"{'-':>6s}"
        if num(cu, "do_bench_us"):
            note = f"cuDNN by do_bench {cu['do_bench_us']:.2f} us" + (f"; {note}" if note else "")
        lines.append(f"{key:28s} {us:9.2f} {tbs} {' '.join(cells)} {' '.join(sp)}  {note}")
    return lines, table


LAYER_MODES = {"eager_us": "torch eager", "eager_graph_us": "torch eager + CUDA graph",
               "compile_us": "torch.compile default", "compile_max_autotune_us": "torch.compile max-autotune-no-cudagraphs"}


def positive(x):
    """x is a measurement: a number above 0 (not an "err: ..." string)."""
    return isinstance(x, (int, float)) and not isinstance(x, bool) and x > 0


def tflops(flops, us):
    """TFLOP/s of flops in us, to 0.1."""
    return round(flops / us / 1e6, 1)


def match_projection(kernel, m):
    """The projection of PROJECTIONS that one of our GEMM kernels at M rows
    computes: its modelled FLOPs within 2% of 2·M·K·N (an epilogue adds a
    few per element) and its modelled bytes within 4x of the projection's
    x, w and result (which tells the O projection from an unfused plan's
    q·kᵀ or p·v, of the same FLOPs at S = 32·128); None when none fits."""
    for name, (k, n) in PROJECTIONS.items():
        flops, nbytes = 2 * m * k * n, 2 * (m * k + k * n + m * n)
        if abs(kernel.get("model_flops", 0) / flops - 1) <= 0.02 and nbytes / 4 <= kernel.get("model_bytes", 0) <= 4 * nbytes:
            return name
    return None


def prefill_layer_rows(flops, anchor, step):
    """One prefill's layer: our fused step (graph replay and eager, from
    fuser bench's step) and each anchor of llama_prefill, in us and TFLOP/s
    of flops, with our time over the anchor's. Returns the lines and the
    anchors, ours and ratios tables."""
    row = {"anchors": {}, "ours": {}, "ratios": {}}
    lines = [f"  {'':42s} {'us':>9s} {'TFLOP/s':>7s} {'ours graph/it':>13s} {'ours eager/it':>13s}"]
    if step.get("skipped"):
        row["ours"]["fused_skipped"] = step["skipped"]
        lines.append(f"  {'ours fused':42s} skipped: {step['skipped'][:70]}")
    for key, what in (("graph_us", "ours fused graph replay"), ("eager_us", "ours fused eager")):
        if positive(step.get(key)):
            row["ours"]["fused_" + key] = {"us": step[key], "TFLOPs": tflops(flops, step[key])}
            lines.append(f"  {what:42s} {step[key]:9.1f} {tflops(flops, step[key]):7.1f}")
    for mode, what in LAYER_MODES.items():
        us = anchor.get(mode)
        if not positive(us):
            if mode in anchor:
                row["anchors"][mode] = us
                lines.append(f"  {what:42s} {str(us)[:70]}")
            continue
        row["anchors"][mode] = {"us": us, "TFLOPs": tflops(flops, us)}
        cells = []
        for key in ("graph_us", "eager_us"):
            if positive(step.get(key)):
                row["ratios"][f"fused_{key}/{mode}"] = round(step[key] / us, 3)
                cells.append(f"{step[key] / us:13.3f}")
            else:
                cells.append(f"{'-':>13s}")
        lines.append(f"  {what:42s} {us:9.1f} {tflops(flops, us):7.1f} {' '.join(cells)}")
    return lines, row


def prefill_gemm_rows(m, cublas, target):
    """One prefill's GEMMs at M rows: each projection's cuBLAS anchor
    (prefill_gemms, alone and with PyTorch's epilogue) beside every GEMM
    kernel of our fused and unfused plans that match_projection gives it,
    in us and TFLOP/s of 2·M·K·N, with cuBLAS's time over ours (of_cublas,
    of_cublas_epilogue: our rate as a fraction of theirs). Returns the
    lines and the rows."""
    mine = {name: [] for name in PROJECTIONS}
    for plan in ("fused", "unfused"):
        for k in (target.get(plan) or {}).get("kernels") or []:
            name = match_projection(k, m) if k.get("strategy") == "gemm" else None
            if name:
                mine[name].append((plan, k))
    if not cublas and not any(mine.values()):
        return [], []
    dash = f"{'-':>9s} {'-':>7s}"
    lines = [f"  {'GEMM':26s} {'our kernel (plan)':44s} {'ours us':>9s} {'TFLOP/s':>7s} {'cuBLAS us':>9s} {'TFLOP/s':>7s} {'of it':>6s}"
             f" {'+epi us':>9s} {'TFLOP/s':>7s} {'of it':>6s}  epilogue"]
    rows = []
    for name, (k, n) in PROJECTIONS.items():
        c, flops = cublas.get(name, {}), 2 * m * k * n
        base = {"projection": name, "M": m, "K": k, "N": n, "flops": flops}
        if c:
            base["cublas"] = {x: c[x] for x in ("matmul_us", "matmul_TFLOPs", "epilogue", "matmul_epilogue_us", "matmul_epilogue_TFLOPs") if x in c}
        theirs = f"{c['matmul_us']:9.1f} {c['matmul_TFLOPs']:7.1f}" if c else dash
        epi = f"{c['matmul_epilogue_us']:9.1f} {c['matmul_epilogue_TFLOPs']:7.1f}" if "matmul_epilogue_us" in c else dash
        # Every kernel of ours on this projection, or the anchor alone.
        for plan, kt in mine[name] or ([(None, None)] if c else []):
            g, label, ours, of, of_epi = dict(base), "-", dash, f"{'-':>6s}", f"{'-':>6s}"
            if kt is not None:
                g.update({"kernel": kt["name"], "plan": plan})
                label = f"{kt['name']} ({plan})"
                if kt.get("skipped"):
                    g["skipped"] = kt["skipped"]
                    label += " skipped"
                elif positive(kt.get("median_us")):
                    us = kt["median_us"]
                    g.update({"us": us, "TFLOPs": tflops(flops, us)})
                    ours = f"{us:9.1f} {tflops(flops, us):7.1f}"
                    if c:
                        g["of_cublas"] = round(c["matmul_us"] / us, 3)
                        of = f"{g['of_cublas']:6.3f}"
                    if "matmul_epilogue_us" in c:
                        g["of_cublas_epilogue"] = round(c["matmul_epilogue_us"] / us, 3)
                        of_epi = f"{g['of_cublas_epilogue']:6.3f}"
            rows.append(g)
            lines.append(f"  {name + f' M{m} K{k} N{n}':26s} {label:44s} {ours} {theirs} {of} {epi} {of_epi}  {c.get('epilogue', '')}".rstrip())
    return lines, rows


def prefill_table(anchors, ours):
    """Prefill side by side, for every prefill the anchors measured and
    every llama3_8b dims of --ours with S > 1 (keyed prefill_B<b>_S<s>,
    _T<t> after it where a cache comes before): the layer's FLOPs
    (prefill_flops), prefill_layer_rows and prefill_gemm_rows; then the
    8192³ cuBLAS GEMM of ceilings. Returns the printed lines and
    compare.json's prefill table (both empty when neither side has a
    prefill)."""
    layer, gemms = anchors.get("llama_prefill", {}), anchors.get("prefill_gemms", {})
    mine = {}
    for t in ours.get("targets", []):
        d = t["dims"]
        if t["spec"] == "llama3_8b" and d.get("S", 1) > 1:
            mine[f"prefill_B{d['B']}_S{d['S']}" + (f"_T{d['T']}" if d.get("T") else "")] = t
    if not layer and not mine:
        return [], {}
    lines, table = ["(TFLOP/s: the layer's FLOPs or the GEMM's 2·M·K·N over the time; ours graph/it, ours eager/it: our fused step's time over the anchor's;"
                    " of it: cuBLAS's time over our kernel's)"], {}
    for key in dict.fromkeys([*layer, *mine]):
        t, anchor = mine.get(key, {}), layer.get(key, {})
        d = t.get("dims") or anchor
        m, flops = d["B"] * d["S"], prefill_flops(d["B"], d["S"], d.get("T", 0))
        lines.append(f"{key}: {flops / 1e9:.1f} GFLOP")
        layer_lines, row = prefill_layer_rows(flops, anchor, (t.get("fused") or {}).get("step", {}))
        gemm_lines, row["gemms"] = prefill_gemm_rows(m, gemms.get(f"M{m}", {}), t)
        row["flops"] = flops
        lines += layer_lines + gemm_lines
        table[key] = row
    ceiling = anchors.get("ceilings", {}).get("gemm_bf16_TFLOPs")
    if positive(ceiling):
        table["cublas_8192_TFLOPs"] = ceiling
        lines.append(f"cuBLAS bf16 GEMM 8192x8192x8192 (ceilings): {ceiling} TFLOP/s")
    return lines, table


def small_table(anchors, ours):
    """Lines comparing GPT-2 small's decode step, ours (ours' gpt2 targets
    at S=1, fused, graph replay) against small_decode's anchors at the same
    B and T, with the floor at the run's copy ceiling."""
    copy = anchors.get("ceilings", {}).get("copy_TBps", 0)
    steps = {}
    for t in ours.get("targets", []):
        d = t.get("dims", {})
        if t.get("spec") == "gpt2" and d.get("S") == 1:
            steps[f"B{d.get('B')}_T{d.get('T')}"] = t.get("fused", {}).get("step", {})
    lines = []
    for key, row in sorted(anchors.get("small_decode", {}).items()):
        floor = row["floor_bytes"] / (copy * 1e6) if copy else 0
        step = steps.get(key, {})
        mine = step.get("graph_us")
        cells = [f"{key:12s}", f"floor {floor:6.1f} us", f"ours {mine if mine else '-':>6} us"]
        for name in ("eager_us", "eager_graph_us", *COMPILE_MODES.values()):
            if name in row:
                cells.append(f"{name} {row[name]}")
        if mine and isinstance(row.get("eager_graph_us"), (int, float)):
            cells.append(f"eager+graph/ours {row['eager_graph_us'] / mine:.2f}")
        lines.append("  ".join(cells))
    return lines


def ratios(anchors, ours):
    """Our time over each anchor's, for every shape both measured (lower is better for us)."""
    table = {}
    for shape, row in ours.get("llama_decode", {}).items():
        a = anchors["llama_decode"].get(shape)
        if not a:
            continue
        for key in ["eager_us", "eager_graph_us", "compile_us", "compile_max_autotune_us"]:
            if isinstance(a.get(key), (int, float)):
                for mine in ["fused_graph_us", "fused_eager_us", "unfused_graph_us", "unfused_eager_us"]:
                    if isinstance(row.get(mine), (int, float)):
                        table[f"{shape} {mine}/{key}"] = round(row[mine] / a[key], 3)
    for shape, row in ours.get("decode_attention", {}).items():
        a = anchors["decode_attention"].get(shape, {})
        for key in ["flash", "cudnn"]:
            if isinstance(a.get(key), dict) and isinstance(row.get("us"), (int, float)):
                table[f"attention {shape} ours/{key}"] = round(row["us"] / a[key]["us"], 3)
    # Our ceilings (fuser bench, same run) against PyTorch's: the copy and
    # GEMM rates our fractions are taken against.
    oc = ours.get("ceilings", {})
    for mine, theirs in [("copy_TBps", "copy_TBps"), ("gemm_TFLOPs", "gemm_bf16_TFLOPs"), ("mma_sync_TFLOPs", "gemm_bf16_TFLOPs"), ("generated_gemm_TFLOPs", "gemm_bf16_TFLOPs")]:
        a = anchors.get("ceilings", {}).get(theirs)
        if isinstance(oc.get(mine), (int, float)) and oc.get(mine) and isinstance(a, (int, float)) and a:
            table[f"ceiling ours {mine}/torch {theirs}"] = round(oc[mine] / a, 3)
    return table


def kernel_table(ours):
    """fuser bench's per-kernel lines: time, achieved rates and the share of the roofline."""
    lines = []
    for t in ours.get("targets", []):
        dims = ",".join(f"{k}={v}" for k, v in sorted(t["dims"].items()))
        for plan in ("fused", "unfused"):
            pb = t.get(plan) or {}
            if not pb.get("plan"):
                continue
            lines.append(f"{t['spec']} {plan} {dims}: step {pb.get('step', {})}")
            for k in pb.get("kernels") or []:
                if k.get("skipped"):
                    lines.append(f"  {k['name']:40s} skipped: {k['skipped'][:80]}")
                else:
                    lines.append(f"  {k['name']:40s} {k['median_us']:9.2f} us {k.get('TBps', 0):6.3f} TB/s {k.get('TFLOPs', 0):8.2f} TFLOP/s floor/t {k.get('of_floor', 0):.2f}")
    return lines


def chart(anchors, ours, path):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except Exception as e:
        print("no chart:", e, file=sys.stderr)
        return
    shapes = [s for s in anchors["decode_attention"].keys() if s in ours.get("decode_attention", {})] or list(anchors["decode_attention"].keys())
    series = {"torch flash": [], "cuDNN": [], "fuser": []}
    for s in shapes:
        a = anchors["decode_attention"][s]
        series["torch flash"].append(a["flash"]["TBps"] if isinstance(a.get("flash"), dict) else 0)
        series["cuDNN"].append(a["cudnn"]["TBps"] if isinstance(a.get("cudnn"), dict) else 0)
        mine = ours.get("decode_attention", {}).get(s, {})
        series["fuser"].append(mine.get("TBps", 0) if isinstance(mine, dict) else 0)
    fig, ax = plt.subplots(figsize=(9, 4))
    width = 0.27
    for i, (name, vals) in enumerate(series.items()):
        ax.bar([j + i * width for j in range(len(shapes))], vals, width, label=name)
    ax.axhline(anchors["ceilings"]["copy_TBps"], color="gray", linestyle="--", label="copy bandwidth")
    ax.set_xticks([j + width for j in range(len(shapes))], shapes)
    ax.set_ylabel("K+V bytes / time (TB/s)")
    ax.set_title("decode attention, 32 q-heads / 8 kv-heads, d=128, bf16")
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=120)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--ours", help="fuser bench JSON (same run)")
    ap.add_argument("--out", default=os.environ.get("OUT", "."))
    ap.add_argument("--attention-only", action="store_true", help="decode attention anchors only (no Llama layer)")
    ap.add_argument("--shapes", default="", help="decode attention shapes to anchor, e.g. 1x4096,16x8192 (default: all)")
    ap.add_argument("--more", action="append", default=[], help="further fuser bench JSON files whose decode_attention rows join --ours")
    ap.add_argument("--batches", default="1,16,64", help="Llama-3-8B decode batches to anchor")
    ap.add_argument("--compile-modes", default=",".join(COMPILE_MODES), help="torch.compile modes to anchor (comma-separated; empty: none)")
    ap.add_argument("--prefill-only", action="store_true", help="no decode attention, no decode layer: the ceilings and what --prefill, --prefill-attention and --rows ask for")
    ap.add_argument("--prefill-attention", default="", help="causal prefill attention shapes BxN to anchor (SDPA flash, cuDNN), e.g. 1x16384,2x4096,8x1024 (default none)")
    ap.add_argument("--rows", default="", help="row counts to anchor the row and element-wise expressions of bench/specs at (torch.compile and eager; comma-separated, e.g. 1024,8192; default none)")
    ap.add_argument("--prefill", default="", help="Llama-3-8B prefill token counts to anchor, batch 1, no cache: the layer and its GEMMs through cuBLAS (comma-separated, e.g. 4096,512; default none)")
    ap.add_argument("--small", default="", help="GPT-2 small decode shapes BxT to anchor (specs/gpt2.fu's block, f16; comma-separated, e.g. 1x1024; default none)")
    args = ap.parse_args()
    torch.manual_seed(0)
    shapes = [(1, 4096), (1, 32768), (1, 131072), (16, 8192), (64, 4096)]
    if args.attention_only:
        shapes.append((64, 8704))  # the cascade shape without cascade: 8192 shared + 512 own keys
    if args.shapes:
        shapes = [tuple(int(x) for x in sh.split("x")) for sh in args.shapes.split(",")]
    modes = [m for m in args.compile_modes.split(",") if m]
    anchors = {
        "device": torch.cuda.get_device_name(),
        "torch": torch.__version__,
        "ceilings": ceilings(),
        "decode_attention": {} if args.prefill_only else decode_attention(shapes),
        "llama_decode": {} if args.attention_only or args.prefill_only else llama_decode([int(b) for b in args.batches.split(",") if b], 4096, modes),
    }
    prefill = [int(s) for s in args.prefill.split(",") if s]
    if prefill and not args.attention_only:
        anchors["llama_prefill"] = llama_prefill(prefill, modes)
        anchors["prefill_gemms"] = prefill_gemms(prefill)
    pa = [tuple(int(x) for x in sh.split("x")) for sh in args.prefill_attention.split(",") if sh]
    if pa:
        anchors["prefill_attention"] = prefill_attention(pa)
    rows = [int(n) for n in args.rows.split(",") if n]
    if rows:
        anchors["rows"] = rows_anchor(rows)
    small = [tuple(int(x) for x in sh.split("x")) for sh in args.small.split(",") if sh]
    if small:
        anchors["small_decode"] = small_decode(small, modes)
    os.makedirs(args.out, exist_ok=True)
    json.dump(anchors, open(os.path.join(args.out, "anchors.json"), "w"), indent=1)
    ours = json.load(open(args.ours)) if args.ours and os.path.exists(args.ours) else {}
    for f in args.more:
        if os.path.exists(f):
            more = json.load(open(f))
            ours.setdefault("decode_attention", {}).update(more.get("decode_attention", {}))
            ours.setdefault("prefill_attention", {}).update(more.get("prefill_attention", {}))
            ours.setdefault("targets", []).extend(more.get("targets", []))
    table = ratios(anchors, ours)
    att_lines, att_table = decode_attention_table(anchors, ours)
    table.update(att_table)
    pa_lines, pa_table = prefill_attention_table(anchors, ours)
    table.update(pa_table)
    pre_lines, pre_table = prefill_table(anchors, ours)
    row_lines, row_table = rows_table(anchors, ours)
    table.update(row_table)
    result = {"anchors": anchors, "ours": ours, "ratios": table}
    if pre_table:
        result["prefill"] = pre_table
    json.dump(result, open(os.path.join(args.out, "compare.json"), "w"), indent=1)
    print(json.dumps(anchors, indent=1))
    for k, v in sorted(table.items()):
        print(f"{k:60s} {v}")
    for line in kernel_table(ours):
        print(line)
    print("\ndecode attention (TB/s = K+V bytes / median time; speedup = their time / ours)")
    for line in att_lines:
        print(line)
    if pa_lines:
        print("\nprefill attention, causal, 32 q-heads / 8 kv-heads, d=128, bf16 (TFLOP/s = causal FLOPs / median time)")
        for line in pa_lines:
            print(line)
    if row_lines:
        print("\nrow and element-wise kernels (TB/s = the bytes they must move / median time)")
        for line in row_lines:
            print(line)
    small_lines = small_table(anchors, ours)
    if small_lines:
        print("\nGPT-2 small decode step (specs/gpt2.fu, f16; ours a graph replay)")
        for line in small_lines:
            print(line)
    if pre_lines:
        print("\nprefill, Llama-3-8B layer and its GEMMs")
        for line in pre_lines:
            print(line)
    chart(anchors, ours, os.path.join(args.out, "compare.png"))


if __name__ == "__main__":
    main()
