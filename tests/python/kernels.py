"""kernels.py - the kernels under test of tests/python/: attention forward
and backward written in NumPy as FlashAttention-2 computes them, tiled
over keys with the online softmax, in float32 (prec "fp32") or in
bfloat16 with float32 accumulators (prec "bf16"), right or with a bug
planted (BUGS).  They take and return FlashAttention's layouts and
conventions (q B x T x H x D, k and v B x S x G x D with G dividing H;
causal aligned bottom-right; window_size (left, right) with -1 for no
bound; the softcap applied to the scaled logits; softmax_lse in natural
log, B x H x T, +inf where a row has no key and output 0 there), so
that test_flash_attn.py checks them with attn.flash's conventions.

The bfloat16 kernel is FlashAttention-2's: inputs in bfloat16; the
logits and every other product accumulated in float32; P rounded to
bfloat16 for P V and P^T dO, dS rounded to bfloat16 for dS K and dS^T Q;
out, dq, dk and dv stored in bfloat16; delta = rowsum(dO * out) and
softmax_lse kept in float32.  bfloat16 is float32 rounded to its top 16
bits (to nearest, ties to even), held in float32 arrays.

One core a sequence (fwd_seq, bwd_seq): the dense batch calls it a batch
at a time, varlen a sequence of cu_seqlens at a time, the paged cache
with the keys of a batch gathered from its pages by block_table.
"""
import numpy as np

# Keys a tile of the online softmax: small, so that the cases of
# test_flash_attn.py span several tiles and a partial last one.
BLOCK_N = 32

# The bugs a kernel can have planted, and what each does.
BUGS = {
    "causal_top_left": "causal aligned top-left (offset 0, PyTorch's) "
                       "where FlashAttention aligns bottom-right",
    "exp2_scale": "exp2 of the scaled logits without the factor log2(e): "
                  "the softmax runs at the wrong scale",
    "gqa_nosum": "dK and dV per query head, not summed over the query "
                 "heads that share a KV head",
    "lse_base2": "softmax_lse stored in log2, as Triton's kernels store "
                 "it, where natural log is expected",
}


def bf16(x):
    """x rounded to bfloat16, to nearest, ties to even (no nan here)."""
    u = np.ascontiguousarray(x, dtype=np.float32).view(np.uint32)
    u = (u + np.uint32(0x7FFF) + ((u >> 16) & np.uint32(1))) & \
        np.uint32(0xFFFF0000)
    return u.view(np.float32)


def fp32(x):
    """x as float32."""
    return np.asarray(x, dtype=np.float32)


def rounder(prec):
    """The function that stores a tensor in prec."""
    return {"fp32": fp32, "bf16": bf16}[prec]


def keep(T, S, lo, hi, causal, window, bug):
    """T x S bool, the logits a query (rows lo..hi of T) may see, as
    FlashAttention masks them: key j is kept by a causal mask when j <=
    i + S - T, by window_size (left, right) when i + S - T - left <= j
    <= i + S - T + right (-1: no bound)."""
    i = np.arange(lo, hi)[:, None]
    j = np.arange(S)[None, :]
    off = 0 if bug == "causal_top_left" else S - T
    ok = np.ones((hi - lo, S), dtype=bool)
    left, right = window
    if causal:
        right = 0
    if right >= 0:
        ok &= j <= i + off + right
    if left >= 0:
        ok &= j >= i + off - left
    return ok


def logits(qh, kt, scale, softcap):
    """H x T x n scaled logits of the tile kt (H x n x D) and tanh of
    them over softcap (None without one), in float32."""
    s = (qh @ kt.transpose(0, 2, 1)) * np.float32(scale)
    if softcap:
        t = np.tanh(s / np.float32(softcap))
        return np.float32(softcap) * t, t
    return s, None


