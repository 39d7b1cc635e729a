#!/usr/bin/env python3
"""torch_grad.py Q K V DO OUT - the PyTorch peer of `make bench`'s
backward rows: the naive formula softmax(Q K^T / sqrt(d_k)) V in
float64 with PyTorch's autograd, from .npy files of B x H x n x d (bhsd),
the gradients of sum(dO * output) with respect to Q, K and V written to
OUT (numpy.savez: dq, dk, dv), as a kernel engineer would write the
oracle.  Torch runs on as many threads as the process has CPUs, as attn
does.

  torch_grad.py compare ATTN_NPZ OUT   max |a - b| / max |b| of attn's
                                       grad_q, grad_k, grad_v (one .npz,
                                       attn's -f npz) against OUT's dq,
                                       dk, dv
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


def compare(attn_npz, out):
    with np.load(attn_npz) as z, np.load(out) as g:
        pairs = [(z[a], g[b]) for a, b in (('grad_q', 'dq'),
                                           ('grad_k', 'dk'),
                                           ('grad_v', 'dv'))]
    for a, b in pairs:
        if a.shape != b.shape:
            print('shapes differ: %s and %s' % (a.shape, b.shape))
            return 1
    err = max(np.max(np.abs(a - b)) for a, b in pairs)
    print('%.3g' % (err / max(np.max(np.abs(b)) for _, b in pairs)))
    return 0


if __name__ == '__main__':
    if len(sys.argv) == 4 and sys.argv[1] == 'compare':
        sys.exit(compare(sys.argv[2], sys.argv[3]))
    if len(sys.argv) != 6:
        print(__doc__, file=sys.stderr)
        sys.exit(64)
    peer(sys.argv[1:5], sys.argv[5])
