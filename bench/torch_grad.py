#!/usr/bin/env python3
"""torch_grad.py Q K V DO OUT - the PyTorch peer of `make bench`'s
backward rows: the naive formula softmax(Q K^T / sqrt(d_k)) V in
float64 with PyTorch's autograd, from .npy files of B x H x n x d (bhsd),
the gradients of sum(dO * output) with respect to Q, K and V written to
OUT (numpy.savez: dq, dk, dv), as a kernel engineer would write the
oracle.  Torch runs on as many threads as the process has CPUs, as attn
does.

  torch_grad.py compare ATTN_CSV OUT   max |a - b| / max |b| of attn's
                                       grad_q, grad_k, grad_v (one CSV,
                                       blocks in that order) against OUT
"""
import os
import sys

import numpy as np


def peer(paths, out):
    import torch
    torch.set_num_threads(len(os.sched_getaffinity(0)))
    q, k, v, d_out = (torch.from_numpy(np.load(p)) for p in paths)
    for t in (q, k, v):
        t.requires_grad_(True)
    s = (q @ k.transpose(-2, -1)) / np.sqrt(q.shape[-1])
    o = torch.softmax(s, dim=-1) @ v
    o.backward(d_out)
    np.savez(out, dq=q.grad.numpy(), dk=k.grad.numpy(), dv=v.grad.numpy())


def compare(attn_csv, out):
    a = np.loadtxt(attn_csv, delimiter=',', comments='#', ndmin=2)
    g = np.load(out)
    d = a.shape[1]
    b = np.concatenate([g[n].reshape(-1, d) for n in ('dq', 'dk', 'dv')])
    if a.shape != b.shape:
        print('shapes differ: %s and %s' % (a.shape, b.shape))
        return 1
    print('%.3g' % (np.max(np.abs(a - b)) / np.max(np.abs(b))))
    return 0


if __name__ == '__main__':
    if len(sys.argv) == 4 and sys.argv[1] == 'compare':
        sys.exit(compare(sys.argv[2], sys.argv[3]))
    if len(sys.argv) != 6:
        print(__doc__, file=sys.stderr)
        sys.exit(64)
    peer(sys.argv[1:5], sys.argv[5])
