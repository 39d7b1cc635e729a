#!/usr/bin/python3
"""order_ref.py - FlashAttention's attention_ref in bfloat16 and float16,
with reorder_ops False (q / sqrt(d) first) and True (k / sqrt(d) first),
in PyTorch, for order.sh, which holds attn --emulate's two orders
(--emulate-order q and k) to it bit for bit.

    order_ref.py make DIR       write each case's inputs and references
    order_ref.py cases          the cases, a line each: name dtype causal
                                softcap
    order_ref.py compare DIR NAME ORDER NPZ
                                NPZ's output and weights against the
                                reference of ORDER (q or k): exit 0 when
                                both are the same bits, 1 with a line
                                naming the first difference

attention_ref (FlashAttention's tests/test_flash_attn.py) with
upcast=False computes in the inputs' dtype, step by step:

    k, v = repeat(k), repeat(v)           the KV heads for the query heads
    scores = einsum(q / sqrt(d), k)       reorder_ops=False
    scores = einsum(q, k / sqrt(d))       reorder_ops=True
    scores = tanh(scores / C) * C         softcap C, each op in the dtype
    scores.masked_fill_(causal, -inf)     aligned bottom-right
    attention = softmax(scores).to(v.dtype)
    output = einsum(attention, v)
    return output, attention

Each line below is that step, each op's result rounded to the dtype as
the tensor op rounds it on the GPU the reference runs on: a bfloat16 or
float16 matmul (einsum) accumulates the products in float32 and rounds
the sum once, the softmax computes in float32 and rounds the weights,
and dividing by the Python number sqrt(d) multiplies by its float32
reciprocal (CUDA's true division by a scalar), equal for these d to
attn's float32 scale 1/sqrt(d) (asserted).  The float32 sums are
written as loops in key (and column) order, so that they have one order
on any machine (PyTorch's CPU matmul in bfloat16 does not accumulate in
float32, and its float32 one sums in blocks); each product of two
numbers of the dtype is exact in float32, so a sum with or without fma
is the same.  exp and tanh are taken in float64 and rounded to float32:
the correctly rounded float32 value, which libm's gives and PyTorch's
vectorised float32 ones may miss by an ulp.

Inputs: standard normal times 2, rounded to the dtype, in FlashAttention's
layout B x T x H x D (bshd), saved as float64 so that attn reads them
exactly; references out_q.npy, out_k.npy (B x T x H x D) and attn_q.npy,
attn_k.npy (the weights, B x H x T x S).  PyTorch is imported by the
functions that make the references: compare and cases need NumPy alone,
and order.sh runs compare for each of its runs.
"""
import math
import sys

import numpy as np

# name, dtype, B, T, S, H, G, D, causal, softcap: GQA and multi-query,
# causal (T <= S, so that no row is masked whole), a softcap, d whose
# sqrt is not a power of 2 (with one, scaling is exact and the orders
# agree)
CASES = [
    ("bf16-gqa", "bf16", 2, 5, 7, 4, 2, 8, False, 0.0),
    ("bf16-causal", "bf16", 1, 6, 9, 2, 2, 32, True, 0.0),
    ("bf16-causal-softcap", "bf16", 2, 7, 7, 2, 1, 8, True, 5.0),
    ("fp16-mqa", "fp16", 1, 9, 11, 4, 1, 40, False, 0.0),
    ("fp16-causal-gqa", "fp16", 2, 4, 6, 4, 2, 8, True, 0.0),
]


def f32sum(a, b):
    """sum_c a[..., c] * b[..., c] in float32, c in order."""
    import torch

    acc = torch.zeros(a.shape[:-1], dtype=torch.float32)
    for c in range(a.shape[-1]):
        acc = acc + a[..., c].float() * b[..., c].float()
    return acc


def scaled(x, scale, dtype):
    """x / sqrt(d) in dtype: x times the float32 reciprocal, rounded."""
    return (x.float() * scale).to(dtype)


