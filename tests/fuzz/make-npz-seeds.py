#!/usr/bin/python3
# make-npz-seeds.py - (re)write the seed corpus of fuzz_npz in
# tests/fuzz/corpus/fuzz_npz/: archives numpy.savez and
# numpy.savez_compressed write, with members of every kind the reader
# meets (each dtype and byte order, 1- to 4-D, Fortran order, what
# --check and --proj read by name), archives zipfile writes otherwise
# (bzip2 and LZMA members, data descriptors, ZIP64 fields, directories,
# members that are no .npy, duplicate names, a comment), damaged ones
# (a CRC, a size, a truncation), tests/bad's .npz files, and members for
# attn's own writer.  Run from the top of the tree with an interpreter
# that has NumPy (/usr/bin/python3 on Debian, package python3-numpy).
#
# A seed is one selector byte (fuzz_npz.c: bits 0-1 the flags, 0 none,
# 1 finite, 2 bool, 3 both; bit 2 members for attn's writer rather than an
# archive, bit 3 with ZIP64's fields) and the rest.
import glob
import io
import os
import warnings
import zipfile

import numpy as np

out = 'tests/fuzz/corpus/fuzz_npz'
os.makedirs(out, exist_ok=True)
SEP = b'\n%%\n'
# fuzz_npz.c's member_names, by index
NAMES = ['out', 'softmax_lse', 'dq', 'dk', 'dv', 'weights', 'output', 'lse',
         'W_Q', 'W_K', 'W_V', 'W_O', 'b_Q', 'b_O', 'sub/dir', 'x.npy']


def seed(name, sel, data):
    assert len(data) < 4096, name
    with open(os.path.join(out, name), 'wb') as f:
        f.write(bytes([sel]) + data)


def npy(a):
    b = io.BytesIO()
    np.save(b, a)
    return b.getvalue()


def savez(compressed=False, **arrays):
    b = io.BytesIO()
    (np.savez_compressed if compressed else np.savez)(b, **arrays)
    return b.getvalue()


def zipped(members, compression=zipfile.ZIP_STORED, stream=False,
           zip64=False, comment=b''):
    """members: (name, bytes) pairs, written by zipfile; stream writes
    through an object that cannot seek (data descriptors)."""
    b = io.BytesIO()

    class Unseekable(io.RawIOBase):
        def writable(self):
            return True

        def write(self, d):
            return b.write(d)

    with zipfile.ZipFile(Unseekable() if stream else b, 'w',
                         compression) as z:
        for name, data in members:
            if name.endswith('/'):
                z.writestr(zipfile.ZipInfo(name), b'')
            else:
                # dated as numpy's are, so that a run writes the same
                # bytes
                zi = zipfile.ZipInfo(name, (1980, 1, 1, 0, 0, 0))
                zi.compress_type = compression
                with z.open(zi, 'w', force_zip64=zip64) as f:
                    f.write(data)
        z.comment = comment
    return b.getvalue()


m = (np.arange(6, dtype=np.float64).reshape(2, 3) - 2) / 3
# members of each dtype, byte order and rank
seed('f8-2d', 1, savez(a=m))
for dt in ('<f4', '<f2', '>f8', '>f4', '>f2'):
    tag = ('be-' if dt[0] == '>' else 'le-') + dt[1:]
    seed(tag, 0, savez(a=m.astype(dt)))
seed('ranks-1-to-4', 0, savez(a=np.array([1.5, -2.0]),
                              b=np.arange(4.0).reshape(2, 2),
                              c=np.arange(8, dtype='<f4').reshape(2, 2, 2),
                              d=np.arange(16, dtype='<f2').reshape(2, 2, 2,
                                                                  2)))
seed('bool-int-mask', 2, savez(m=np.array([[True, False]]),
                               i=np.array([[0, 1]], dtype=np.int64)))
seed('specials', 0, savez(a=np.array([np.nan, np.inf, -np.inf, -0.0,
                                      5e-324])))
seed('specials-finite', 1, savez(a=np.array([1.0, np.nan])))
seed('fortran', 0, savez(a=np.asfortranarray(m)))
seed('complex-member', 0, savez(a=np.array([1 + 2j])))
seed('scalar-member', 0, savez(a=np.array(1.0)))
seed('empty-member', 0, savez(a=np.zeros((0, 2))))
seed('five-d-member', 0, savez(a=np.zeros((1, 1, 1, 1, 2))))
seed('deflated', 0, savez(True, a=m, b=np.ones((3, 3), dtype='<f4')))
seed('deflated-zeros', 0, savez(True, a=np.zeros((40, 40))))
# what --check reads: stages and their aliases, and names it does not know
seed('check-stages', 0, savez(out=m, softmax_lse=np.zeros(2),
                              dq=m, dk=m, dv=m))
