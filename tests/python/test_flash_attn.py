"""test_flash_attn.py - a kernel's test suite as its authors write one,
shaped like FlashAttention's tests/test_flash_attn.py, with attn as the
oracle: the kernel under test is kernels.py's NumPy FlashAttention-2
(float32, and bfloat16 with float32 accumulators), forward and backward,
over causal x window x MHA/MQA/GQA x softcap x lengths, packed
sequences (varlen) and KV caches (contiguous and paged).

Each case runs the kernel and hands its results to attn.assert_close
with FlashAttention's conventions (like="flash", layout "bshd") and the
emulated baseline of the kernel's precision (emulate=), the verdict
FlashAttention's own tests reach by hand (the error within a factor of
a plain kernel's in the same dtype).  Each planted bug (kernels.BUGS)
fails with the hint attn's --check gives for it; the test asserts the
hint.  One case in FlashAttention's own style calls attn.flash's
flash_attn_func in place of attention_ref.
"""
import numpy as np
import pytest

import attn
import attn.flash
import kernels

# The emulated baseline's factor a kernel's error may reach (attn's
# --factor), over the whole tensor (check_by="tensor"), as
# FlashAttention's tests compare max |out - out_ref| with twice max
# |out_pt - out_ref|; and the absolute tolerance added to it.  The
# float32 kernel rounds more than the plain float32 kernel of the
# baseline (the logits times log2(e) for exp2, the online rescaling, P
# recomputed from the float32 lse in the backward pass) and errs up to
# 3.5 times as much, so fp32 gets 4.  Where a row keeps one key, dQ and
# dK are 0 exactly in the plain kernel, while the recomputed P, 1
# within float32's rounding, leaves float32's rounding of dP (of a few
# units) in dS: fp32 gets atol 1e-6 over a baseline error of 0.
FACTOR = {"fp32": 4.0, "bf16": 2.0}
ATOL = {"fp32": 1e-6, "bf16": None}


def inputs(seed, B, T, S, H, G, D, prec):
    """q, k, v and dout (B x T x H x D, B x S x G x D), float32 holding
    numbers of prec, seeded."""
    f = kernels.rounder(prec)
    rng = np.random.default_rng(seed)
    q = f(rng.standard_normal((B, T, H, D)))
    k = f(rng.standard_normal((B, S, G, D)))
    v = f(rng.standard_normal((B, S, G, D)))
    dout = f(rng.standard_normal((B, T, H, D)))
    return q, k, v, dout


def heads(mha_type):
    """(H, G): query heads and KV heads of FlashAttention's mha_type."""
    return {"mha": (4, 4), "mqa": (4, 1), "gqa": (6, 2)}[mha_type]


def window_of(local, seqlen_q, seqlen_k, seed):
    """FlashAttention's test's window_size: (-1, -1), or two random
    sides within seqlen_k when local."""
    if not local:
        return (-1, -1)
    rng = np.random.default_rng(seed + 1)
    return tuple(int(w) for w in rng.integers(0, seqlen_k, 2))


def conventions(causal, window_size, softcap, prec):
    """attn's keywords for a FlashAttention kernel's run: its
    conventions, its window (both sides given), its softcap, and the
    emulated baseline of its precision."""
    conv = dict(layout="bshd", like="flash", emulate=prec,
                factor=FACTOR[prec], check_by="tensor", atol=ATOL[prec])
    if causal:
        conv["causal"] = True
    if window_size != (-1, -1):
        conv["window"] = window_size
    if softcap:
        conv["softcap"] = softcap
    return conv


def run_dense(q, k, v, dout, causal, window_size, softcap, prec, bug=None):
    """The kernel's forward and backward, named as FlashAttention names
    its results."""
    kw = dict(causal=causal, window_size=window_size, softcap=softcap,
              prec=prec, bug=bug)
    out, lse = kernels.flash_fwd(q, k, v, **kw)
    dq, dk, dv = kernels.flash_bwd(dout, q, k, v, out, lse, **kw)
    return {"out": out, "softmax_lse": lse, "dq": dq, "dk": dk, "dv": dv}


