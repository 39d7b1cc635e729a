"""paged.py - the inputs of tests/kernel/paged.sh, and its PyTorch oracle.

  paged.py make DIR    writes a directory DIR/CASE for each case below:
                       Q and dO, the K and V caches, the tables that name
                       their pages, the same keys gathered here into
                       contiguous K and V (k.npy, v.npy), and two lines of
                       attn's options, paged.args (the caches and their
                       tables) and contig.args (the gathered keys).
  paged.py torch CASE  holds attn's paged run (CASE/paged.npz: output,
                       grad_q, grad_k, grad_v) to PyTorch: each batch's
                       keys gathered from the caches by a loop over its
                       pages, then scaled_dot_product_attention in float64
                       with the mask the case's options make, and autograd
                       for the gradients (with respect to the gathered K
                       and V, the shape attn gives them).

Every page that no table row names, and every row of a named page past
the keys in use (or before a batch's leftpad), holds nan: a run that
read one would print nan, or refuse the caches.
"""
import os
import sys

import numpy as np

RNG = np.random.default_rng(20261207)

# name: B (sequences), T per sequence, H, G, d, page size, pages,
#       form (fa or flashinfer), kv layout (nhd or hnd), Q layout,
#       keys in use per sequence (leftpad included), leftpad, packed Q,
#       masking options
CASES = [
    dict(name="fa-gqa-causal", B=2, T=[3, 3], H=4, G=2, d=8, ps=4, P=7,
         form="fa", kv="nhd", layout="bshd", used=[7, 10], leftpad=None,
         packed=False, opts="--causal --align bottom-right",
         tdtype=np.int32),
    dict(name="fa-window-leftpad", B=2, T=[2, 2], H=2, G=2, d=4, ps=3, P=9,
         form="fa", kv="nhd", layout="bshd", used=[8, 11], leftpad=[2, 4],
         packed=False, opts="--window 2,1 --align bottom-right",
         tdtype=np.int64),
    dict(name="flashinfer-hnd-varlen", B=3, T=[2, 3, 1], H=2, G=1, d=4,
         ps=4, P=8, form="flashinfer", kv="hnd", layout="bshd",
         used=[6, 4, 9], leftpad=None, packed=True,
         opts="--causal --align bottom-right", tdtype=np.int32),
    dict(name="flashinfer-nhd-mqa", B=2, T=[4, 4], H=3, G=1, d=5, ps=2,
         P=9, form="flashinfer", kv="nhd", layout="bhsd", used=[5, 3],
         leftpad=None, packed=False, opts="", tdtype=np.int64),
    dict(name="fa-varlen-leftpad-window", B=2, T=[3, 1], H=2, G=2, d=4,
         ps=4, P=6, form="fa", kv="nhd", layout="bshd", used=[9, 6],
         leftpad=[1, 3], packed=True,
         opts="--causal --window 3,0 --align bottom-right",
         tdtype=np.int32),
]


def csv(xs):
    return ",".join(str(x) for x in xs)


