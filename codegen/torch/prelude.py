import argparse
import sys

import torch

# The helpers below are the same in every program `fuser export --torch`
# writes. They give each op of the spec language the meaning fuser's CPU
# interpreter (interp) gives it, in one of two modes:
#
#   ref64   every value is float64 (i32 values too, as in the interpreter),
#           every op computed in float64: the reference.
#   native  every value is held in the dtype the spec declares, each op
#           computed by PyTorch in that dtype as a PyTorch program would
#           (bf16 and f16 matmuls accumulate in float32, reductions and
#           softmax compute in float32 and round once).
#
# Positions past a sequence's length in a paged or ragged KV cache do not
# exist: they hold 0, and reductions, softmax and masks skip them.

_DTYPES = {
    "bf16": torch.bfloat16,
    "f16": torch.float16,
    "f32": torch.float32,
    "fp8e4m3": getattr(torch, "float8_e4m3fn", None),
    "i32": torch.int32,
}
_I32_MIN, _I32_MAX = -(2**31), 2**31 - 1


def _dtype(dt, mode):
    """The torch dtype a value of spec dtype dt is held in."""
    if mode == "ref64":
        return torch.float64
    if _DTYPES[dt] is None:
        raise ValueError(f"this PyTorch has no {dt} dtype")
    return _DTYPES[dt]


def _leaf(x, dt, mode):
    """An input, param or state as the mode holds it."""
    return x.to(_dtype(dt, mode))


def _const(c, dt, mode):
    """A scalar constant as a 0-d tensor."""
    return torch.tensor(c, dtype=_dtype(dt, mode))


def _cast(x, dt, mode):
    """cast(x, dt). In ref64 a float cast keeps the value, and a cast to i32
    truncates toward zero, saturating, NaN giving 0, as the interpreter does."""
    if mode == "native":
        return x.to(_DTYPES[dt])
    if dt == "i32":
        return torch.nan_to_num(x, nan=0.0).clamp(_I32_MIN, _I32_MAX).trunc()
    return x


def _limit(x, lens, extra, axis, batch):
    """How many positions along axis exist for each sequence of x, shaped to
    broadcast against x: min(max(lens[b] + extra, 0), x.shape[axis]) for
    the sequence b indexed on axis batch (sequence 0 when batch is -1)."""
    n = x.shape[axis]
    lim = (lens.long() + extra).clamp(0, n)
    shape = [1] * x.dim()
    if batch >= 0:
        lim = lim[: x.shape[batch]]
        shape[batch] = x.shape[batch]
    else:
        lim = lim[:1]
    return lim.view(shape)


def _valid(x, lens, extra, axis, batch):
    """Which elements of the ragged value x exist, shaped to broadcast."""
    n = x.shape[axis]
    pos = torch.arange(n, device=x.device).view([n if d == axis else 1 for d in range(x.dim())])
    return pos < _limit(x, lens, extra, axis, batch)


def _zero(x, ok):
    """x with the elements that do not exist set to 0."""
    return x.masked_fill(~ok, 0)


def _seqlens(indptr, last, page):
    """Each sequence's token count after the step: indptr[b+1] - indptr[b]
    for a ragged cache; (pages - 1) * page + last[b] for a paged one (0 with
    no page)."""
    indptr = indptr.long()
    n = indptr[1:] - indptr[:-1]
    if last is None:
        return n
    return torch.where(n > 0, (n - 1) * page + last.long(), torch.zeros_like(n))


def _mask(s, window, lim):
    """causal(s), or window(s, window): query i of the last Sq of the keys
    sits at key position lim - Sq + i (lim: the keys of its sequence); keys
    after it, and for a window keys window or more before it, become -inf."""
    sq, tk = s.shape[-2], s.shape[-1]
    i = torch.arange(sq, device=s.device).view(sq, 1)
    j = torch.arange(tk, device=s.device).view(1, tk)
    q = (tk if lim is None else lim) - sq + i
    hide = j > q
    if window is not None:
        hide = hide | (j < q - window + 1)
    return s.masked_fill(hide, float("-inf"))


