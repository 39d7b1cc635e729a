#!/usr/bin/python3
# mha.py - write layer.json, xq.csv and xkv.csv: a torch.nn.MultiheadAttention
# (embed_dim 4, 2 heads, biases, batch_first) as attn reads it, and print
# what torch computes, for the man page's example and its test.
#
# nn.MultiheadAttention keeps W_Q, W_K and W_V stacked in in_proj_weight
# (3E x E, each out x in, as nn.Linear does) and the output projection
# in out_proj; attn wants each W as x @ W, so the layer holds their
# transposes:
#
#     W_Q = in_proj_weight[:E].T      b_Q = in_proj_bias[:E]
#     W_K = in_proj_weight[E:2E].T    b_K = in_proj_bias[E:2E]
#     W_V = in_proj_weight[2E:].T     b_V = in_proj_bias[2E:]
#     W_O = out_proj.weight.T         b_O = out_proj.bias
#
# and attn --proj layer.json --heads 2 -s projected xq.csv xkv.csv
# prints mha(xq, xkv, xkv)'s attn_output.  Run with Debian's
# python3-torch (1.13 here):
#     cd data/examples/mha && /usr/bin/python3 mha.py
import json

import torch

torch.set_default_dtype(torch.float64)
E, H = 4, 2
torch.manual_seed(7)
mha = torch.nn.MultiheadAttention(E, H, bias=True, batch_first=True)
with torch.no_grad():
    mha.in_proj_bias.uniform_(-0.5, 0.5)
    mha.out_proj.bias.uniform_(-0.5, 0.5)
mha.eval()
# two query tokens, three key tokens, rounded to 2 decimals for reading
xq = torch.randn(1, 2, E).mul(100).round().div(100)
xkv = torch.randn(1, 3, E).mul(100).round().div(100)


def rows(t):
    return [[float(x) for x in r] for r in t.tolist()]


w, b = mha.in_proj_weight.detach(), mha.in_proj_bias.detach()
layer = {
    "W_Q": rows(w[:E].T), "W_K": rows(w[E:2 * E].T), "W_V": rows(w[2 * E:].T),
    "W_O": rows(mha.out_proj.weight.detach().T),
    "b_Q": b[:E].tolist(), "b_K": b[E:2 * E].tolist(),
    "b_V": b[2 * E:].tolist(), "b_O": mha.out_proj.bias.detach().tolist(),
}
with open("layer.json", "w") as f:
    f.write("{\n" + ",\n".join('  "%s": %s' % (k, json.dumps(v))
                               for k, v in layer.items()) + "\n}\n")
for name, x in (("xq.csv", xq[0]), ("xkv.csv", xkv[0])):
    with open(name, "w") as f:
        for r in x.tolist():
            f.write(",".join("%g" % v for v in r) + "\n")
with torch.no_grad():
    out, wts = mha(xq, xkv, xkv, average_attn_weights=False)
torch.set_printoptions(precision=4)
print(out)
print(wts)