@pytest.mark.parametrize("prec", ["fp32", "bf16"])
@pytest.mark.parametrize("mha_type", ["mha", "mqa", "gqa"])
@pytest.mark.parametrize("softcap", [0.0, 5.0])
@pytest.mark.parametrize("local", [False, True])
@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("d", [32, 59])
@pytest.mark.parametrize("seqlen_q,seqlen_k",
                         [(1, 47), (33, 70), (70, 33), (64, 64)])
def test_flash_attn_output(seqlen_q, seqlen_k, d, causal, local, softcap,
                           mha_type, prec):
    seed = seqlen_q * 1000 + seqlen_k * 10 + d
    H, G = heads(mha_type)
    q, k, v, dout = inputs(seed, 2, seqlen_q, seqlen_k, H, G, d, prec)
    window_size = window_of(local, seqlen_q, seqlen_k, seed)
    got = run_dense(q, k, v, dout, causal, window_size, softcap, prec)
    rows = attn.assert_close(got, q, k, v, grad_out=dout,
                             **conventions(causal, window_size, softcap,
                                           prec))
    assert {r.stage for r in rows} == \
        {"output", "lse", "grad_q", "grad_k", "grad_v"}
    assert all(r.passed for r in rows)


def packed(seed, lens_q, lens_k, H, G, D, prec):
    """q, k, v, dout packed as varlen takes them, and cu_seqlens."""
    q, k, v, dout = inputs(seed, 1, sum(lens_q), sum(lens_k), H, G, D, prec)
    cu = [np.concatenate([[0], np.cumsum(n)]).astype(np.int32)
          for n in (lens_q, lens_k)]
    return q[0], k[0], v[0], dout[0], cu[0], cu[1]


@pytest.mark.parametrize("prec", ["fp32", "bf16"])
@pytest.mark.parametrize("mha_type", ["mha", "gqa"])
@pytest.mark.parametrize("softcap", [0.0, 5.0])
@pytest.mark.parametrize("local", [False, True])
@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("lens_q,lens_k", [((5, 40, 17), (33, 40, 3)),
                                           ((64,), (64,))])
def test_flash_attn_varlen_output(lens_q, lens_k, causal, local, softcap,
                                  mha_type, prec):
    seed = sum(lens_q) * 100 + sum(lens_k)
    H, G = heads(mha_type)
    q, k, v, dout, cu_q, cu_k = packed(seed, lens_q, lens_k, H, G, 32, prec)
    window_size = window_of(local, min(lens_q), min(lens_k), seed)
    kw = dict(causal=causal, window_size=window_size, softcap=softcap,
              prec=prec)
    out, lse = kernels.varlen_fwd(q, k, v, cu_q, cu_k, **kw)
    dq, dk, dv = kernels.varlen_bwd(dout, q, k, v, out, lse, cu_q, cu_k,
                                    **kw)
    got = {"out": out, "softmax_lse": lse, "dq": dq, "dk": dk, "dv": dv}
    rows = attn.assert_close(got, q, k, v, grad_out=dout, cu_seqlens_q=cu_q,
                             cu_seqlens_k=cu_k,
                             **conventions(causal, window_size, softcap,
                                           prec))
    assert len(rows) == 5 and all(r.passed for r in rows)


@pytest.mark.parametrize("prec", ["fp32", "bf16"])
@pytest.mark.parametrize("paged", [False, True])
@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("mha_type", ["mha", "gqa"])
@pytest.mark.parametrize("seqlen_q", [1, 9])
def test_flash_attn_kvcache(seqlen_q, mha_type, causal, paged, prec):
    B, page, pages_per_seq, D = 3, 16, 5, 32
    H, G = heads(mha_type)
    seed = seqlen_q * 10 + H
    q, _, _, _ = inputs(seed, B, seqlen_q, 1, H, G, D, prec)
    rng = np.random.default_rng(seed)
    f = kernels.rounder(prec)
    seqlens = rng.integers(seqlen_q, page * pages_per_seq,
                           B).astype(np.int32)
    if paged:
        # the pages of the batches shuffled through one pool
        k_cache = f(rng.standard_normal((B * pages_per_seq, page, G, D)))
        v_cache = f(rng.standard_normal((B * pages_per_seq, page, G, D)))
        block_table = rng.permutation(B * pages_per_seq).reshape(
            B, pages_per_seq).astype(np.int32)
        extra = dict(block_table=block_table)
    else:
        k_cache = f(rng.standard_normal((B, page * pages_per_seq, G, D)))
        v_cache = f(rng.standard_normal((B, page * pages_per_seq, G, D)))
        block_table = None
        extra = {}
    out, lse = kernels.kvcache_fwd(q, k_cache, v_cache, seqlens,
                                   block_table, causal=causal, prec=prec)
    rows = attn.assert_close({"out": out, "softmax_lse": lse}, q, k_cache,
                             v_cache, seqused_k=seqlens, **extra,
                             **conventions(causal, (-1, -1), 0.0, prec))
    assert len(rows) == 2 and all(r.passed for r in rows)


