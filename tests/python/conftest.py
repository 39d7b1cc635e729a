"""What every test of tests/python/ shares: the module of the source tree
(python/, before any installed one), the library that make built
(ATTN_LIBRARY, which run.sh sets) and attn, the program, for running the
same case both ways (ATTN)."""
import os
import sys

import numpy
import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "python"))


@pytest.fixture
def attn_bin():
    """The attn program the suite runs beside the module."""
    return os.environ.get("ATTN", os.path.join(HERE, "..", "..", "build",
                                               "attn"))


def qkv(shape=(1, 2, 6, 4), seed=0, dtype=numpy.float64):
    """Seeded Q, K and V of shape (NumPy's generator)."""
    r = numpy.random.default_rng(seed)
    return tuple(r.standard_normal(shape).astype(dtype) for _ in range(3))
