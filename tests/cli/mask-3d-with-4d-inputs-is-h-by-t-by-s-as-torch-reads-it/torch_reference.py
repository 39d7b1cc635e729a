#!/usr/bin/python3
"""torch_reference.py - the inputs of this case and PyTorch's outputs for
them, in float64.  Run it here to make them again:

    /usr/bin/python3 torch_reference.py

(Debian's python3-torch 1.13 and python3-numpy made the files in the
tree.)  Attention is written out as tensor operations, so that PyTorch's
own broadcasting lines a mask or bias up with the scores B x H x T x S:
a 3-D mask is H x T x S there, as in NumPy and in
scaled_dot_product_attention's attn_mask.

Set "h" has B = 2 batches of H = 3 heads (T = 3 queries, S = 4 keys,
d = 2): its 3-D mask and bias (3 x T x S) can only be per head.  Set "bh"
has B = H = 2, where a 3-D array 2 x T x S could be either; its 4-D masks
say which: 2 x 1 x T x S one per batch, 1 x 2 x T x S one per head.
"""
import math

import numpy as np
import torch

rng = np.random.default_rng(18)


def attention(q, k, v, mask=None, bias=None):
    s = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
    if bias is not None:
        s = s + bias
    if mask is not None:
        s = s.masked_fill(~mask.bool(), float("-inf"))
    return torch.softmax(s, dim=-1) @ v


def save(name, a):
    np.save(name, np.asarray(a, dtype=np.float64))


def inputs(prefix, B, H, T, S, D):
    qkv = [rng.standard_normal(shape)
           for shape in ((B, H, T, D), (B, H, S, D), (B, H, S, D))]
    for n, a in zip("qkv", qkv):
        save(prefix + n + ".npy", a)
    return [torch.from_numpy(a) for a in qkv]


def keep_mask(shape):
    """0/1 with every query keeping key 1, so no row is all masked."""
    m = (rng.random(shape) > 0.4).astype(np.float64)
    m[..., 0] = 1
    return m


q, k, v = inputs("h_", 2, 3, 3, 4, 2)
mask = keep_mask((3, 3, 4))
bias = rng.standard_normal((3, 3, 4))
save("h_mask.npy", mask)
save("h_bias.npy", bias)
save("h_out_mask.npy", attention(q, k, v, mask=torch.from_numpy(mask)))
save("h_out_bias.npy", attention(q, k, v, bias=torch.from_numpy(bias)))
# A first dim of B (2) that is not H (3): a data error; as B x 1 x T x S
# it is one block per batch.
per_batch = keep_mask((2, 3, 4))
save("h_mask_b.npy", per_batch)
save("h_mask_b1.npy", per_batch[:, None])
save("h_out_mask_b1.npy",
     attention(q, k, v, mask=torch.from_numpy(per_batch[:, None])))

q, k, v = inputs("bh_", 2, 2, 3, 4, 2)
mask = keep_mask((2, 3, 4))
save("bh_mask.npy", mask)
save("bh_mask_1h.npy", mask[None])
save("bh_mask_b1.npy", mask[:, None])
save("bh_out_1h.npy", attention(q, k, v, mask=torch.from_numpy(mask)))
save("bh_out_b1.npy",
     attention(q, k, v, mask=torch.from_numpy(mask[:, None])))