def _rope(x, pos, theta, mode):
    """Rotary embedding of x [B, S, H, Dh] at positions pos [B, S] in the
    rotate-half (GPT-NeoX / Hugging Face Llama) form: for i < Dh/2 and
    a = pos * theta^(-2i/Dh), out[i] = x[i] cos a - x[i+Dh/2] sin a and
    out[i+Dh/2] = x[i+Dh/2] cos a + x[i] sin a. Native mode computes the
    angles in float32 and rounds cos and sin to x's dtype, as Hugging Face's
    Llama does."""
    dh = x.shape[-1]
    half = dh // 2
    if mode == "ref64":
        inv = theta ** (-2 * torch.arange(half, dtype=torch.float64, device=x.device) / dh)
        ang = pos.to(torch.float64)[..., None, None] * inv
        cos, sin = torch.cos(ang), torch.sin(ang)
    else:
        inv = 1.0 / (theta ** (torch.arange(0, dh, 2, device=x.device).float() / dh))
        ang = pos.float()[..., None, None] * inv
        cos, sin = torch.cos(ang).to(x.dtype), torch.sin(ang).to(x.dtype)
    x1, x2 = x[..., :half], x[..., half:]
    return torch.cat([x1 * cos - x2 * sin, x2 * cos + x1 * sin], dim=-1)


def _concat(parts, axis):
    """concat(parts..., axis): the other axes broadcast (size 1 stretches)."""
    shape = list(parts[0].shape)
    for p in parts[1:]:
        for d, n in enumerate(p.shape):
            if shape[d] == 1:
                shape[d] = n
    grown = []
    for p in parts:
        want = list(shape)
        want[axis] = p.shape[axis]
        grown.append(p.expand(want))
    return torch.cat(grown, dim=axis)


def _sum(x, axis, ok):
    if ok is not None:
        x = _zero(x, ok)
    return x.sum(dim=axis, keepdim=True)


def _mean(x, axis, ok):
    """mean over the existing positions (0 over none)."""
    if ok is None:
        return x.mean(dim=axis, keepdim=True)
    count = ok.expand(x.shape).sum(dim=axis, keepdim=True).clamp(min=1)
    return _zero(x, ok).sum(dim=axis, keepdim=True) / count


def _max(x, axis, ok):
    """max over the existing positions (-inf over none)."""
    if ok is not None:
        x = x.masked_fill(~ok, float("-inf"))
    return x.amax(dim=axis, keepdim=True)


def _softmax(x, axis, ok):
    """softmax over the existing positions; -inf entries give 0, and a line
    whose entries are all -inf (or that has no existing position) gives 0."""
    if ok is not None:
        x = x.masked_fill(~ok, float("-inf"))
    dead = torch.isneginf(x).all(dim=axis, keepdim=True)
    return torch.softmax(x, dim=axis).masked_fill(dead, 0)


def _topk(x, k, axis, ok):
    """Keeps the k largest existing entries of each line (ties: the lower
    index first) and sets the others to -inf."""
    if ok is not None:
        x = x.masked_fill(~ok, float("-inf"))
    order = torch.sort(x, dim=axis, descending=True, stable=True).indices
    keep = torch.zeros_like(x, dtype=torch.bool).scatter(axis, order.narrow(axis, 0, min(k, x.shape[axis])), True)
    return x.masked_fill(~keep, float("-inf"))


