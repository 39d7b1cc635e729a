#!/usr/bin/python3
# varlen.py - the packed batch of README's "Checking your kernel": three
# sequences of 5, 0 and 7 queries over 6, 2 and 7 keys, packed as
# FlashAttention's flash_attn_varlen_func takes them (total x H x D),
# and a float32 kernel that runs each sequence causal, aligned
# bottom-right, as that function does.  Run in this directory.
import numpy as np

rng = np.random.default_rng(0)
H, D = 2, 8
seq_q, seq_k = [5, 0, 7], [6, 2, 7]
cu_q = np.concatenate(([0], np.cumsum(seq_q))).astype(np.int32)
cu_k = np.concatenate(([0], np.cumsum(seq_k))).astype(np.int32)
q = rng.standard_normal((cu_q[-1], H, D)).astype(np.float32)
k, v = (rng.standard_normal((cu_k[-1], H, D)).astype(np.float32)
        for _ in range(2))
for name, x in (("q", q), ("k", k), ("v", v)):
    np.save(name + ".npy", x)
np.savetxt("cu_seqlens_q.txt", cu_q, fmt="%d")
np.savetxt("cu_seqlens_k.txt", cu_k, fmt="%d")

# The kernel under test: each sequence on its own, causal bottom-right.
out = np.zeros((cu_q[-1], H, D), np.float32)
scale = np.float32(1 / np.sqrt(D))
for b in range(len(seq_q)):
    qs, ks, vs = (x[c[b]:c[b + 1]].transpose(1, 0, 2)
                  for x, c in ((q, cu_q), (k, cu_k), (v, cu_k)))
    T, S = qs.shape[1], ks.shape[1]
    s = qs @ ks.transpose(0, 2, 1) * scale
    s[:, np.arange(T)[:, None] + S - T < np.arange(S)] = -np.inf
    p = np.exp(s - s.max(axis=-1, keepdims=True))
    p /= p.sum(axis=-1, keepdims=True)
    out[cu_q[b]:cu_q[b + 1]] = (p @ vs).transpose(1, 0, 2)
np.save("out.npy", out)
