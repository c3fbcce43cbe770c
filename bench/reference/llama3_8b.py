"""One Llama 3 decoder layer, written as Meta's reference model code
(llama/model.py) writes it, independently of fuser's IR: the second
reference of bench/refcheck.py for specs/llama3_8b.fu, which must agree with
the program `fuser export --torch` writes from the spec to 1e-9 in float64.

It reads the tensors the spec declares, by the spec's names and in the
spec's conventions (checked against specs/llama3_8b.fu and interp):

  x    [B, S, D]                 the step's tokens
  pos  [B, S] i32                their positions, which rotate q and k
  wn1, wn2 [D]                   attention_norm, ffn_norm weights
  wqkv [D, (H + 2G) Dh]          wq | wk | wv as [in, out] (x @ w): Meta's
                                 nn.Linear weights transposed and joined
  wo   [H Dh, D]
  wgu  [D, 2F]                   w1 (gate) | w3 (up), [in, out]
  wd   [F, D]                    w2 (down), [in, out]
  kv   [2, B, G, T, Dh]          the cache: keys then values, per kv head,
                                 T cached tokens; the step's S new tokens
                                 follow them (Meta's start_pos is T)

and returns the output y [B, S, D] and the cache after the step, kv
[2, B, G, T+S, Dh].

RoPE pairs element i with element i + Dh/2 of each head (the rotate-half
form of Hugging Face's checkpoints, whose wq and wk rows are permuted so
that it equals Meta's interleaved pairs (2i, 2i+1)); apply_rotary_emb below
is Meta's complex form over those pairs.
"""
import math
from dataclasses import dataclass

import torch
import torch.nn.functional as F


@dataclass
class ModelArgs:
    dim: int = 4096
    n_heads: int = 32
    n_kv_heads: int = 8
    head_dim: int = 128
    ffn_dim: int = 14336
    norm_eps: float = 1e-5
    rope_theta: float = 500000.0

    @staticmethod
    def from_consts(c):
        """The args of a spec's constants (cases.json's consts)."""
        return ModelArgs(int(c["D"]), int(c["H"]), int(c["G"]), int(c["Dh"]), int(c["F"]), c["eps"], c["rope_theta"])


def _up(x):
    """Meta's x.float(): half types compute in float32; float64 stays."""
    return x if x.dtype == torch.float64 else x.float()


class RMSNorm(torch.nn.Module):
    def __init__(self, weight, eps):
        super().__init__()
        self.eps = eps
        self.weight = weight

    def _norm(self, x):
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps)

    def forward(self, x):
        output = self._norm(_up(x)).type_as(x)
        return output * self.weight


