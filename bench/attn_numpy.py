#!/usr/bin/env python3
"""attn_numpy.py Q K V OUT - the NumPy script `make bench` measures attn
against: softmax(Q K^T / sqrt(d_k)) V, read from and written to CSV, JSON
or .npy (told by each file's extension), as a user would write it in
NumPy, with care for memory: one T x S matrix, updated in place."""
import json
import sys

import numpy as np


def load(path):
    if path.endswith('.npy'):
        return np.load(path)
    if path.endswith('.json'):
        with open(path) as f:
            return np.array(json.load(f), dtype=np.float64)
    return np.loadtxt(path, delimiter=',', ndmin=2)


def save(path, a):
    if path.endswith('.npy'):
        np.save(path, a)
    elif path.endswith('.json'):
        with open(path, 'w') as f:
            json.dump(a.tolist(), f)
    else:
        np.savetxt(path, a, delimiter=',', fmt='%.17g')


def attention(q, k, v):
    s = (q / np.sqrt(q.shape[1])) @ k.T        # T x S
    s -= s.max(axis=1, keepdims=True)
    np.exp(s, out=s)
    s /= s.sum(axis=1, keepdims=True)
    return s @ v


if __name__ == '__main__':
    q, k, v = (load(p) for p in sys.argv[1:4])
    save(sys.argv[4], attention(q, k, v))