def fwd_seq(q, k, v, scale, causal, window, softcap, prec, bug):
    """One sequence: q T x H x D, k and v S x G x D.  Returns out T x H x
    D and lse H x T, as fwd stores them."""
    f = rounder(prec)
    T, H, D = q.shape
    S, G, Dv = v.shape
    qh = f(q).transpose(1, 0, 2)                       # H x T x D
    kh = np.repeat(f(k).transpose(1, 0, 2), H // G, axis=0)  # H x S x D
    vh = np.repeat(f(v).transpose(1, 0, 2), H // G, axis=0)
    # the exponent's base: e, or 2 with the logits in log2 units
    unit = np.float32(1) if bug == "exp2_scale" else np.float32(np.log2(np.e))
    m = np.full((H, T, 1), -np.inf, dtype=np.float32)
    lsum = np.zeros((H, T, 1), dtype=np.float32)
    acc = np.zeros((H, T, Dv), dtype=np.float32)
    for j0 in range(0, S, BLOCK_N):
        j1 = min(S, j0 + BLOCK_N)
        s, _ = logits(qh, kh[:, j0:j1], scale, softcap)
        ok = keep(T, S, 0, T, causal, window, bug)[:, j0:j1]
        s = np.where(ok[None], s * unit, np.float32(-np.inf))
        m_new = np.maximum(m, s.max(axis=-1, keepdims=True))
        # rows with no key yet keep m -inf: shift by 0 there
        base = np.where(np.isfinite(m_new), m_new, np.float32(0))
        p = np.exp2(s - base)
        alpha = np.exp2(np.where(np.isfinite(m), m - base, -np.inf))
        lsum = lsum * alpha + p.sum(axis=-1, keepdims=True)
        acc = acc * alpha + f(p) @ vh[:, j0:j1]
        m = m_new
    empty = lsum == 0
    out = np.where(empty, np.float32(0), acc / np.where(empty, 1, lsum))
    lse2 = m + np.log2(np.where(empty, 1, lsum))       # in log2
    if bug != "lse_base2":
        lse2 = lse2 / np.float32(np.log2(np.e))
    lse = np.where(empty, np.float32(np.inf), lse2)[..., 0]
    return f(out).transpose(1, 0, 2), fp32(lse)


def bwd_seq(do, q, k, v, out, lse, scale, causal, window, softcap, prec,
            bug):
    """One sequence's backward pass: do and out T x H x D, lse H x T (as
    fwd_seq returns it, natural log).  Returns dq T x H x D, dk and dv S
    x G x D (S x H x D with bug gqa_nosum)."""
    f = rounder(prec)
    T, H, D = q.shape
    S, G, Dv = v.shape
    qh = f(q).transpose(1, 0, 2)
    kh = np.repeat(f(k).transpose(1, 0, 2), H // G, axis=0)
    vh = np.repeat(f(v).transpose(1, 0, 2), H // G, axis=0)
    doh = f(do).transpose(1, 0, 2)
    delta = (doh * f(out).transpose(1, 0, 2)).sum(axis=-1, keepdims=True)
    lse_c = lse[..., None]
    dq = np.zeros((H, T, D), dtype=np.float32)
    dk = np.zeros((H, S, D), dtype=np.float32)
    dv = np.zeros((H, S, Dv), dtype=np.float32)
    for j0 in range(0, S, BLOCK_N):
        j1 = min(S, j0 + BLOCK_N)
        s, t = logits(qh, kh[:, j0:j1], scale, softcap)
        ok = keep(T, S, 0, T, causal, window, None)[:, j0:j1]
        p = np.where(ok[None] & np.isfinite(lse_c), np.exp(s - np.where(
            np.isfinite(lse_c), lse_c, 0)), np.float32(0))
        pb = f(p)
        dv[:, j0:j1] = pb.transpose(0, 2, 1) @ doh
        dp = doh @ vh[:, j0:j1].transpose(0, 2, 1)
        ds = p * (dp - delta)
        if t is not None:
            ds = ds * (np.float32(1) - t * t)
        dsb = f(ds)
        dq += dsb @ kh[:, j0:j1]
        dk[:, j0:j1] = (dsb.transpose(0, 2, 1) @ qh) * np.float32(scale)
    dq = dq * np.float32(scale)                        # once, as FA2
    if bug != "gqa_nosum":
        dk = dk.reshape(G, H // G, S, D).sum(axis=1)
        dv = dv.reshape(G, H // G, S, Dv).sum(axis=1)
    return (f(dq).transpose(1, 0, 2), f(dk).transpose(1, 0, 2),
            f(dv).transpose(1, 0, 2))


def conventions(q, softmax_scale, window_size):
    """The scale and window as the cores take them."""
    scale = softmax_scale if softmax_scale is not None else \
        1.0 / np.sqrt(q.shape[-1])
    return scale, tuple(int(w) for w in window_size)


def flash_fwd(q, k, v, softmax_scale=None, causal=False,
              window_size=(-1, -1), softcap=0.0, prec="fp32", bug=None):
    """flash_attn_func's forward: q B x T x H x D, k and v B x S x G x D.
    Returns out B x T x H x D and softmax_lse B x H x T (float32)."""
    scale, window = conventions(q, softmax_scale, window_size)
    outs, lses = zip(*(fwd_seq(q[b], k[b], v[b], scale, causal, window,
                               softcap, prec, bug)
                       for b in range(q.shape[0])))
    return np.stack(outs), np.stack(lses)


def flash_bwd(dout, q, k, v, out, lse, softmax_scale=None, causal=False,
              window_size=(-1, -1), softcap=0.0, prec="fp32", bug=None):
    """flash_attn_func's backward: returns dq, dk, dv shaped as q, k, v."""
    scale, window = conventions(q, softmax_scale, window_size)
    grads = [bwd_seq(dout[b], q[b], k[b], v[b], out[b], lse[b], scale,
                     causal, window, softcap, prec, bug)
             for b in range(q.shape[0])]
    return tuple(np.stack(g) for g in zip(*grads))


def varlen_fwd(q, k, v, cu_seqlens_q, cu_seqlens_k, softmax_scale=None,
               causal=False, window_size=(-1, -1), softcap=0.0, prec="fp32",
               bug=None):
    """flash_attn_varlen_func's forward: q total_q x H x D, k and v
    total_k x G x D, sequence b at rows cu_seqlens[b]..cu_seqlens[b+1].
    Returns out total_q x H x D and softmax_lse H x total_q."""
    scale, window = conventions(q, softmax_scale, window_size)
    outs, lses = [], []
    for b in range(len(cu_seqlens_q) - 1):
        qs = slice(cu_seqlens_q[b], cu_seqlens_q[b + 1])
        ks = slice(cu_seqlens_k[b], cu_seqlens_k[b + 1])
        o, lse = fwd_seq(q[qs], k[ks], v[ks], scale, causal, window,
                         softcap, prec, bug)
        outs.append(o)
        lses.append(lse)
    return np.concatenate(outs), np.concatenate(lses, axis=1)


def varlen_bwd(dout, q, k, v, out, lse, cu_seqlens_q, cu_seqlens_k,
               softmax_scale=None, causal=False, window_size=(-1, -1),
               softcap=0.0, prec="fp32", bug=None):
    """flash_attn_varlen_func's backward: dq, dk, dv packed as q, k, v."""
    scale, window = conventions(q, softmax_scale, window_size)
    grads = []
    for b in range(len(cu_seqlens_q) - 1):
        qs = slice(cu_seqlens_q[b], cu_seqlens_q[b + 1])
        ks = slice(cu_seqlens_k[b], cu_seqlens_k[b + 1])
        grads.append(bwd_seq(dout[qs], q[qs], k[ks], v[ks], out[qs],
                             lse[:, qs], scale, causal, window, softcap,
                             prec, bug))
    return tuple(np.concatenate(g) for g in zip(*grads))


def kvcache_fwd(q, k_cache, v_cache, cache_seqlens, block_table=None,
                softmax_scale=None, causal=False, window_size=(-1, -1),
                softcap=0.0, prec="fp32", bug=None):
    """flash_attn_with_kvcache's forward: q B x T x H x D; the cache B x
    S_cache x G x D, or with block_table (B x pages) pages of
    num_blocks x page_size x G x D; batch b attends its first
    cache_seqlens[b] keys.  Returns out B x T x H x D and softmax_lse B x
    H x T."""
    scale, window = conventions(q, softmax_scale, window_size)
    outs, lses = [], []
    for b in range(q.shape[0]):
        n = int(cache_seqlens[b])
        if block_table is None:
            kb, vb = k_cache[b, :n], v_cache[b, :n]
        else:
            kb = np.concatenate([k_cache[p] for p in block_table[b]])[:n]
            vb = np.concatenate([v_cache[p] for p in block_table[b]])[:n]
        o, lse = fwd_seq(q[b], kb, vb, scale, causal, window, softcap,
                         prec, bug)
        outs.append(o)
        lses.append(lse)
    return np.stack(outs), np.stack(lses)
