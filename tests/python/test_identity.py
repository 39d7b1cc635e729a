"""One arithmetic: for a matrix of conventions, every stage attn.attention
returns has the bytes of attn's own -f npz of the same run (the program,
files on disk), at one thread and at two."""
import os
import subprocess

import numpy
import pytest

import attn
from conftest import qkv

B, H, G, T, S, D = 2, 4, 2, 6, 7, 8


def arrays():
    r = numpy.random.default_rng(7)
    q = r.standard_normal((B, T, H, D))
    k = r.standard_normal((B, S, H, D))
    v = r.standard_normal((B, S, H, D))
    return q, k, v


def extra(name):
    r = numpy.random.default_rng(11)
    return {
        "mask": r.random((T, S)) < 0.8,
        "bias": r.standard_normal((T, S)),
        "sinks": r.standard_normal(H),
        "alibi_slopes": r.random(H),
        "grad_out": r.standard_normal((B, T, H, D)),
    }[name]


# (id, keywords, stages): arrays named by keyword come from extra()
CASES = [
    ("plain", {}, "output,lse"),
    ("causal", {"causal": True}, "output,lse,weights"),
    ("causal-top-left", {"causal": True, "align": "top-left"}, "all"),
    ("window", {"window": (2, 1)}, "output,lse"),
    ("softcap", {"softcap": 5.0}, "output,lse,scores"),
    ("alibi", {"alibi": True, "causal": True}, "output,lse"),
    ("alibi-slopes", {"alibi_slopes": "array"}, "output,lse"),
    ("sinks", {"sinks": "array"}, "output,lse"),
    ("mask", {"mask": "array"}, "output,lse,weights"),
    ("bias", {"bias": "array", "scale": 0.25}, "output,lse"),
    ("lse-base-2", {"lse_base": "2", "like": "flash"}, "output,lse"),
    ("emulate-bf16", {"emulate": "bf16", "causal": True}, "output,lse"),
    ("backward", {"grad_out": "array", "causal": True},
     "output,lse,grad_q,grad_k,grad_v"),
    ("backward-softcap-window", {"grad_out": "array", "softcap": 3.0,
                                 "window": (3, 0)}, "all"),
]


def cli_words(kw, tmp, files):
    words = []
    for key, value in kw.items():
        opt = "--" + ("grad" if key == "grad_out" else
                      key.replace("_", "-"))
        if value is True:
            words.append(opt)
        elif isinstance(value, str) and value == "array":
            path = os.path.join(tmp, key + ".npy")
            numpy.save(path, files[key])
            words += [opt, path]
        elif isinstance(value, tuple):
            words += [opt, ",".join(str(x) for x in value)]
        else:
            words += [opt, str(value)]
    return words


@pytest.mark.parametrize("kv_heads", [H, G], ids=["mha", "gqa"])
@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_stages_byte_identical(case, kv_heads, tmp_path, attn_bin):
    _, kw, stages = case
    q, k, v = arrays()
    k, v = k[:, :, :kv_heads], v[:, :, :kv_heads]
    files = {n: extra(n) for n, x in kw.items() if x == "array"}
    names = []
    for n, a in (("q", q), ("k", k), ("v", v)):
        names.append(str(tmp_path / (n + ".npy")))
        numpy.save(names[-1], a)
    out = str(tmp_path / "cli.npz")
    words = ["--layout", "bshd", "-s", stages, "-f", "npz", "-o", out]
    p = subprocess.run([attn_bin] + words +
                       cli_words(kw, str(tmp_path), files) + names,
                       capture_output=True)
    assert p.returncode == 0, p.stderr.decode()
    ref = numpy.load(out)
    call = {n: (files[n] if x == "array" else x) for n, x in kw.items()}
    for threads in (1, 2):
        got = attn.attention(q, k, v, layout="bshd", stages=stages,
                             threads=threads, **call)
        assert list(got) == list(ref.files)
        for name in ref.files:
            assert got[name].shape == ref[name].shape, name
            assert got[name].tobytes() == ref[name].tobytes(), \
                (name, threads)


def test_varlen_byte_identical(tmp_path, attn_bin):
    r = numpy.random.default_rng(3)
    cu = numpy.array([0, 3, 8, 10], numpy.int32)
    q = r.standard_normal((10, H, D))
    k = r.standard_normal((10, G, D))
    v = r.standard_normal((10, G, D))
    names = []
    for n, a in (("q", q), ("k", k), ("v", v)):
        names.append(str(tmp_path / (n + ".npy")))
        numpy.save(names[-1], a)
    out = str(tmp_path / "cli.npz")
    p = subprocess.run([attn_bin, "--cu-seqlens-q", "0,3,8,10",
                        "--cu-seqlens-k", "0,3,8,10", "--causal", "-s",
                        "output,lse", "-f", "npz", "-o", out] + names,
                       capture_output=True)
    assert p.returncode == 0, p.stderr.decode()
    ref = numpy.load(out)
    for cu_k in (cu, [0, 3, 8, 10], "0,3,8,10"):
        got = attn.attention(q, k, v, cu_seqlens_q=cu, cu_seqlens_k=cu_k,
                             causal=True)
        for name in ref.files:
            assert got[name].tobytes() == ref[name].tobytes(), name