def _grouped(x, axis, n):
    """x with axis stretched to n: a size-1 axis broadcasts; an axis of size
    g dividing n is a head group (GQA), entry h reading entry h // (n // g)."""
    g = x.shape[axis]
    if g == n or g == 1:
        return x
    return x.repeat_interleave(n // g, dim=axis)


def _append_contiguous(kv, k, v):
    """append(kv, k, v) on a contiguous cache [2, B, G, T, Dh]: the whole
    caches [B, G, T+S, Dh] and the state after the step, [2, B, G, T+S, Dh]."""
    K = torch.cat([kv[0], k], dim=2)
    V = torch.cat([kv[1], v], dim=2)
    return K, V, torch.stack([K, V])


def _cached(lens, appended, tokens):
    """Each sequence's cached tokens before the step: the layout's lengths
    count the appended tokens too. Checks them as the interpreter does."""
    cached = lens - appended
    if bool((cached < 0).any()) or bool((cached > tokens).any()):
        raise ValueError(f"a layout's lengths {lens.tolist()} do not fit {appended} new tokens over at most {tokens} cached")
    return cached


def _paged_rows(indptr, indices, page, b, t):
    """The page and slot of tokens t (a tensor) of sequence b."""
    start = int(indptr[b])
    return indices.long()[start + torch.div(t, page, rounding_mode="floor")], t % page


def _paged_view(pool, indptr, indices, page, cached, tokens):
    """The [2, B, G, T, Dh] view of a page pool [P, 2, G, page, Dh] before
    the step: each sequence's cached tokens, zeros after them."""
    B, rows = cached.numel(), pool.permute(0, 3, 1, 2, 4)  # [P, page, 2, G, Dh]
    out = pool.new_zeros((2, B, pool.shape[2], tokens, pool.shape[4]))
    for b in range(B):
        c = int(cached[b])
        pg, sl = _paged_rows(indptr, indices, page, b, torch.arange(c, device=pool.device))
        out[:, b, :, :c] = rows[pg, sl].permute(1, 2, 0, 3)
    return out


def _ragged_view(buf, indptr, cached, tokens):
    """The [2, B, G, T, Dh] view of a ragged buffer [2, G, N, Dh] before the
    step: each sequence's cached tokens, zeros after them."""
    B = cached.numel()
    out = buf.new_zeros((2, B, buf.shape[1], tokens, buf.shape[3]))
    for b in range(B):
        c, start = int(cached[b]), int(indptr[b])
        out[:, b, :, :c] = buf[:, :, start : start + c]
    return out


def _append_layout(view, k, v, cached):
    """append(kv, k, v) on a paged or ragged cache seen as view [2, B, G, T,
    Dh]: the whole caches [B, G, T+S, Dh], each sequence's cached tokens,
    its S new ones, then zeros."""
    _, B, G, T, Dh = view.shape
    S = k.shape[2]
    K, V = view.new_zeros((B, G, T + S, Dh)), view.new_zeros((B, G, T + S, Dh))
    for b in range(B):
        c = int(cached[b])
        K[b, :, :c], V[b, :, :c] = view[0, b, :, :c], view[1, b, :, :c]
        K[b, :, c : c + S], V[b, :, c : c + S] = k[b], v[b]
    return K, V


def _paged_write(pool, k, v, indptr, indices, page, cached):
    """The page pool after the step: the new tokens written at positions
    cached..cached+S-1 of each sequence, every other slot unchanged."""
    after = pool.clone()
    rows = after.permute(0, 3, 1, 2, 4)  # [P, page, 2, G, Dh], a view of after
    S = k.shape[2]
    for b in range(cached.numel()):
        t = int(cached[b]) + torch.arange(S, device=pool.device)
        pg, sl = _paged_rows(indptr, indices, page, b, t)
        rows[pg, sl] = torch.stack([k[b], v[b]]).permute(2, 0, 1, 3)
    return after


def _ragged_write(buf, k, v, indptr, cached):
    """The ragged buffer after the step: the new tokens written into the
    last S rows of each sequence."""
    after = buf.clone()
    S = k.shape[2]
    for b in range(cached.numel()):
        start = int(indptr[b]) + int(cached[b])
        after[:, :, start : start + S] = torch.stack([k[b], v[b]])
    return after
