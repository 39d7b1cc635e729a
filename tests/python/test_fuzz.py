"""Bad input from Python gets what attn gives: an attn.Error with attn's
one line, never a crash, a hang or another exception.  Seeded random
shapes, dtypes, strides, non-arrays and convention values; make check
runs it again on the library built with ASan and UBSan."""
import numpy
import pytest

import attn

DTYPES = [numpy.float64, numpy.float32, numpy.float16, numpy.int32,
          numpy.int8, numpy.bool_, numpy.complex128, numpy.uint64,
          ">f8", "<U3", object]
ODD = [None, "abc", 3, 2.5, {}, [], [[]], [1, [2, 3]], b"\x93NUMPY",
       float("nan"), [[float("inf")]], numpy.empty((0, 4)),
       numpy.empty((2, 0)), numpy.zeros((1, 1, 1, 1, 1))]


def random_array(r):
    ndim = int(r.integers(0, 6))
    shape = tuple(int(r.integers(0, 4)) for _ in range(ndim))
    dtype = DTYPES[int(r.integers(len(DTYPES)))]
    a = numpy.asarray(r.standard_normal(shape) *
                      10 ** float(r.integers(-3, 40)))
    try:
        a = a.astype(dtype)
    except (TypeError, ValueError):
        a = numpy.array(a.tolist(), dtype=object) if a.ndim else a
    if a.ndim >= 2 and r.random() < 0.5:
        a = a.swapaxes(0, -1)
    if a.ndim >= 1 and a.shape[0] > 1 and r.random() < 0.3:
        a = a[::2]
    return a


def call(*args, **kw):
    """attention or check: a result, or attn.Error with attn's line."""
    try:
        attn.attention(*args, **kw)
    except attn.Error as e:
        line = str(e)
        assert line.startswith("attn: ") and "\n" not in line, line
        assert e.status in (64, 65, 66, 71), (e.status, line)


@pytest.mark.parametrize("seed", range(40))
def test_random_operands(seed):
    r = numpy.random.default_rng(seed)
    for _ in range(6):
        q, k, v = (random_array(r) for _ in range(3))
        if r.random() < 0.3:
            k = q
            v = q
        call(q, k, v, layout=str(r.choice(["bhsd", "bshd"])) if
             r.random() < 0.5 else None)


@pytest.mark.parametrize("odd", ODD, ids=[repr(x)[:20] for x in ODD])
def test_non_arrays(odd):
    good = numpy.ones((3, 2))
    call(odd, good, good)
    call(good, odd, good)
    call(good, good, odd)
    call(good, good, good, mask=odd)
    call(good, good, good, bias=odd)
    call(good, good, good, cu_seqlens_q=odd)


@pytest.mark.parametrize("key", sorted(attn.conventions()))
def test_every_convention_with_junk(key):
    """Each keyword of the table given values it may not take."""
    good = numpy.ones((1, 2, 3, 4))
    for value in ("junk", -1, 1e300, float("nan"), "", (1, 2, 3),
                  numpy.ones((2, 2)), True, "-s"):
        try:
            call(good, good, good, **{key: value})
        except attn.UsageError:
            pass


def test_memory_limit_before_touching():
    """A run past max_memory is refused whole, before it computes."""
    q = numpy.ones((1, 1, 2048, 8))
    with pytest.raises(attn.MemoryLimitError):
        attn.attention(q, q, q, layout="bhsd", stages="weights",
                       max_memory="1M")
    with pytest.raises(attn.UsageError, match="ATTN_MAX_MEMORY"):
        attn.attention(q, q, q, layout="bhsd", max_memory="lots")
