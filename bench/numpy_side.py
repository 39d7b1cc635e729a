#!/usr/bin/env python3
"""numpy_side.py - what bench.py asks of NumPy besides the script itself,
each in a process of its own so that NumPy's BLAS threads never share a
process with a run being timed:

  numpy_side.py blas               the BLAS NumPy runs on, its threads and
                                   the best SIMD its own loops take
  numpy_side.py avx512             the AVX-512 targets NumPy's loops may
                                   take on this CPU, for
                                   NPY_DISABLE_CPU_FEATURES
  numpy_side.py compare A B        max |A - B| / max |B|, as one number
  numpy_side.py dgemm N RUNS       GFLOP/s of an N x N x N matmul (median)
  numpy_side.py compute RUNS N...  GFLOP/s of attn_numpy.attention alone,
                                   T = S = N, d = 64, inputs in memory
                                   (rates to six significant digits: a
                                   small or slow one never prints as 0)
  numpy_side.py grads Q K V DO OUT the .npz a kernel under test would
                                   write for --check (out, softmax_lse,
                                   dq, dk, dv): the naive formula and its
                                   gradients in float64, from .npy files
                                   of B x H x n x d (bhsd)
"""
import ctypes
import os
import statistics
import sys
import time

import numpy as np

sys.dont_write_bytecode = True     # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from attn_numpy import attention, load  # noqa: E402


def blas():
    """The BLAS library mapped into this process: for OpenBLAS its
    version, the kernels it picked for this CPU and its thread count."""
    np.ones((2, 2)) @ np.ones((2, 2))
    with open('/proc/self/maps') as f:
        libs = {line.split()[-1] for line in f
                if 'blas' in line.rsplit('/', 1)[-1].lower()}
    for lib in sorted(libs):
        try:
            so = ctypes.CDLL(lib)
            so.openblas_get_config.restype = ctypes.c_char_p
            so.openblas_get_corename.restype = ctypes.c_char_p
            return '%s (%s kernels), %d threads' % (
                ' '.join(so.openblas_get_config().decode().split()[:2]),
                so.openblas_get_corename().decode(),
                so.openblas_get_num_threads())
        except (OSError, AttributeError):
            continue
    return ', '.join(sorted(libs)) or 'unknown'


def simd():
    """NumPy's loops (exp, max, sum) pick the best of the targets NumPy
    was built with that the CPU has and NPY_DISABLE_CPU_FEATURES leaves:
    the last in __cpu_dispatch__ that is on, and the ones that are AVX-512
    (to turn off).  NumPy 2 keeps them in numpy._core."""
    try:
        from numpy._core import _multiarray_umath as umath
    except ImportError:
        from numpy.core import _multiarray_umath as umath
    features = getattr(umath, '__cpu_features__', {})
    on = [f for f in getattr(umath, '__cpu_dispatch__', [])
          if features.get(f)]
    return on[-1] if on else 'baseline', [f for f in on if 'AVX512' in f]


def timed(f, runs):
    t = []
    for _ in range(runs):
        t0 = time.perf_counter()
        f()
        t.append(time.perf_counter() - t0)
    return statistics.median(t)


def grads(paths, out):
    """Attention and the gradients of sum(dO * output), by the naive
    formula: what --check compares attn's stages with."""
    q, k, v, d_out = (np.load(p) for p in paths)
    scale = 1.0 / np.sqrt(q.shape[-1])
    s = q @ k.swapaxes(-1, -2) * scale
    m = s.max(-1, keepdims=True)
    e = np.exp(s - m)
    total = e.sum(-1, keepdims=True)
    p = e / total
    o = p @ v
    delta = (d_out * o).sum(-1, keepdims=True)
    ds = p * (d_out @ v.swapaxes(-1, -2) - delta) * scale
    np.savez(out, out=o, softmax_lse=(m + np.log(total))[..., 0],
             dq=ds @ k, dk=ds.swapaxes(-1, -2) @ q,
             dv=p.swapaxes(-1, -2) @ d_out)


def main(argv):
    if argv[1] == 'blas':
        print('%s; NumPy\'s loops: %s' % (blas(), simd()[0]))
    elif argv[1] == 'avx512':
        print(' '.join(simd()[1]))
    elif argv[1] == 'compare':
        a, b = load(argv[2]), load(argv[3])
        if a.shape != b.shape:
            print('shapes differ: %s and %s' % (a.shape, b.shape))
            return 1
        print('%.3g' % (np.max(np.abs(a - b)) / np.max(np.abs(b))))
    elif argv[1] == 'dgemm':
        n, runs = int(argv[2]), int(argv[3])
        rng = np.random.default_rng(1)
        a, b = rng.standard_normal((n, n)), rng.standard_normal((n, n))
        print('%.6g' % (2.0 * n ** 3 / timed(lambda: a @ b, runs) * 1e-9))
    elif argv[1] == 'compute':
        runs = int(argv[2])
        rng = np.random.default_rng(1)
        for n in map(int, argv[3:]):
            q, k, v = (rng.standard_normal((n, 64)) for _ in range(3))
            t = timed(lambda: attention(q, k, v), runs)
            print('%d %.6g' % (n, 4.0 * n * n * 64 / t * 1e-9))
    elif argv[1] == 'grads' and len(argv) == 7:
        grads(argv[2:6], argv[6])
    else:
        print(__doc__, file=sys.stderr)
        return 64
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv))
