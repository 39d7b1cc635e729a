#!/usr/bin/python3
# bias_sinks.py - the README's kernel that learns a bias and sinks: a
# float32 forward and backward pass over q.npy, k.npy, v.npy and do.npy
# (the README's first script wrote them) with a bias per key of each
# batch (B x 1 x 1 x S, as a learned key bias or a padding mask is) and
# one sink per head (gpt-oss's), writing bias.npy, sinks.npy and
# ref-bias.npz: out, dq, and the gradients autograd would return for the
# bias (summed over the heads and queries it is broadcast along, in its
# own shape) and for the sinks.  Run in this directory.
import numpy as np

q, k, v, do = (np.load(n + ".npy") for n in ("q", "k", "v", "do"))
B, H, T, D = q.shape
S = k.shape[2]
rng = np.random.default_rng(2)
bias = rng.standard_normal((B, 1, 1, S)).astype(np.float32)
sinks = rng.standard_normal(H).astype(np.float32)
np.save("bias.npy", bias)
np.save("sinks.npy", sinks)

# The kernel under test: the sink joins each row's softmax, value 0.
scale = np.float32(1 / np.sqrt(D))
sink = sinks[None, :, None, None]
s = q @ k.transpose(0, 1, 3, 2) * scale + bias
m = np.maximum(s.max(axis=-1, keepdims=True), sink)
e = np.exp(s - m)
l = e.sum(axis=-1, keepdims=True) + np.exp(sink - m)
p = e / l
out = p @ v
# Its backward pass: dS, dQ, and the gradients of the bias and sinks.
delta = (do * out).sum(axis=-1, keepdims=True)
ds = p * (do @ v.transpose(0, 1, 3, 2) - delta)
np.savez("ref-bias.npz", out=out, dq=ds @ k * scale,
         grad_bias=ds.sum(axis=(1, 2), keepdims=True),
         grad_sinks=-(np.exp(sink - m) / l * delta).sum(axis=(0, 2, 3)))
