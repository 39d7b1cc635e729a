#!/usr/bin/python3
"""order_ref.py - FlashAttention's attention_ref in bfloat16 and float16,
with reorder_ops False (q / sqrt(d) first) and True (k / sqrt(d) first),
and its backward by autograd, in PyTorch, for order.sh, which holds attn
--emulate's two orders (--emulate-order q and k) to it bit for bit.

    order_ref.py make DIR       write each case's inputs and references
    order_ref.py cases          the cases, a line each: name, dtype,
                                causal (0 or 1), softcap (0.0: none),
                                backward (0 or 1)
    order_ref.py compare DIR LIST
                                each line of LIST, "LABEL<tab>NAME<tab>
                                ORDER<tab>NPZ", attn's NPZ against case
                                NAME's references of ORDER (q or k): a
                                line "LABEL<tab>WHY" each, WHY empty when
                                every stage is the same bits, else the
                                first difference

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

attention_ref below is that, step by step, each op's result rounded to
the dtype as the tensor op rounds it on the GPU the reference runs on: a
bfloat16 or float16 matmul (einsum) accumulates the products in float32
and rounds the sum once, the softmax computes in float32 and rounds the
weights, and dividing by the Python number sqrt(d) multiplies by its
float32 reciprocal (CUDA's true division by a scalar), equal for these d
to attn's float32 scale 1/sqrt(d) (asserted).  The float32 sums are
written as loops in key (and column) order, so that they have one order
on any machine (PyTorch's CPU matmul in bfloat16 does not accumulate in
float32, and its float32 one sums in blocks); each product of two
numbers of the dtype is exact in float32, so a sum with or without fma
is the same.  exp and tanh are taken in float64 and rounded to float32:
the correctly rounded float32 value, which libm's gives and PyTorch's
vectorised float32 ones may miss by an ulp.

The backward is autograd's through the scaling, the masks and the
casts, so that where the scale's gradient is taken, and that the heads
sharing a KV head are summed after it, are autograd's; the two matmuls
(Matmul) and the softmax with its product with V (SoftmaxV) are
functions whose backward is written out, as a kernel's is: the matmuls'
gradients summed in float32 in order and rounded once, and the
softmax's with FlashAttention's delta, rowsum(dO * output) in float32,
which attn's baseline takes (attn(1), Checking a kernel) where autograd
would sum weights * dP.  The repeated K and V are leaves, and their
gradients summed over the heads of each KV head in float32, in head
order, and rounded once, as the backward of einops' repeat (an expand)
sums them.  Cases with a softcap are forward only.

Inputs: standard normal times 2 (dO: times 1), rounded to the dtype, in
FlashAttention's layout B x T x H x D (bshd), saved as float64 so that
attn reads them exactly; references out_ORDER.npy (B x T x H x D),
attn_ORDER.npy (the weights, B x H x T x S), and dq_ORDER.npy,
dk_ORDER.npy, dv_ORDER.npy (bshd), ORDER q or k.
"""
import math
import sys

import numpy as np
import torch

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

# attn's stage for each reference
STAGES = {"out": "output", "attn": "weights", "dq": "grad_q",
          "dk": "grad_k", "dv": "grad_v"}


def f32sum(a, b):
    """sum_c a[..., c] * b[..., c] in float32, c in order."""
    acc = torch.zeros(torch.broadcast_shapes(a.shape, b.shape)[:-1],
                      dtype=torch.float32)
    for c in range(a.shape[-1]):
        acc = acc + a[..., c].float() * b[..., c].float()
    return acc


def matmul(a, b):
    """a @ b as a GPU's matmul in a's dtype: float32 sums, one rounding."""
    return f32sum(a[..., :, None, :], b.transpose(-1, -2)[..., None, :, :]
                  ).to(a.dtype)


class Matmul(torch.autograd.Function):
    """scores = a b^T (B x H x T x S from B x H x T x D and B x H x S x D),
    and its gradients as matmuls: da = g b, db = g^T a."""

    @staticmethod
    def forward(ctx, a, b):
        ctx.save_for_backward(a, b)
        return matmul(a, b.transpose(-1, -2))

    @staticmethod
    def backward(ctx, g):
        a, b = ctx.saved_tensors
        return matmul(g, b), matmul(g.transpose(-1, -2), a)


class SoftmaxV(torch.autograd.Function):
    """softmax(x).to(dtype), then P V; its backward with FlashAttention's
    delta.  Returns P and the output; x is float32, v in the dtype."""

    @staticmethod
    def forward(ctx, x, v):
        S = x.shape[-1]
        e = torch.exp((x - x.amax(dim=-1, keepdim=True)).double()).float()
        total = torch.zeros(e.shape[:-1], dtype=torch.float32)
        for j in range(S):
            total = total + e[..., j]
        p = (e / total[..., None]).to(v.dtype)
        out = matmul(p, v)
        ctx.save_for_backward(x, v, p, out)
        return p, out

    @staticmethod
    def backward(ctx, gp, dout):
        x, v, p, out = ctx.saved_tensors
        dp = matmul(dout, v.transpose(-1, -2))
        delta = f32sum(dout, out)[..., None]
        ds = (p.float() * (dp.float() - delta)).to(p.dtype)
        ds = ds.masked_fill((x == float("-inf")) | (p == 0), 0.0)
        return ds.float(), matmul(p.transpose(-1, -2), dout)