def precompute_freqs_cis(dim, pos, theta, dtype):
    """Meta's freqs_cis at the positions pos [B, S]: [B, S, dim/2] complex."""
    freqs = 1.0 / (theta ** (torch.arange(0, dim, 2, device=pos.device)[: (dim // 2)].to(dtype) / dim))
    freqs = pos.to(dtype)[..., None] * freqs
    return torch.polar(torch.ones_like(freqs), freqs)


def apply_rotary_emb(xq, xk, freqs_cis):
    """Meta's complex rotation of q and k [B, S, heads, Dh], each pair being
    (i, i + Dh/2) as the spec's rope has it."""

    def rotate(x):
        half = x.shape[-1] // 2
        x_ = torch.complex(_up(x[..., :half]), _up(x[..., half:]))
        out = x_ * freqs_cis[:, :, None, :]
        return torch.cat([out.real, out.imag], dim=-1).type_as(x)

    return rotate(xq), rotate(xk)


def repeat_kv(x, n_rep):
    """torch.repeat_interleave(x, dim=2, repeats=n_rep)"""
    bs, slen, n_kv_heads, head_dim = x.shape
    if n_rep == 1:
        return x
    return x[:, :, :, None, :].expand(bs, slen, n_kv_heads, n_rep, head_dim).reshape(bs, slen, n_kv_heads * n_rep, head_dim)


class Attention(torch.nn.Module):
    def __init__(self, args, wqkv, wo):
        super().__init__()
        self.n_kv_heads = args.n_kv_heads
        self.n_local_heads = args.n_heads
        self.n_local_kv_heads = self.n_kv_heads
        self.n_rep = self.n_local_heads // self.n_local_kv_heads
        self.head_dim = args.head_dim
        q, kv = args.n_heads * args.head_dim, args.n_kv_heads * args.head_dim
        # nn.Linear weights are [out, in]
        self.wq = wqkv[:, :q].t()
        self.wk = wqkv[:, q : q + kv].t()
        self.wv = wqkv[:, q + kv :].t()
        self.wo = wo.t()

    def forward(self, x, start_pos, freqs_cis, mask, cache):
        bsz, seqlen, _ = x.shape
        xq, xk, xv = F.linear(x, self.wq), F.linear(x, self.wk), F.linear(x, self.wv)

        xq = xq.view(bsz, seqlen, self.n_local_heads, self.head_dim)
        xk = xk.view(bsz, seqlen, self.n_local_kv_heads, self.head_dim)
        xv = xv.view(bsz, seqlen, self.n_local_kv_heads, self.head_dim)

        xq, xk = apply_rotary_emb(xq, xk, freqs_cis=freqs_cis)

        # the cache [2, B, G, T, Dh] as Meta's cache_k, cache_v [B, T, G, Dh],
        # the new tokens written after its start_pos = T cached ones
        cache_k = torch.cat([cache[0].transpose(1, 2), xk], dim=1)
        cache_v = torch.cat([cache[1].transpose(1, 2), xv], dim=1)
        keys = cache_k[:bsz, : start_pos + seqlen]
        values = cache_v[:bsz, : start_pos + seqlen]

        # repeat k/v heads if n_kv_heads < n_heads
        keys = repeat_kv(keys, self.n_rep)  # (bs, cache_len + seqlen, n_local_heads, head_dim)
        values = repeat_kv(values, self.n_rep)  # (bs, cache_len + seqlen, n_local_heads, head_dim)

        xq = xq.transpose(1, 2)  # (bs, n_local_heads, seqlen, head_dim)
        keys = keys.transpose(1, 2)  # (bs, n_local_heads, cache_len + seqlen, head_dim)
        values = values.transpose(1, 2)  # (bs, n_local_heads, cache_len + seqlen, head_dim)
        scores = torch.matmul(xq, keys.transpose(2, 3)) / math.sqrt(self.head_dim)
        if mask is not None:
            scores = scores + mask  # (bs, n_local_heads, seqlen, cache_len + seqlen)
        scores = F.softmax(_up(scores), dim=-1).type_as(xq)
        output = torch.matmul(scores, values)  # (bs, n_local_heads, seqlen, head_dim)
        output = output.transpose(1, 2).contiguous().view(bsz, seqlen, -1)
        new_cache = torch.stack([cache_k.transpose(1, 2), cache_v.transpose(1, 2)])
        return F.linear(output, self.wo), new_cache


class FeedForward(torch.nn.Module):
    def __init__(self, args, wgu, wd):
        super().__init__()
        self.w1 = wgu[:, : args.ffn_dim].t()
        self.w3 = wgu[:, args.ffn_dim :].t()
        self.w2 = wd.t()

    def forward(self, x):
        return F.linear(F.silu(F.linear(x, self.w1)) * F.linear(x, self.w3), self.w2)


class TransformerBlock(torch.nn.Module):
    def __init__(self, args, t):
        super().__init__()
        self.args = args
        self.attention = Attention(args, t["wqkv"], t["wo"])
        self.feed_forward = FeedForward(args, t["wgu"], t["wd"])
        self.attention_norm = RMSNorm(t["wn1"], eps=args.norm_eps)
        self.ffn_norm = RMSNorm(t["wn2"], eps=args.norm_eps)

    def forward(self, x, start_pos, freqs_cis, mask, cache):
        a, new_cache = self.attention(self.attention_norm(x), start_pos, freqs_cis, mask, cache)
        h = x + a
        out = h + self.feed_forward(self.ffn_norm(h))
        return out, new_cache


@torch.no_grad()
def layer(t, consts, dtype):
    """One step of the layer in dtype (torch.float64 for the reference, or
    torch.bfloat16 as Meta's code runs) on the spec's tensors t; returns
    {"y": ..., "kv": ...}."""
    args = ModelArgs.from_consts(consts)
    w = {k: v.to(dtype) for k, v in t.items() if k != "pos"}
    x, kv = w["x"], w["kv"]
    _, seqlen, _ = x.shape
    start_pos = kv.shape[3]
    block = TransformerBlock(args, w)
    freqs_cis = precompute_freqs_cis(args.head_dim, t["pos"], args.rope_theta, torch.float64 if dtype == torch.float64 else torch.float32)
    mask = None
    if seqlen > 1:
        mask = torch.full((seqlen, seqlen), float("-inf"), device=x.device)
        mask = torch.triu(mask, diagonal=1)
        # When performing key-value caching, we compute the attention scores
        # only for the new sequence. Thus, the matrix of scores is of size
        # (seqlen, cache_len + seqlen), and the only masked entries are (i, j) for
        # j > cache_len + i, since row i corresponds to token cache_len + i.
        mask = torch.hstack([torch.zeros((seqlen, start_pos), device=x.device), mask]).type_as(x)
    y, new_kv = block(x, start_pos, freqs_cis, mask, kv)
    return {"y": y, "kv": new_kv}
