#!/usr/bin/python3
# make-npy-seeds.py - (re)write the seed corpus of fuzz_npy in
# tests/fuzz/corpus/fuzz_npy/ from files numpy writes: every dtype attn
# reads in both byte orders, every header version, 1- to 4-D, the special
# values, and the faults the reader must name (other dtypes, Fortran
# order, truncated and trailing data, bad headers), plus tests/bad's .npy
# files.  Run from the top of the tree with an interpreter that has NumPy
# (/usr/bin/python3 on Debian, package python3-numpy).
#
# A seed is one selector byte (fuzz_npy.c: bits 0-1 the flags, 0 none,
# 1 finite, 2 bool, 3 both; bit 2 the format guessed from "-") and the
# file.
import glob
import io
import os

import numpy as np
from numpy.lib import format as npformat

out = 'tests/fuzz/corpus/fuzz_npy'
os.makedirs(out, exist_ok=True)


def npy(a, version=None):
    b = io.BytesIO()
    if version is None:
        np.save(b, a)
    else:
        npformat.write_array(b, a, version=version)
    return b.getvalue()


def seed(name, sel, data):
    with open(os.path.join(out, name), 'wb') as f:
        f.write(bytes([sel]) + data)


m = (np.arange(12, dtype=np.float64).reshape(3, 4) - 5) / 3
for dt in ('<f8', '<f4', '<f2', '>f8', '>f4', '>f2'):
    tag = ('be-' if dt[0] == '>' else 'le-') + dt[1:]
    seed(tag + '-2d', 1, npy(m.astype(dt)))
for v in (1, 2, 3):
    seed('version-%d' % v, 0, npy(m, (v, 0)))
    seed('version-%d-guessed' % v, 4, npy(m.astype('>f4'), (v, 0)))
seed('1d', 1, npy(np.array([1.5, -2.0, 3.25])))
seed('3d', 1, npy(np.arange(8, dtype='<f4').reshape(2, 2, 2)))
seed('4d', 1, npy(np.arange(16, dtype='<f2').reshape(2, 2, 2, 2)))
seed('specials', 0, npy(np.array([np.nan, np.inf, -np.inf, -0.0,
                                  5e-324, 1.7976931348623157e308])))
seed('specials-f2', 2, npy(np.array([np.nan, np.inf, 6e-8, 65504],
                                    dtype='<f2')))
seed('mask-bool-values', 2, npy(np.array([[1.0, 0.0], [0.0, 1.0]])))
seed('int64', 0, npy(np.arange(4)))
seed('bool', 2, npy(np.array([True, False])))
seed('complex', 0, npy(np.array([1 + 2j])))
seed('structured', 0, npy(np.zeros(2, dtype=[('x', '<f8'), ('y', '<i4')])))
seed('fortran', 0, npy(np.asfortranarray(m)))
seed('scalar', 0, npy(np.array(1.0)))
seed('empty', 0, npy(np.zeros((0, 3))))
seed('five-d', 0, npy(np.zeros((1, 1, 1, 1, 2))))
good = npy(m)
seed('truncated-data', 1, good[:-5])
seed('trailing-data', 1, good + b'\0\0\0')
seed('truncated-header', 0, good[:40])
seed('magic-only', 0, good[:6])
seed('version-9', 0, good[:6] + b'\x09\x00' + good[8:])
seed('header-length-huge', 0, good[:8] + b'\xff\xff' + good[10:])
hdr = b"{'descr': '<f8', 'fortran_order': False, 'shape': (99999999999, " \
      b"99999999999), }"
seed('shape-overflow', 0, good[:8] + len(hdr).to_bytes(2, 'little') + hdr)
hdr = b'{"shape":(2,),"descr":"<f8","fortran_order":False}'
seed('unpadded-double-quotes', 0,
     good[:8] + len(hdr).to_bytes(2, 'little') + hdr + b'\0' * 16)
b = io.BytesIO()
np.savez(b, a=m)
seed('npz', 0, b.getvalue()[:512])
for f in sorted(glob.glob('tests/bad/npy-*.npy')):
    with open(f, 'rb') as fh:
        seed('bad-' + os.path.basename(f)[4:-4], 1, fh.read())