def make(case, out):
    B, H, G, d, ps, P = (case[k] for k in ("B", "H", "G", "d", "ps", "P"))
    T, used = case["T"], case["used"]
    lp = case["leftpad"] or [0] * B
    npages = [-(-u // ps) for u in used]
    most = max(npages)
    # each sequence's pages, distinct, in a shuffled order; the pages
    # left over are named by no one
    perm = list(RNG.permutation(P))
    pages = []
    for n in npages:
        pages.append([int(x) for x in perm[:n]])
        perm = perm[n:]
    assert perm, "a case leaves a page unnamed"
    kc = np.full((P, ps, G, d), np.nan)
    vc = np.full((P, ps, G, d), np.nan)
    S = most * ps
    k = np.zeros((B, S, G, d))
    v = np.zeros((B, S, G, d))
    for b in range(B):
        for i in range(lp[b], used[b]):
            pg, r = pages[b][i // ps], i % ps
            kc[pg, r] = RNG.standard_normal((G, d))
            vc[pg, r] = RNG.standard_normal((G, d))
            k[b, i - lp[b]] = kc[pg, r]
            v[b, i - lp[b]] = vc[pg, r]
    os.makedirs(out, exist_ok=True)
    np.save(f"{out}/kc.npy", kc if case["kv"] == "nhd" else
            kc.transpose(0, 2, 1, 3).copy())
    np.save(f"{out}/vc.npy", vc if case["kv"] == "nhd" else
            vc.transpose(0, 2, 1, 3).copy())
    if case["layout"] == "bhsd":
        np.save(f"{out}/k.npy", k.transpose(0, 2, 1, 3).copy())
        np.save(f"{out}/v.npy", v.transpose(0, 2, 1, 3).copy())
    else:
        np.save(f"{out}/k.npy", k)
        np.save(f"{out}/v.npy", v)
    if case["packed"]:
        total = sum(T)
        q = RNG.standard_normal((total, H, d))
        do = RNG.standard_normal((total, H, d))
    else:
        q = RNG.standard_normal((B, T[0], H, d))
        do = RNG.standard_normal((B, T[0], H, d))
        if case["layout"] == "bhsd":
            q = q.transpose(0, 2, 1, 3).copy()
            do = do.transpose(0, 2, 1, 3).copy()
    np.save(f"{out}/q.npy", q)
    np.save(f"{out}/do.npy", do)
    common = f"--layout {case['layout']} {case['opts']} --grad do.npy"
    if case["packed"]:
        cu = [0]
        for t in T:
            cu.append(cu[-1] + t)
        common += f" --cu-seqlens-q {csv(cu)}"
    kept = [u - p for u, p in zip(used, lp)]
    if case["form"] == "fa":
        # entries past the pages in use may hold anything (-1 here)
        table = np.full((B, most + 1), -1, dtype=case["tdtype"])
        for b in range(B):
            table[b, :len(pages[b])] = pages[b]
        # a table of most + 1 pages holds more keys than the gathered
        # S of contig.args: the contiguous run gets the same width
        S_fa = (most + 1) * ps
        pad = np.zeros((B, S_fa - S, G, d))
        if case["layout"] == "bhsd":
            raise ValueError("fa cases are bshd")
        np.save(f"{out}/k.npy", np.concatenate([k, pad], axis=1))
        np.save(f"{out}/v.npy", np.concatenate([v, pad], axis=1))
        np.save(f"{out}/table.npy", table)
        paged = f"--block-table table.npy --seqused-k {csv(used)}"
        if case["leftpad"]:
            paged += f" --key-leftpad {csv(lp)}"
    else:
        indptr = [0]
        for n in npages:
            indptr.append(indptr[-1] + n)
        indices = [x for p in pages for x in p]
        last = [u - (n - 1) * ps for u, n in zip(used, npages)]
        np.save(f"{out}/indptr.npy", np.array(indptr, dtype=case["tdtype"]))
        np.save(f"{out}/indices.npy", np.array(indices,
                                               dtype=case["tdtype"]))
        np.save(f"{out}/last.npy", np.array(last, dtype=case["tdtype"]))
        paged = ("--kv-indptr indptr.npy --kv-indices indices.npy "
                 f"--kv-last-page-len last.npy --kv-layout {case['kv']}")
        if case["leftpad"]:
            paged += f" --key-leftpad {csv(lp)}"
    contig = f"--seqused-k {csv(kept)}"
    if case["packed"]:
        # packed keys, total x G x D, a sequence every S rows
        kk = np.load(f"{out}/k.npy")
        width = kk.shape[1]
        np.save(f"{out}/k.npy", kk.reshape(B * width, G, d))
        vv = np.load(f"{out}/v.npy")
        np.save(f"{out}/v.npy", vv.reshape(B * width, G, d))
        contig += f" --cu-seqlens-k {csv(range(0, B * width + 1, width))}"
    with open(f"{out}/paged.args", "w") as f:
        f.write(f"{common} {paged}\n")
    with open(f"{out}/contig.args", "w") as f:
        f.write(f"{common} {contig}\n")


def keep(case, Tb, used, S):
    """The mask of one sequence: T_b x S, keys [0, used) in use, causal
    and window aligned bottom-right as the case's options say."""
    import torch
    i = torch.arange(Tb).unsqueeze(1)
    j = torch.arange(S).unsqueeze(0)
    off = used - Tb
    m = j < used
    if "--causal" in case["opts"]:
        m = m & (j <= i + off)
    if "--window" in case["opts"]:
        L, R = (int(x) for x in
                case["opts"].split("--window ")[1].split()[0].split(","))
        m = m & (j >= i + off - L) & (j <= i + off + R)
    return m


def sdpa(q, k, v, keep_mask):
    """PyTorch's scaled_dot_product_attention with a boolean mask (True
    attends), or where this PyTorch predates it (before 2.0), the
    formula its documentation gives: softmax(q k^T / sqrt(d) + mask) v,
    the mask -inf where False."""
    import torch
    f = getattr(torch.nn.functional, "scaled_dot_product_attention", None)
    if f is not None:
        return f(q, k, v, attn_mask=keep_mask)
    bias = torch.zeros(keep_mask.shape, dtype=q.dtype)
    bias = bias.masked_fill(~keep_mask, float("-inf"))
    w = torch.softmax(q @ k.transpose(-2, -1) / q.shape[-1] ** 0.5 + bias,
                      dim=-1)
    return w @ v


def oracle(case, out):
    import torch
    B, H, G, d, ps = (case[k] for k in ("B", "H", "G", "d", "ps"))
    T = case["T"]
    lp = case["leftpad"] or [0] * B
    kc = np.load(f"{out}/kc.npy")
    vc = np.load(f"{out}/vc.npy")
    if case["kv"] == "hnd":
        kc = kc.transpose(0, 2, 1, 3)
        vc = vc.transpose(0, 2, 1, 3)
    if case["form"] == "fa":
        table = np.load(f"{out}/table.npy")
        rows = [list(table[b]) for b in range(B)]
        used = case["used"]
    else:
        indptr = np.load(f"{out}/indptr.npy")
        indices = np.load(f"{out}/indices.npy")
        last = np.load(f"{out}/last.npy")
        rows = [list(indices[indptr[b]:indptr[b + 1]]) for b in range(B)]
        used = [(len(r) - 1) * ps + int(x) for r, x in zip(rows, last)]
    S = max(len(r) for r in rows) * ps
    got = np.load(f"{out}/paged.npz")
    q = torch.tensor(np.load(f"{out}/q.npy"))
    do = torch.tensor(np.load(f"{out}/do.npy"))
    if case["layout"] == "bhsd":
        q, do = q.transpose(1, 2), do.transpose(1, 2)
    if case["packed"]:
        cu = np.cumsum([0] + T)
        qs = [q[cu[b]:cu[b + 1]] for b in range(B)]
        dos = [do[cu[b]:cu[b + 1]] for b in range(B)]
    else:
        qs = [q[b] for b in range(B)]
        dos = [do[b] for b in range(B)]
    worst = 0.0
    outs, gq, gk, gv = [], [], [], []
    for b in range(B):
        # the gather: this batch's keys in use, page by page
        k = torch.zeros(S, G, d, dtype=torch.float64)
        v = torch.zeros(S, G, d, dtype=torch.float64)
        for i in range(lp[b], used[b]):
            pg = int(rows[b][i // ps])
            k[i - lp[b]] = torch.tensor(kc[pg, i % ps])
            v[i - lp[b]] = torch.tensor(vc[pg, i % ps])
        qb = qs[b].clone().requires_grad_(True)
        k.requires_grad_(True)
        v.requires_grad_(True)
        rep = H // G
        kh = k.transpose(0, 1).repeat_interleave(rep, 0)
        vh = v.transpose(0, 1).repeat_interleave(rep, 0)
        m = keep(case, qb.shape[0], used[b] - lp[b], S)
        o = sdpa(qb.transpose(0, 1), kh, vh, m).transpose(0, 1)
        (o * dos[b]).sum().backward()
        outs.append(o.detach())
        gq.append(qb.grad)
        gk.append(k.grad)
        gv.append(v.grad)

    def stack(xs):
        x = torch.cat(xs, 0).unsqueeze(0) if case["packed"] else \
            torch.stack(xs, 0)
        return x.transpose(1, 2) if case["layout"] == "bhsd" else x

    want = {"output": stack(outs), "grad_q": stack(gq)}
    kv = lambda xs: torch.cat(xs, 0).unsqueeze(0) if case["packed"] else \
        torch.stack(xs, 0)
    want["grad_k"] = kv(gk)
    want["grad_v"] = kv(gv)
    if case["layout"] == "bhsd":
        want["grad_k"] = want["grad_k"].transpose(1, 2)
        want["grad_v"] = want["grad_v"].transpose(1, 2)
    for name, w in want.items():
        a = got[name]
        if a.shape != tuple(w.shape):
            print(f"{case['name']}: {name} is {a.shape}, PyTorch's "
                  f"{tuple(w.shape)}")
            return 1
        w = w.numpy()
        if not np.all(np.isfinite(a)):
            print(f"{case['name']}: {name} holds a number not finite")
            return 1
        worst = max(worst, float(np.max(np.abs(a - w), initial=0.0)))
    if worst > 1e-12:
        print(f"{case['name']}: attn and PyTorch differ by {worst:g}")
        return 1
    return 0


def main():
    if sys.argv[1] == "make":
        for case in CASES:
            make(case, f"{sys.argv[2]}/{case['name']}")
            print(case["name"])
        return 0
    out = sys.argv[2]
    name = os.path.basename(out.rstrip("/"))
    return oracle(next(c for c in CASES if c["name"] == name), out)


if __name__ == "__main__":
    sys.exit(main())
