#!/usr/bin/python3
# dropout_torch.py - write this test's inputs and what PyTorch's autograd
# makes of them under dropout with a given keep-mask, as FlashAttention's
# tests/test_flash_attn.py attention_ref applies it: the softmax's
# weights (attention) masked where the mask drops them, and V scaled by
# 1/(1 - p):
#
#     attention_drop = attention.masked_fill(~dropout_mask, 0.0)
#     output = attention_drop @ (v * (1.0 / (1 - p)))
#
# so that lse (softmax_lse) is the softmax's, before dropout, and the
# gradients are autograd's of sum(dO * output) through the same mask.
#
# B = 2 batches of H = 4 query heads sharing G = 2 KV heads, T = 3
# queries, S = 5 keys, d = 2, the default scale 1/sqrt(d), p = 0.3, and
# the mask in three forms:
#
#   keep.json     B x H x T x S booleans (true keeps)
#   s_dmask.json  the same mask as FlashAttention-2 returns S_dmask: the
#                 weights, negated where dropped (dropout_mask =
#                 S_dmask >= 0), some of them 0 where kept
#   keep_b11s.json B x 1 x 1 x S booleans, broadcast over heads and
#                 queries
#
# and causal masking aligned bottom-right with keep.json; then
# attention_ref in float32 (want_fp32.json), checked against the
# emulated fp32 baseline under the same dropout, and the same with dv
# not scaled by 1/(1 - p) (want_fp32_dv_unscaled.json), which fails.  Each
# want_NAME.json is a JSON object of arrays keyed as --check reads them
# (FlashAttention's out, softmax_lse, dq, dk, dv; attn's dropped, the
# weights after dropout, attention_drop / (1 - p)).  Everything in
# float64, inputs with two decimals so that the files hold them
# exactly.  The test compares attn with these recorded numbers only; run
# once with Debian's python3-torch (1.13 here), in this directory:
#     /usr/bin/python3 dropout_torch.py
import json
import math

import torch

torch.set_default_dtype(torch.float64)
torch.manual_seed(3003)
B, H, G, T, S, D = 2, 4, 2, 3, 5, 2
P = 0.3


def rounded(*shape):
    return torch.randn(*shape).mul(100).round().div(100)


q = rounded(B, H, T, D)
k = rounded(B, G, S, D)
v = rounded(B, G, S, D)
do = rounded(B, H, T, D)
keep = torch.rand(B, H, T, S) >= 0.3
keep_b11s = torch.rand(B, 1, 1, S) >= 0.3


def save(name, x):
    with open(name, "w") as f:
        json.dump(x.tolist(), f)
        f.write("\n")


def run(mask, causal=False, dtype=torch.float64, scale_dv=True):
    """attention_ref's stages, and autograd's dq, dk, dv, in dtype."""
    qq = q.to(dtype).clone().requires_grad_()
    kk = k.to(dtype).clone().requires_grad_()
    vv = v.to(dtype).clone().requires_grad_()
    ke = kk.repeat_interleave(H // G, dim=1)
    ve = vv.repeat_interleave(H // G, dim=1)
    scores = qq @ ke.transpose(-1, -2) / math.sqrt(D)
    if causal:      # bottom-right: query i sees keys j <= i + S - T
        allowed = torch.ones(T, S).tril(S - T).bool()
        scores = scores.masked_fill(~allowed, float("-inf"))
    lse = torch.logsumexp(scores, dim=-1)
    attention = torch.softmax(scores, dim=-1)
    attention_drop = attention.masked_fill(~mask, 0.0)
    out = attention_drop @ (ve * (1.0 / (1 - P)))
    (out * do.to(dtype)).sum().backward()
    dv = vv.grad if scale_dv else vv.grad * (1 - P)
    return {"out": out.detach().tolist(), "softmax_lse": lse.detach().tolist(),
            "dq": qq.grad.tolist(), "dk": kk.grad.tolist(),
            "dv": dv.tolist(),
            "dropped": (attention_drop.detach() / (1 - P)).tolist()}, \
        attention.detach()


def want(name, got):
    with open("want_%s.json" % name, "w") as f:
        json.dump(got, f)
        f.write("\n")


save("q.json", q)
save("k.json", k)
save("v.json", v)
save("do.json", do)
save("keep.json", keep)
save("keep_b11s.json", keep_b11s)
got, attention = run(keep)
want("keep", got)
# S_dmask: FlashAttention-2 returns the weights with the sign bit set
# where dropped; a kept weight written +0 (as one that underflowed would
# be) stays kept
s_dmask = torch.where(keep, attention, -attention)
s_dmask[0, 0, 0, 0] = 0.0
save("s_dmask.json", s_dmask)
want("b11s", run(keep_b11s)[0])
want("causal", run(keep, causal=True)[0])
# attention_ref in float32 (upcast=False), a kernel's precision, for
# --emulate fp32; and the same with dv not scaled by 1/(1 - p), a bug
want("fp32", run(keep, dtype=torch.float32)[0])
want("fp32_dv_unscaled", run(keep, dtype=torch.float32, scale_dv=False)[0])