seed('check-aliases', 0, savez(output=m, lse=np.zeros((1, 2)),
                               weights=np.eye(2), attn_weights=np.eye(2)))
# what --proj reads
w = np.eye(2)
seed('layer', 1, savez(W_Q=w, W_K=w, W_V=w))
seed('layer-full', 1, savez(W_Q=w, W_K=w, W_V=w, W_O=w, b_Q=np.zeros(2),
                            b_K=np.zeros((1, 2)), b_V=np.zeros((2, 1)),
                            b_O=np.zeros(2)))
seed('layer-missing-wv', 1, savez(W_Q=w, W_K=w))
seed('layer-unknown-key', 1, savez(W_Q=w, W_K=w, W_V=w, w_q=w))
seed('layer-bo-without-wo', 1, savez(W_Q=w, W_K=w, W_V=w, b_O=np.zeros(2)))
seed('layer-nan', 1, savez(W_Q=w, W_K=w, W_V=np.array([[np.nan, 0],
                                                        [0, 1]])))
seed('layer-1d-w', 1, savez(W_Q=np.ones(2), W_K=w, W_V=w))
# other zips: compressions, data descriptors, ZIP64, directories
a = npy(m)
for c, tag in ((zipfile.ZIP_BZIP2, 'bzip2'), (zipfile.ZIP_LZMA, 'lzma')):
    seed('member-' + tag, 0, zipped([('a.npy', a)], c))
seed('data-descriptor', 0, zipped([('a.npy', a), ('b.npy', a)],
                                  zipfile.ZIP_DEFLATED, stream=True))
seed('zip64-fields', 0, zipped([('a.npy', a)], zip64=True))
seed('directory-member', 0, zipped([('d/', b''), ('d/a.npy', a)]))
seed('not-npy-member', 0, zipped([('a.npy', a), ('README.txt', b'hi')]))
seed('npy-named-member', 0, zipped([('.npy', a)]))
with warnings.catch_warnings():
    warnings.simplefilter('ignore')
    seed('duplicate-names', 0, zipped([('a.npy', a), ('a.npy', a)]))
seed('utf8-name', 0, zipped([('\u00e9\u202e.npy', a)]))
seed('comment', 0, zipped([('a.npy', a)], comment=b'a comment'))
seed('no-members', 0, zipped([]))
seed('member-is-zip', 0, zipped([('a.npy', savez(a=m))]))
# damage
good = savez(a=m)
i = good.index(b'\x93NUMPY')
bad = bytearray(good)
bad[i + 130] ^= 0xFF    # a number, past the 128-byte header
seed('crc-mismatch', 0, bytes(bad))
bad = bytearray(good)
bad[22:26] = (len(a) + 64).to_bytes(4, 'little')   # the local size
seed('size-too-large', 0, bytes(bad))
seed('truncated-member', 0, good[:i + 40])
seed('truncated-central', 0, good[:-10])
seed('end-record-only', 0, good[-22:])
defl = savez(True, a=np.zeros((8, 8)))
j = len(defl) // 3
seed('deflate-damaged', 0, defl[:j] + bytes([defl[j] ^ 0x55]) +
     defl[j + 1:])
for f in sorted(glob.glob('tests/bad/npz-*.npz')):
    with open(f, 'rb') as fh:
        seed('bad-' + os.path.basename(f)[4:-4], 0, fh.read())
# members for attn's writer (bit 2): a name byte, then the .npy
seed('written-check', 4, SEP.join([bytes([0]) + npy(m),
                                   bytes([1]) + npy(np.zeros(2)),
                                   bytes([2]) + npy(m.astype('<f4'))]))
seed('written-layer', 5, SEP.join([bytes([NAMES.index(n)]) + npy(w)
                                   for n in ('W_Q', 'W_K', 'W_V')]))
seed('written-zip64', 12, SEP.join([bytes([5]) + npy(np.eye(3)),
                                    bytes([6]) + npy(m)]))
seed('written-bad-member', 4, SEP.join([bytes([0]) + npy(m),
                                        bytes([2]) + npy(m)[:50]]))
seed('written-subdir-name', 4, bytes([14]) + npy(m))
seed('written-mask', 6, bytes([0]) + npy(np.array([[True, False]])))
