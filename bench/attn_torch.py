#!/usr/bin/env python3
"""attn_torch.py Q K V OUT - the PyTorch peer of attn_numpy.py, as a user
of PyTorch would write attention in float64 with the explicit formula,
softmax(Q K^T / sqrt(d_k)) V (not scaled_dot_product_attention, whose
CPU kernels differ by release): .npy in and out, through NumPy, on a
thread per CPU this process may use, as attn and OpenBLAS take them
(Debian's PyTorch may start with one).  The threads are set before any
work, and `attn_torch.py threads` prints the version and that count."""
import math
import os
import sys

import numpy as np
import torch


def attention(q, k, v):
    s = (q / math.sqrt(q.shape[1])) @ k.T      # T x S
    return torch.softmax(s, dim=-1) @ v


torch.set_num_threads(len(os.sched_getaffinity(0)))

if __name__ == '__main__' and sys.argv[1:] == ['threads']:
    print(torch.__version__, torch.get_num_threads())
elif __name__ == '__main__':
    q, k, v = (torch.from_numpy(np.load(p)).to(torch.float64)
               for p in sys.argv[1:4])
    np.save(sys.argv[4], attention(q, k, v).numpy())
