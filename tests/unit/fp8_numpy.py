#!/usr/bin/python3
# fp8_numpy.py - write fp8_numpy.h: the two OCP FP8 formats decoded code by
# code and numbers rounded to them, for check_fp8.c to hold attn_round
# and attn_round_floats against.
#
#   e4m3 (OCP FP8 E4M3, "fn"): bias 7, 3 fraction bits, no infinity, the
#        codes S.1111.111 nan; largest 448; rounding saturates: what lies
#        past 448, and +-inf, is +-448 (as a conversion with satfinite
#        makes it);
#   e5m2 (OCP FP8 E5M2): bias 15, 2 fraction bits, IEEE-like: S.11111.00
#        is inf, S.11111.xx (xx != 0) nan; largest 57344; past the tie
#        61440 a number rounds to inf.
#
# The rounding here is not attn's scaling: every finite code is decoded
# from its bits with NumPy, and a number rounds to the nearest of them
# by search, a tie to the code whose last bit is 0 (ties to even), with
# the overflow rule of the format above.  The cases: each of the 256
# codes (a round trip), each midpoint between neighbouring codes and
# the floats either side of it, numbers past the largest and below the
# smallest subnormal, and random float32 values over the format's range.
#
# Run with /usr/bin/python3 (Debian's python3-numpy, 1.24 here):
#     /usr/bin/python3 tests/unit/fp8_numpy.py > tests/unit/fp8_numpy.h
import numpy as np

FORMATS = {
    # name: (exponent bits, fraction bits, bias, saturating)
    "e4m3": (4, 3, 7, True),
    "e5m2": (5, 2, 15, False),
}


def decode(code, ebits, mbits, bias, sat):
    """The value of an 8-bit code, nan for the nan codes."""
    s = (code >> 7) & 1
    e = (code >> mbits) & ((1 << ebits) - 1)
    m = code & ((1 << mbits) - 1)
    sign = -1.0 if s else 1.0
    top = (1 << ebits) - 1
    if sat and e == top and m == (1 << mbits) - 1:
        return np.nan
    if not sat and e == top:
        return sign * np.inf if m == 0 else np.nan
    if e == 0:
        return sign * np.ldexp(np.float64(m), 1 - bias - mbits)
    return sign * np.ldexp(np.float64((1 << mbits) | m), e - bias - mbits)


def table(name):
    ebits, mbits, bias, sat = FORMATS[name]
    vals = np.array([decode(c, ebits, mbits, bias, sat) for c in range(256)])
    return vals


def round_to(x, vals, sat):
    """x rounded to the nearest finite code, a tie to the even code."""
    x = np.float64(x)
    fin = np.array([c for c in range(256) if np.isfinite(vals[c])])
    largest = np.max(vals[fin])
    if np.isnan(x):
        return np.nan
    if np.isinf(x):
        return np.copysign(largest, x) if sat else x
    if abs(x) > largest:
        if sat:
            return np.copysign(largest, x)
        # IEEE: past the largest, a number rounds as if the exponent went
        # on; at or past largest + half its spacing it is inf
        step = largest - np.max(vals[fin][vals[fin] < largest])
        if abs(x) >= largest + step / 2:
            return np.copysign(np.inf, x)
        return np.copysign(largest, x)
    d = np.abs(vals[fin] - x)
    best = np.min(d)
    near = fin[d == best]
    if len(near) > 1:
        near = near[(near & 1) == 0]
    r = vals[near[0]]
    if r == 0:
        # +0 and -0 are equally near a tiny x: it keeps its sign
        return np.copysign(0.0, x)
    return r


def cases(name, rng):
    vals = table(name)
    fin = np.sort(np.unique(vals[np.isfinite(vals)]))
    out = [v for v in vals if not np.isnan(v)]
    for a, b in zip(fin[:-1], fin[1:]):
        mid = np.float32((a + b) / 2)
        out += [mid, np.nextafter(mid, np.float32(-np.inf)),
                np.nextafter(mid, np.float32(np.inf))]
    big = fin[-1]
    out += [big * 1.01, big * 1.06, big * 1.07, big * 1.1, big * 4,
            np.float32(3e38), np.inf, -np.inf]
    out += [-x for x in out[-8:-2]]
    tiny = fin[fin > 0][0]
    out += [tiny / 2, tiny / 3, tiny * 0.51, -tiny / 2, -tiny * 0.49, 1e-30]
    e = rng.uniform(np.log2(tiny) - 2, np.log2(big) + 1, 2000)
    s = rng.choice([-1.0, 1.0], 2000)
    out += list(np.float32(s * np.exp2(e)))
    sat = FORMATS[name][3]
    return [(np.float32(x), round_to(x, vals, sat)) for x in out]


def c_double(x):
    if np.isnan(x):
        return "NAN"
    if np.isinf(x):
        return "INFINITY" if x > 0 else "-INFINITY"
    return float(x).hex()


def main():
    rng = np.random.default_rng(808)
    print("/* fp8_numpy.h - written by fp8_numpy.py (numpy %s); do not "
          "edit. */" % np.__version__)
    for name in FORMATS:
        vals = table(name)
        print()
        print("/* the value of each code of %s, in code order */" % name)
        print("static const double %s_codes[256] = {" % name)
        for v in vals:
            print("\t%s," % c_double(v))
        print("};")
        print()
        print("/* a number (a float32) and what it rounds to in %s */" % name)
        print("static const struct fp8_case %s_cases[] = {" % name)
        for x, r in cases(name, rng):
            print("\t{ %s, %s }," % (c_double(x), c_double(r)))
        print("};")


main()
