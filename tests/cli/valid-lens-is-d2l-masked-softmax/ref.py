# d2l's masked_softmax (section 11.3), in plain Python: valid_lens 1-D is
# repeated for each query row, 2-D is one per row; keys past a row's
# length get -1e6 before the softmax.
import json
import math


def masked_softmax(x, valid_lens):
    out = []
    for b, block in enumerate(x):
        rows = []
        for i, row in enumerate(block):
            n = valid_lens[b] if isinstance(valid_lens[b], int) \
                else valid_lens[b][i]
            z = [v if j < n else -1e6 for j, v in enumerate(row)]
            m = max(z)
            e = [math.exp(v - m) for v in z]
            rows.append([v / sum(e) for v in e])
        out.append(rows)
    return out


x = json.load(open("x.json"))
for name, lens in (("w1.json", [2, 3]), ("w2.json", [[1, 3], [2, 4]]),
                   ("w0.json", [[0, 3], [2, 4]])):
    got = json.load(open(name))
    want = masked_softmax(x, lens)
    worst = max(abs(g - w) for gb, wb in zip(got, want)
                for gr, wr in zip(gb, wb) for g, w in zip(gr, wr))
    print("valid_lens %s: %s" % (lens, "agree to 1e-15" if worst <= 1e-15
                                  else "differ by %g" % worst))
