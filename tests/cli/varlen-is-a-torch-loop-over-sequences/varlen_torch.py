#!/usr/bin/python3
# varlen_torch.py - write this test's inputs and what PyTorch computes on
# them: a packed batch as FlashAttention's varlen functions take it
# (flash_attn_varlen_func(q, k, v, cu_seqlens_q, cu_seqlens_k, causal=True,
# alibi_slopes=...), with seqused_k as its kvcache path takes the used
# lengths), computed the plain way, a Python loop over the sequences:
# sequence b's queries q[cu_q[b]:cu_q[b+1]] attend its first used_k[b]
# keys k[cu_k[b]:], causal aligned bottom-right on those used keys, ALiBi
# -slope_h |i + S_b - T_b - j|, RoPE (half style, Llama's) at the same
# positions (query i at i + S_b - T_b, key j at j), GQA (2 query heads
# on 1 KV head).  A query that sees no key (sequence 4 has more queries
# than used keys) gets weights 0 and output 0, as FlashAttention stores
# it; its gradients are 0.  Then the backward pass by autograd for
# dO = do.json.  Everything in float64.
#
#   q.json k.json v.json do.json   total_q x H*d, total_k x G*d, ...
#   want_output.json want_grad_q.json want_grad_k.json want_grad_v.json
#
# The test compares attn with these recorded numbers only; run once with
# Debian's python3-torch (1.13 here), in this directory:
#     /usr/bin/python3 varlen_torch.py
import json

import torch

torch.set_default_dtype(torch.float64)
torch.manual_seed(21)
H, G, D = 2, 1, 4
seq_q = [3, 0, 4, 5]            # an empty sequence, and one with T > S
seq_k = [5, 2, 6, 3]
used = [4, 2, 6, 2]             # keys in use (a KV cache's length)
cu_q = [0]
cu_k = [0]
for t, s in zip(seq_q, seq_k):
    cu_q.append(cu_q[-1] + t)
    cu_k.append(cu_k[-1] + s)
TQ, TK = cu_q[-1], cu_k[-1]


def rounded(*shape):
    # two decimals, so that the files hold the inputs exactly
    return torch.randn(*shape).mul(100).round().div(100)


q = rounded(TQ, H * D).requires_grad_()
k = rounded(TK, G * D).requires_grad_()
v = rounded(TK, G * D).requires_grad_()
do = rounded(TQ, H * D)
slopes = torch.tensor([2.0 ** (-8.0 * (h + 1) / H) for h in range(H)])


def rope(x, pos):
    # x: heads x rows x D; Llama's rotate_half at positions pos
    inv_freq = 1.0 / (10000.0 ** (torch.arange(0, D, 2,
                                               dtype=torch.int64).double()
                                  / D))
    freqs = pos[:, None].double() * inv_freq[None, :]
    emb = torch.cat((freqs, freqs), dim=-1)
    cos, sin = emb.cos(), emb.sin()
    x1, x2 = x[..., :D // 2], x[..., D // 2:]
    return x * cos + torch.cat((-x2, x1), dim=-1) * sin


outs = []
for b in range(len(seq_q)):
    T, S = seq_q[b], used[b]
    if T == 0:
        continue
    qb = q[cu_q[b]:cu_q[b + 1]].reshape(T, H, D).transpose(0, 1)
    kb = k[cu_k[b]:cu_k[b] + S].reshape(S, G, D).transpose(0, 1)
    vb = v[cu_k[b]:cu_k[b] + S].reshape(S, G, D).transpose(0, 1)
    kb = kb.repeat_interleave(H // G, dim=0)
    vb = vb.repeat_interleave(H // G, dim=0)
    qpos = torch.arange(T) + (S - T)          # bottom-right
    kpos = torch.arange(S)
    qb, kb = rope(qb, qpos), rope(kb, kpos)
    x = qb @ kb.transpose(-1, -2) / D ** 0.5
    dist = (qpos[:, None] - kpos[None, :]).abs().double()
    x = x - slopes[:, None, None] * dist
    masked = kpos[None, :] > qpos[:, None]    # causal
    x = x.masked_fill(masked, float("-inf"))
    w = torch.softmax(x, dim=-1)
    w = torch.where(torch.isnan(w), torch.zeros_like(w), w)
    outs.append((w @ vb).transpose(0, 1).reshape(T, H * D))
out = torch.cat(outs)
out.backward(do)


def dump(name, value):
    with open(name, "w") as f:
        f.write(json.dumps(value) + "\n")


dump("q.json", q.detach().tolist())
dump("k.json", k.detach().tolist())
dump("v.json", v.detach().tolist())
dump("do.json", do.tolist())
dump("want_output.json", out.detach().tolist())
dump("want_grad_q.json", q.grad.tolist())
dump("want_grad_k.json", k.grad.tolist())
dump("want_grad_v.json", v.grad.tolist())
print("cu_seqlens_q", ",".join(map(str, cu_q)))
print("cu_seqlens_k", ",".join(map(str, cu_k)))
print("seqused_k", ",".join(map(str, used)))
