#!/usr/bin/python3
# grad_bias_torch.py - write this test's inputs and what PyTorch's
# autograd makes of them: the gradient of a bias broadcast as NumPy and
# PyTorch broadcast it (autograd sums the gradient over the axes the
# bias was broadcast along, and returns it in the bias's own shape) and
# of the sinks (gpt-oss's: one logit per head that joins each row's
# softmax without a value), for the loss sum(dO * output).
#
# B = 2 batches of H = 4 query heads sharing G = 2 KV heads, T = 3
# queries, S = 5 keys, d = 2, the default scale 1/sqrt(d), sinks, and a
# bias of each shape people give one in:
#
#   b_s        (S,)           a row of keys, 1-D
#   b_t1       T x 1          a logit per query
#   b_ts       T x S          one block for every batch and head
#   b_b11s     B x 1 x 1 x S  key padding per batch
#   b_1hts     1 x H x T x S  a block per head, shared by the batches
#   b_h1s      H x 1 x S      3-D: with 4-D inputs, H x T x S (NumPy)
#   b_bht1     B x H x T x 1  per batch, head and query
#   b_11       1 x 1          one number
#
# Q, K, V and dO are 4-D (B x H x S x D, PyTorch's layout); then the same
# numbers in bshd (B x S x H x D, FlashAttention's) and 3-D (B x T x H*d,
# heads side by side, --heads 4 --kv-heads 2) with a 3-D bias per batch
# (B x 1 x S), and causal masking aligned bottom-right with b_1hts.
# Each want_NAME.json is a JSON object of arrays keyed as --check reads
# them (FlashAttention's out and dq, attn's grad_bias and grad_sinks).
# Everything in float64, inputs with two decimals so that the files hold
# them exactly.  The test compares attn with these recorded numbers
# only; run once with Debian's python3-torch (1.13 here), in this
# directory:
#     /usr/bin/python3 grad_bias_torch.py
import json
import math

import torch

torch.set_default_dtype(torch.float64)
torch.manual_seed(2105)
B, H, G, T, S, D = 2, 4, 2, 3, 5, 2


def rounded(*shape):
    return torch.randn(*shape).mul(100).round().div(100)


q = rounded(B, H, T, D)
k = rounded(B, G, S, D)
v = rounded(B, G, S, D)
do = rounded(B, H, T, D)
sinks = rounded(H)
biases = {
    "s": rounded(S),
    "t1": rounded(T, 1),
    "ts": rounded(T, S),
    "b11s": rounded(B, 1, 1, S),
    "1hts": rounded(1, H, T, S),
    "h1s": rounded(H, 1, S),
    "bht1": rounded(B, H, T, 1),
    "11": rounded(1, 1),
}


def save(name, t):
    with open(name, "w") as f:
        json.dump(t.tolist(), f)
        f.write("\n")


def run(bias, causal=False):
    """out, dq, the bias's gradient and the sinks' for bias."""
    qq = q.clone().requires_grad_()
    b = bias.clone().requires_grad_()
    s = sinks.clone().requires_grad_()
    kk = k.repeat_interleave(H // G, dim=1)
    vv = v.repeat_interleave(H // G, dim=1)
    logits = qq @ kk.transpose(-1, -2) / math.sqrt(D) + b
    if causal:      # bottom-right: query i sees keys j <= i + S - T
        keep = torch.ones(T, S).tril(S - T).bool()
        logits = logits.masked_fill(~keep, float("-inf"))
    ext = torch.cat([logits, s.view(1, H, 1, 1).expand(B, H, T, 1)], -1)
    p = torch.softmax(ext, dim=-1)[..., :S]
    out = p @ vv
    (out * do).sum().backward()
    return out.detach(), qq.grad, b.grad, s.grad


def want(name, out, dq, gb, gs):
    with open("want_%s.json" % name, "w") as f:
        json.dump({"out": out.tolist(), "dq": dq.tolist(),
                   "grad_bias": gb.tolist(), "grad_sinks": gs.tolist()},
                  f)
        f.write("\n")


save("q.json", q)
save("k.json", k)
save("v.json", v)
save("do.json", do)
with open("sinks.txt", "w") as f:
    f.write(" ".join(repr(x) for x in sinks.tolist()) + "\n")
for name, bias in biases.items():
    save("b_%s.json" % name, bias)
    want(name, *run(bias))

# bshd: the same numbers, B x S x H x D; dq likewise
out, dq, gb, gs = run(biases["b11s"])
for n, t in (("q", q), ("k", k), ("v", v), ("do", do)):
    save("%s_bshd.json" % n, t.transpose(1, 2))
want("bshd", out.transpose(1, 2), dq.transpose(1, 2), gb, gs)

# 3-D, heads side by side (B x T x H*d), a bias per batch B x 1 x S
b3 = rounded(B, 1, S)
save("b_b1s.json", b3)
for n, t in (("q", q), ("k", k), ("v", v), ("do", do)):
    save("%s_3d.json" % n, t.transpose(1, 2).reshape(B, t.shape[2], -1))
out, dq, gb, gs = run(b3.view(B, 1, 1, S))
want("3d", out.transpose(1, 2).reshape(B, T, -1),
     dq.transpose(1, 2).reshape(B, T, -1), gb.view(B, 1, S), gs)

# causal, bottom-right, with the shared per-head block
want("causal", *run(biases["1hts"], causal=True))