def scaled(x, scale):
    """x / sqrt(d) in x's dtype: x times the float32 reciprocal."""
    return (x.float() * scale).to(x.dtype)


def head_sum(x, G):
    """B x H x S x D summed over the H / G heads of each KV head, in
    float32 in head order, rounded once: B x G x S x D."""
    B, H, S, D = x.shape
    x = x.reshape(B, G, H // G, S, D)
    acc = torch.zeros(B, G, S, D, dtype=torch.float32)
    for h in range(H // G):
        acc = acc + x[:, :, h].float()
    return acc.to(x.dtype)


def attention_ref(q, k, v, do, causal, softcap, reorder_ops):
    """attention_ref(upcast=False) as the module's comment says, in bshd;
    with do, the gradients of sum(do * output) too."""
    dtype = q.dtype
    B, T, H, D = q.shape
    S, G = k.shape[1], k.shape[2]
    scale = torch.tensor(1.0 / math.sqrt(D), dtype=torch.float32)
    assert scale == torch.tensor(1.0, dtype=torch.float32) / torch.tensor(
        math.sqrt(D), dtype=torch.float32), "CUDA's reciprocal differs"
    # B x H x T x D and the repeated K and V, B x H x S x D: the leaves
    q = q.permute(0, 2, 1, 3).contiguous().requires_grad_()
    k = k.permute(0, 2, 1, 3).repeat_interleave(H // G, dim=1)
    v = v.permute(0, 2, 1, 3).repeat_interleave(H // G, dim=1)
    k.requires_grad_()
    v.requires_grad_()
    if reorder_ops:
        scores = Matmul.apply(q, scaled(k, scale))
    else:
        scores = Matmul.apply(scaled(q, scale), k)
    if softcap > 0:
        cap = torch.tensor(softcap, dtype=torch.float32)
        scores = (scores.float() / cap).to(dtype)
        scores = torch.tanh(scores.double()).float().to(dtype)
        scores = (scores.float() * cap).to(dtype)
    if causal:
        i = torch.arange(T)[:, None]
        j = torch.arange(S)[None, :]
        scores = scores.masked_fill(j > i + S - T, float("-inf"))
    attention, out = SoftmaxV.apply(scores.float(), v)
    refs = {"out": out.permute(0, 2, 1, 3), "attn": attention}
    if do is not None:
        out.backward(do.permute(0, 2, 1, 3))
        refs["dq"] = q.grad.permute(0, 2, 1, 3)
        refs["dk"] = head_sum(k.grad, G).permute(0, 2, 1, 3)
        refs["dv"] = head_sum(v.grad, G).permute(0, 2, 1, 3)
    return refs


def make(out):
    """Each case's inputs and references into directory out."""
    gen = torch.Generator().manual_seed(1205)

    def randn(*shape, times=1.0):
        x = torch.randn(*shape, generator=gen, dtype=torch.float64)
        return (x * times).to(dtype)

    for name, prec, B, T, S, H, G, D, causal, softcap in CASES:
        dtype = torch.bfloat16 if prec == "bf16" else torch.float16
        q = randn(B, T, H, D, times=2.0)
        k = randn(B, S, G, D, times=2.0)
        v = randn(B, S, G, D)
        do = randn(B, T, H, D) if softcap == 0 else None
        for n, x in (("q", q), ("k", k), ("v", v), ("do", do)):
            if x is not None:
                np.save(f"{out}/{name}-{n}.npy", x.double().numpy())
        for order, reorder in (("q", False), ("k", True)):
            refs = attention_ref(q, k, v, do, causal, softcap, reorder)
            for n, x in refs.items():
                np.save(f"{out}/{name}-{n}_{order}.npy",
                        x.detach().double().numpy())


def differs(out, name, order, npz):
    """Why attn's npz is not case name's references of order, or ""."""
    got = np.load(npz)
    for ref, stage in STAGES.items():
        try:
            want = np.load(f"{out}/{name}-{ref}_{order}.npy")
        except FileNotFoundError:
            continue
        have = got[stage]
        if have.shape != want.shape:
            return f"{stage} is {have.shape}, attention_ref's {want.shape}"
        if not np.array_equal(have, want, equal_nan=True):
            diff = np.argwhere(have != want)
            i = tuple(diff[0])
            return (f"{stage}: {len(diff)} of {have.size} differ, first at "
                    f"{list(i)}: attn {have[i]!r}, attention_ref "
                    f"{want[i]!r}")
    return ""


def main():
    if sys.argv[1] == "make":
        make(sys.argv[2])
    elif sys.argv[1] == "cases":
        for name, prec, *_, causal, softcap in CASES:
            print(name, prec, int(causal), softcap, int(softcap == 0))
    else:
        with open(sys.argv[3]) as f:
            for line in f:
                label, name, order, npz = line.rstrip("\n").split("\t")
                print(f"{label}\t{differs(sys.argv[2], name, order, npz)}")


if __name__ == "__main__":
    main()
