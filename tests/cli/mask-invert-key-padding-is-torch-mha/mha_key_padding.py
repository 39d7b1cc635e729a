#!/usr/bin/python3
# mha_key_padding.py - write this test's inputs and what PyTorch computes
# on them: torch.nn.MultiheadAttention(embed_dim 4, 2 heads, biases,
# batch_first, float64) called as mha(xq, xkv, xkv, key_padding_mask=pad)
# (True = ignore that key), which attn reproduces with the same mask,
# --mask-invert, broadcast over the queries:
#
#   batch 1 alone, pad1.csv 1 x S:    want1_projected.json, want1_weights.json
#   both batches, pad.json B x 1 x S: want_projected.json, want_weights.json
#
# The layer holds the module's weights as attn reads them (each W as
# x @ W, so the transposes of what nn.Linear stores; see
# data/examples/mha/mha.py); projected is attn_output, weights is
# attn_output_weights with average_attn_weights=False (B x H x T x S).
# The test compares attn with these recorded numbers only; run once with
# Debian's python3-torch (1.13 here), in this directory:
#     /usr/bin/python3 mha_key_padding.py
import json

import torch

torch.set_default_dtype(torch.float64)
E, H, B, T, S = 4, 2, 2, 3, 4
torch.manual_seed(2023)
mha = torch.nn.MultiheadAttention(E, H, bias=True, batch_first=True)
with torch.no_grad():
    mha.in_proj_bias.uniform_(-0.5, 0.5)
    mha.out_proj.bias.uniform_(-0.5, 0.5)
mha.eval()
# inputs rounded to 2 decimals, so that the files hold them exactly
xq = torch.randn(B, T, E).mul(100).round().div(100)
xkv = torch.randn(B, S, E).mul(100).round().div(100)
# batch 1 may not attend its last key, batch 2 its first two
pad = torch.tensor([[False, False, False, True],
                    [True, True, False, False]])


def dump(name, value):
    with open(name, "w") as f:
        f.write(json.dumps(value) + "\n")


w, b = mha.in_proj_weight.detach(), mha.in_proj_bias.detach()
layer = {
    "W_Q": w[:E].T.tolist(), "W_K": w[E:2 * E].T.tolist(),
    "W_V": w[2 * E:].T.tolist(), "W_O": mha.out_proj.weight.detach().T.tolist(),
    "b_Q": b[:E].tolist(), "b_K": b[E:2 * E].tolist(),
    "b_V": b[2 * E:].tolist(), "b_O": mha.out_proj.bias.detach().tolist(),
}
with open("layer.json", "w") as f:
    f.write("{\n" + ",\n".join('  "%s": %s' % (k, json.dumps(v))
                               for k, v in layer.items()) + "\n}\n")
dump("xq.json", xq.tolist())
dump("xkv.json", xkv.tolist())
dump("pad.json", pad.unsqueeze(1).tolist())        # B x 1 x S
for name, x in (("xq1.csv", xq[0]), ("xkv1.csv", xkv[0])):
    with open(name, "w") as f:
        for r in x.tolist():
            f.write(",".join(repr(v) for v in r) + "\n")
with open("pad1.csv", "w") as f:                    # 1 x S
    f.write(",".join(str(int(v)) for v in pad[0].tolist()) + "\n")
with torch.no_grad():
    for suffix, q, kv, mask in (("1", xq[:1], xkv[:1], pad[:1]),
                                ("", xq, xkv, pad)):
        out, wts = mha(q, kv, kv, key_padding_mask=mask, need_weights=True,
                       average_attn_weights=False)
        dump("want%s_projected.json" % suffix,
             (out[0] if suffix else out).tolist())
        dump("want%s_weights.json" % suffix,
             (wts[0] if suffix else wts).tolist())