# A planted bug, the case that shows it and the hint attn gives for it.
# causal_top_left is off by one where seqlen_k = seqlen_q + 1, a decoding
# step after a prefill.
PLANTED = {
    "causal_top_left": (dict(seqlen_q=40, seqlen_k=41, causal=True),
                        "passes with --align top-left"),
    "exp2_scale": (dict(seqlen_q=33, seqlen_k=70, causal=False),
                   "takes exp2 of the scaled logits without the factor "
                   "log2(e)"),
    "gqa_nosum": (dict(seqlen_q=33, seqlen_k=70, causal=True),
                  "per query head, the GQA sum missing?"),
    "lse_base2": (dict(seqlen_q=33, seqlen_k=70, causal=False),
                  "passes with --lse-base 2: the kernel stores lse in "
                  "log2"),
}

# The stages each bug breaks (and only these fail).
BROKEN = {
    "causal_top_left": {"output", "lse", "grad_q", "grad_k", "grad_v"},
    "exp2_scale": {"output", "lse", "grad_q", "grad_k", "grad_v"},
    "gqa_nosum": {"grad_k", "grad_v"},
    "lse_base2": {"lse", "grad_q", "grad_k", "grad_v"},
}


@pytest.mark.parametrize("prec", ["fp32", "bf16"])
@pytest.mark.parametrize("bug", sorted(kernels.BUGS))
def test_planted_bug_fails_with_its_hint(bug, prec):
    case, hint = PLANTED[bug]
    H, G = heads("gqa")
    q, k, v, dout = inputs(7, 2, case["seqlen_q"], case["seqlen_k"], H, G,
                           32, prec)
    got = run_dense(q, k, v, dout, case["causal"], (-1, -1), 0.0, prec,
                    bug=bug)
    conv = conventions(case["causal"], (-1, -1), 0.0, prec)
    with pytest.raises(AssertionError) as raised:
        attn.assert_close(got, q, k, v, grad_out=dout, **conv)
    rows = attn.check(got, q, k, v, grad_out=dout, **conv)
    assert {r.stage for r in rows if not r.passed} == BROKEN[bug]
    assert hint in str(raised.value)
    assert any(r.hint and hint in r.hint for r in rows)


@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("seqlen_q,seqlen_k", [(33, 70), (70, 33)])
def test_flash_attn_output_as_flashattention_tests_it(seqlen_q, seqlen_k,
                                                      causal):
    """FlashAttention's own assertion with attn.flash's flash_attn_func
    in place of attention_ref: the kernel's error within twice that of
    the same computation in the kernel's dtype (upcast=False there,
    emulate="bf16" here)."""
    q, k, v, dout = inputs(3, 2, seqlen_q, seqlen_k, 4, 2, 32, "bf16")
    out, lse = kernels.flash_fwd(q, k, v, causal=causal, prec="bf16")
    out_ref = attn.flash.flash_attn_func(q, k, v, causal=causal)
    out_pt = attn.flash.flash_attn_func(q, k, v, causal=causal,
                                        emulate="bf16")
    assert out_ref.dtype == np.float64 and out_ref.shape == out.shape
    err, err_pt = np.abs(out - out_ref).max(), np.abs(out_pt - out_ref).max()
    assert 0 < err <= 2 * err_pt
    # a bug shows the same way
    bad, _ = kernels.flash_fwd(q, k, v, causal=causal, prec="bf16",
                               bug="exp2_scale")
    assert np.abs(bad - out_ref).max() > 2 * err_pt
