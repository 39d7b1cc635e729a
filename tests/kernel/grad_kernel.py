#!/usr/bin/env python3
"""grad_kernel.py MODE PREC DIR - a backward pass of attention written in
NumPy as a FlashAttention-2 kernel computes it, in float32 (PREC fp32) or
in bfloat16 with float32 accumulators (PREC bf16), right (MODE good) or
with a bug planted (dk-nosum: dK of one query head, not the sum over the
heads that share the KV head; dk-noscale: dK without the scale;
nocapgrad: dS not multiplied by the softcap's derivative; lse-shift:
softmax_lse off by +0.02; lse-scale: softmax_lse times 1.005; dv-head:
dV of one KV head, batch 1's second, times 1.02, beside a loud one,
batch 1's first, whose dO is 4 times the others', so that its baseline
errs 4 times as much and hides the bug from a whole-tensor verdict).  grad.sh
checks each with attn --grad --check --emulate PREC.

Writes q, k, v and do (B x H x T x D, bhsd, float32 holding numbers of
PREC), dq, dk, dv, and lse (softmax_lse, B x H x T) to DIR.  GQA with H = 4 query heads on G = 2 KV
heads, softcap 3 (SOFTCAP), logits of a few units so that tanh bends.

The bf16 kernel is FlashAttention-2's: inputs in bf16; S = Q K^T and
every other product accumulated in float32; P rounded to bf16 for P V
and P^T dO, dS rounded to bf16 for dS K and dS^T Q; O, dQ, dK, dV stored
in bf16; delta = rowsum(dO * O) and softmax_lse = max + log(sum) in
float32, as FlashAttention's kernels keep them.
"""
import sys

import numpy as np

B, H, G, T, S, D = 2, 4, 2, 40, 33, 16
SOFTCAP = np.float32(3.0)


def bf16(x):
    """x rounded to bfloat16, to nearest, ties to even (no nan here)."""
    u = np.ascontiguousarray(x, dtype=np.float32).view(np.uint32)
    u = (u + np.uint32(0x7FFF) + ((u >> 16) & np.uint32(1))) & \
        np.uint32(0xFFFF0000)
    return u.view(np.float32)


def main():
    mode, prec, out = sys.argv[1], sys.argv[2], sys.argv[3]
    f = bf16 if prec == "bf16" else (lambda x: x.astype(np.float32))
    rng = np.random.default_rng(20)
    q = f(rng.standard_normal((B, H, T, D)) * 1.5)
    k = f(rng.standard_normal((B, G, S, D)) * 1.5)
    v = f(rng.standard_normal((B, G, S, D)))
    do = f(rng.standard_normal((B, H, T, D)))
    if mode == "dv-head":
        do[0, :H // G] *= np.float32(4)     # batch 1's loud KV head
    for name, x in (("q", q), ("k", k), ("v", v), ("do", do)):
        np.save(f"{out}/{name}.npy", x)

    scale = np.float32(1 / np.sqrt(D))
    kr = np.repeat(k, H // G, axis=1)          # query head h reads h / 2
    vr = np.repeat(v, H // G, axis=1)
    x = (q @ kr.transpose(0, 1, 3, 2)) * scale
    t = np.tanh(x / SOFTCAP)
    s = SOFTCAP * t
    mx = s.max(axis=-1, keepdims=True)
    p = np.exp(s - mx)
    rowsum = p.sum(axis=-1, keepdims=True)
    lse = (mx + np.log(rowsum))[..., 0]
    if mode == "lse-shift":
        lse = lse + np.float32(0.02)
    elif mode == "lse-scale":
        lse = lse * np.float32(1.005)
    p /= rowsum
    pb = f(p)
    o = f(pb @ vr)
    dp = do @ vr.transpose(0, 1, 3, 2)
    delta = (do * o).sum(axis=-1, keepdims=True)
    ds = p * (dp - delta)
    if mode != "nocapgrad":
        ds = ds * (np.float32(1) - t * t)
    dsb = f(ds)
    dq = f((dsb @ kr) * scale)
    dk_h = (dsb.transpose(0, 1, 3, 2) @ q)
    if mode != "dk-noscale":
        dk_h = dk_h * scale
    dv_h = pb.transpose(0, 1, 3, 2) @ do
    # the sum over the query heads of each KV head
    dk_g = dk_h.reshape(B, G, H // G, S, D)
    dk = f(dk_g[:, :, 0] if mode == "dk-nosum" else dk_g.sum(axis=2))
    dv = f(dv_h.reshape(B, G, H // G, S, D).sum(axis=2))
    if mode == "dv-head":
        dv[0, 1] = f(dv[0, 1] * np.float32(1.02))
    for name, x in (("dq", dq), ("dk", dk), ("dv", dv), ("lse", lse)):
        np.save(f"{out}/{name}.npy", x.astype(np.float32))


if __name__ == "__main__":
    main()