def attention_ref(q, k, v, causal, softcap, reorder_ops):
    """attention_ref(upcast=False) as the module's comment says."""
    import torch

    dtype = q.dtype
    B, T, H, D = q.shape
    S, G = k.shape[1], k.shape[2]
    k = k.repeat_interleave(H // G, dim=2)
    v = v.repeat_interleave(H // G, dim=2)
    scale = torch.tensor(1.0 / math.sqrt(D), dtype=torch.float32)
    assert scale == torch.tensor(1.0, dtype=torch.float32) / torch.tensor(
        math.sqrt(D), dtype=torch.float32), "CUDA's reciprocal differs"
    if reorder_ops:
        qq, kk = q, scaled(k, scale, dtype)
    else:
        qq, kk = scaled(q, scale, dtype), k
    # bthd,bshd->bhts
    scores = f32sum(qq.permute(0, 2, 1, 3)[:, :, :, None, :],
                    kk.permute(0, 2, 1, 3)[:, :, None, :, :]).to(dtype)
    if softcap > 0:
        cap = torch.tensor(softcap, dtype=torch.float32)
        scores = (scores.float() / cap).to(dtype)
        scores = torch.tanh(scores.double()).float().to(dtype)
        scores = (scores.float() * cap).to(dtype)
    if causal:
        i = torch.arange(T)[:, None]
        j = torch.arange(S)[None, :]
        scores = scores.masked_fill(j > i + S - T, float("-inf"))
    # softmax in float32: the row's max, exp, the sum in key order
    x = scores.float()
    e = torch.exp((x - x.amax(dim=-1, keepdim=True)).double()).float()
    total = torch.zeros(e.shape[:-1], dtype=torch.float32)
    for j in range(S):
        total = total + e[..., j]
    attention = (e / total[..., None]).to(v.dtype)
    # bhts,bshd->bthd
    out = f32sum(attention[:, :, :, None, :],
                 v.permute(0, 2, 3, 1)[:, :, None, :, :]).to(dtype)
    return out.permute(0, 2, 1, 3), attention


def make(out):
    """Each case's inputs and references into directory out."""
    import torch

    gen = torch.Generator().manual_seed(1205)
    for name, prec, B, T, S, H, G, D, causal, softcap in CASES:
        dtype = torch.bfloat16 if prec == "bf16" else torch.float16
        q = (torch.randn(B, T, H, D, generator=gen, dtype=torch.float64) *
             2).to(dtype)
        k = (torch.randn(B, S, G, D, generator=gen, dtype=torch.float64) *
             2).to(dtype)
        v = torch.randn(B, S, G, D, generator=gen,
                        dtype=torch.float64).to(dtype)
        for n, x in (("q", q), ("k", k), ("v", v)):
            np.save(f"{out}/{name}-{n}.npy", x.double().numpy())
        for order, reorder in (("q", False), ("k", True)):
            o, a = attention_ref(q, k, v, causal, softcap, reorder)
            np.save(f"{out}/{name}-out_{order}.npy", o.double().numpy())
            np.save(f"{out}/{name}-attn_{order}.npy", a.double().numpy())


def same(a, b):
    """The same shape and bits, a nan equal to a nan."""
    return a.shape == b.shape and np.array_equal(a, b, equal_nan=True)


def compare(out, name, order, npz):
    """attn's NPZ against the reference of order: 0 when the same."""
    got = np.load(npz)
    ref = {"output": np.load(f"{out}/{name}-out_{order}.npy"),
           "weights": np.load(f"{out}/{name}-attn_{order}.npy")}
    for stage, want in ref.items():
        have = got[stage]
        if not same(have, want):
            if have.shape != want.shape:
                print(f"{stage} is {have.shape}, attention_ref's "
                      f"{want.shape}")
            else:
                diff = np.argwhere(have != want)
                i = tuple(diff[0])
                print(f"{stage}: {len(diff)} of {have.size} differ, first "
                      f"at {list(i)}: attn {have[i]!r}, attention_ref "
                      f"{want[i]!r}")
            return 1
    return 0


def main():
    if sys.argv[1] == "make":
        make(sys.argv[2])
    elif sys.argv[1] == "cases":
        for name, prec, *_, causal, softcap in CASES:
            print(name, prec, int(causal), softcap)
    else:
        sys.exit(compare(*sys.argv[2:6]))


if __name__ == "__main__":
    main()
