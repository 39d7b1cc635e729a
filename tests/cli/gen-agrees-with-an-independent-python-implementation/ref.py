# xoshiro256** seeded by splitmix64, uniforms as the top 53 bits times
# 2^-53, and Marsaglia's polar method, written again from the published
# algorithms in Python's integers, with the C library's log: attn gen
# must agree to 1e-14 (its own log differs from libm's in the last bits).
import json
import math

M = (1 << 64) - 1


def splitmix(x):
    x = (x + 0x9E3779B97F4A7C15) & M
    z = x
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & M
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & M
    return x, z ^ (z >> 31)


def rotl(x, k):
    return ((x << k) | (x >> (64 - k))) & M


class Xoshiro:
    def __init__(self, seed):
        self.s = []
        for _ in range(4):
            seed, z = splitmix(seed)
            self.s.append(z)

    def next(self):
        s = self.s
        out = (rotl((s[1] * 5) & M, 7) * 9) & M
        t = (s[1] << 17) & M
        s[2] ^= s[0]
        s[3] ^= s[1]
        s[1] ^= s[2]
        s[0] ^= s[3]
        s[2] ^= t
        s[3] = rotl(s[3], 45)
        return out

    def uniform(self):
        return (self.next() >> 11) * 2.0 ** -53


def normals(seed, n):
    r = Xoshiro(seed)
    out = []
    while len(out) < n:
        while True:
            u = 2 * r.uniform() - 1
            v = 2 * r.uniform() - 1
            s = u * u + v * v
            if 0 < s < 1:
                break
        f = math.sqrt(-2 * math.log(s) / s)
        out += [u * f, v * f]
    return out[:n]


def flat(path):
    with open(path) as f:
        return [x for row in json.load(f) for x in row]


got = flat("normal.json")
want = normals(42, len(got))
bad = [i for i, (a, b) in enumerate(zip(got, want))
       if abs(a - b) > 1e-14 * max(1.0, abs(b))]
print("normal: %d numbers, %d differ" % (len(got), len(bad)))
r = Xoshiro(9)
got = flat("uniform.json")
want = [r.uniform() for _ in got]
print("uniform: %d numbers, %d differ" % (len(got), sum(a != b for a, b in zip(got, want))))
