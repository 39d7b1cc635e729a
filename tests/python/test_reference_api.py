"""test_reference_api.py - attn.flash and attn.torch take their kernels'
arguments and return what those return, in their conventions: held to
attention written out in float64 NumPy (and PyTorch's autograd of it for
the gradients), shapes, dtypes, the conventions each fixes, and errors.
"""
import inspect

import numpy as np
import pytest

import attn
import attn.flash
import attn.torch
from attn.flash import (flash_attn_func, flash_attn_varlen_func,
                        flash_attn_with_kvcache)

torch = pytest.importorskip("torch")


def formula(q, k, v, offset=None, window=None, softcap=0.0, scale=None):
    """softmax(q k^T * scale) v and lse in float64, q B x T x H x D, k
    and v B x S x G x D; key j kept when j <= i + offset (offset None: no
    causal mask) and within window (left, right) of i + S - T; a row
    with no key: output 0, lse +inf (FlashAttention's)."""
    q, k, v = (np.asarray(x, dtype=np.float64) for x in (q, k, v))
    B, T, H, D = q.shape
    S, G = k.shape[1], k.shape[2]
    k = np.repeat(k, H // G, axis=2)
    v = np.repeat(v, H // G, axis=2)
    s = np.einsum("bthd,bshd->bhts", q, k) * (scale or D ** -0.5)
    if softcap:
        s = softcap * np.tanh(s / softcap)
    i = np.arange(T)[:, None]
    j = np.arange(S)[None, :]
    keep = np.ones((T, S), dtype=bool)
    if offset is not None:
        keep &= j <= i + offset
    if window is not None:
        keep &= (j >= i + S - T - window[0]) & (j <= i + S - T + window[1])
    s = np.where(keep, s, -np.inf)
    m = s.max(axis=-1, keepdims=True)
    m = np.where(np.isfinite(m), m, 0)
    e = np.exp(s - m)
    total = e.sum(axis=-1, keepdims=True)
    w = e / np.where(total == 0, 1, total)
    lse = np.where(total[..., 0] == 0, np.inf,
                   m[..., 0] + np.log(np.where(total == 0, 1, total))[..., 0])
    return np.einsum("bhts,bshd->bthd", w, v), lse


def operands(B=2, T=9, S=13, H=4, G=2, D=8, seed=0):
    rng = np.random.default_rng(seed)
    return (rng.standard_normal((B, T, H, D)),
            rng.standard_normal((B, S, G, D)),
            rng.standard_normal((B, S, G, D)))


@pytest.mark.parametrize("T,S", [(9, 13), (13, 9)])
def test_flash_attn_func_is_causal_bottom_right(T, S):
    q, k, v = operands(T=T, S=S)
    out, lse, probs = flash_attn_func(q, k, v, causal=True,
                                      return_attn_probs=True)
    want, want_lse = formula(q, k, v, offset=S - T)
    assert out.shape == (2, T, 4, 8) and out.dtype == np.float64
    assert lse.shape == (2, 4, T) and probs.shape == (2, 4, T, S)
    np.testing.assert_allclose(out, want, rtol=1e-12, atol=1e-13)
    # rows with no key (T > S): output 0, softmax_lse +inf
    np.testing.assert_allclose(lse, want_lse, rtol=1e-12)
    np.testing.assert_allclose(probs.sum(axis=-1),
                               np.isfinite(want_lse).astype(float))


def test_flash_attn_func_window_softcap_scale_gqa():
    q, k, v = operands(H=6, G=2)
    out = flash_attn_func(q, k, v, window_size=(2, -1), softcap=2.5,
                          softmax_scale=0.3)
    want, _ = formula(q, k, v, window=(2, 10 ** 6), softcap=2.5, scale=0.3)
    np.testing.assert_allclose(out, want, rtol=1e-12, atol=1e-13)


def test_flash_attn_varlen_func_is_each_sequence_on_its_own():
    q, k, v = operands(B=1, T=12, S=15)
    cu_q, cu_k = np.array([0, 5, 12]), np.array([0, 9, 15])
    out, lse, _ = flash_attn_varlen_func(q[0], k[0], v[0], cu_q, cu_k, 7, 9,
                                         causal=True,
                                         return_attn_probs=True)
    assert out.shape == (12, 4, 8) and lse.shape == (4, 12)
    for b in range(2):
        qs, ks = slice(cu_q[b], cu_q[b + 1]), slice(cu_k[b], cu_k[b + 1])
        o, l = flash_attn_func(q[:, qs], k[:, ks], v[:, ks], causal=True,
                               return_attn_probs=True)[:2]
        np.testing.assert_array_equal(out[qs], o[0])
        np.testing.assert_array_equal(lse[:, qs], l[0])


def test_flash_attn_varlen_func_refuses_a_short_max_seqlen():
    q, k, v = operands(B=1, T=12, S=15)
    with pytest.raises(attn.UsageError, match="max_seqlen_q is 6"):
        flash_attn_varlen_func(q[0], k[0], v[0], np.array([0, 5, 12]),
                               np.array([0, 9, 15]), 6, 9)


def test_flash_attn_with_kvcache_appends_into_a_copy():
    q, k_cache, v_cache = operands(T=2, S=16)
    _, k_new, v_new = operands(T=2, S=2, seed=1)
    seqlens = np.array([3, 11])
    kept = k_cache.copy()
    out, lse = flash_attn_with_kvcache(q, k_cache, v_cache, k_new, v_new,
                                       cache_seqlens=seqlens, causal=True,
                                       return_softmax_lse=True)
    np.testing.assert_array_equal(k_cache, kept)
    for b in range(2):
        n = seqlens[b]
        kb = np.concatenate([k_cache[b, :n], k_new[b]])[None]
        vb = np.concatenate([v_cache[b, :n], v_new[b]])[None]
        want, want_lse = formula(q[b:b + 1], kb, vb, offset=n + 2 - 2)
        np.testing.assert_allclose(out[b:b + 1], want, rtol=1e-12,
                                   atol=1e-13)
        np.testing.assert_allclose(lse[b:b + 1], want_lse, rtol=1e-12)


def test_flash_attn_with_kvcache_cache_batch_idx_picks_the_rows():
    q, k_cache, v_cache = operands(B=2, T=1, S=16)
    idx = np.array([1, 0])
    out = flash_attn_with_kvcache(q, k_cache, v_cache, cache_seqlens=5,
                                  cache_batch_idx=idx)
    want, _ = formula(q, k_cache[idx, :5], v_cache[idx, :5])
    np.testing.assert_allclose(out, want, rtol=1e-12, atol=1e-13)


def test_dropout_without_its_mask_is_a_usage_error():
    q, k, v = operands()
    with pytest.raises(attn.UsageError, match="dropout_mask"):
        flash_attn_func(q, k, v, dropout_p=0.1)
    with pytest.raises(attn.UsageError, match="dropout_mask"):
        attn.torch.scaled_dot_product_attention(
            q.transpose(0, 2, 1, 3), q.transpose(0, 2, 1, 3),
            q.transpose(0, 2, 1, 3), dropout_p=0.1)


def test_flash_attn_func_gives_tensors_and_attn_gradients_to_autograd():
    q, k, v = (torch.tensor(x, dtype=torch.float32, requires_grad=True)
               for x in operands())
    out = flash_attn_func(q, k, v, causal=True)
    assert isinstance(out, torch.Tensor) and out.dtype == torch.float64
    dout = torch.randn(out.shape, dtype=torch.float64,
                       generator=torch.Generator().manual_seed(0))
    out.backward(dout)
    # the same through PyTorch's autograd of the formula, in float64
    q64, k64, v64 = (x.detach().double().requires_grad_() for x in (q, k, v))
    rep = lambda x: x.repeat_interleave(2, dim=2)      # noqa: E731
    s = torch.einsum("bthd,bshd->bhts", q64, rep(k64)) * 8 ** -0.5
    T, S = s.shape[-2:]
    keep = torch.ones(T, S, dtype=torch.bool).tril(S - T)
    w = torch.softmax(s.masked_fill(~keep, float("-inf")), dim=-1)
    torch.einsum("bhts,bshd->bthd", w, rep(v64)).backward(dout)
    for got, want in ((q, q64), (k, k64), (v, v64)):
        torch.testing.assert_close(got.grad, want.grad.float())


def sdpa_formula(q, k, v, attn_mask=None, is_causal=False, scale=None):
    s = q @ k.transpose(-1, -2) * (scale or q.shape[-1] ** -0.5)
    if is_causal:
        keep = torch.ones(s.shape[-2:], dtype=torch.bool).tril()
        s = s.masked_fill(~keep, float("-inf"))
    if attn_mask is not None:
        s = s.masked_fill(~attn_mask, float("-inf")) \
            if attn_mask.dtype == torch.bool else s + attn_mask
    return torch.softmax(s, dim=-1) @ v


@pytest.mark.parametrize("kw", ["is_causal", "bool", "float", "scale"])
def test_scaled_dot_product_attention_as_pytorch(kw):
    gen = torch.Generator().manual_seed(1)
    q, k, v = (torch.randn(2, 3, n, 8, dtype=torch.float64, generator=gen,
                           requires_grad=True) for n in (9, 13, 13))
    args = {"is_causal": dict(is_causal=True),
            "bool": dict(attn_mask=torch.rand(9, 13, generator=gen) > 0.3),
            "float": dict(attn_mask=torch.randn(3, 9, 13, generator=gen,
                                                dtype=torch.float64)),
            "scale": dict(scale=0.3)}[kw]
    got = attn.torch.scaled_dot_product_attention(q, k, v, **args)
    want = sdpa_formula(q, k, v, **args)
    torch.testing.assert_close(got, want, rtol=1e-12, atol=1e-13)
    g = torch.autograd.grad(got.sum(), (q, k, v))
    h = torch.autograd.grad(want.sum(), (q, k, v))
    for a, b in zip(g, h):
        torch.testing.assert_close(a, b, rtol=1e-12, atol=1e-13)


def test_scaled_dot_product_attention_gqa_and_leading_dims():
    rng = np.random.default_rng(2)
    q = rng.standard_normal((3, 4, 5, 8))
    k, v = rng.standard_normal((2, 3, 2, 6, 8))
    with pytest.raises(attn.UsageError, match="enable_gqa=True"):
        attn.torch.scaled_dot_product_attention(q, k, v)
    got = attn.torch.scaled_dot_product_attention(q, k, v, enable_gqa=True)
    want = sdpa_formula(*(torch.tensor(x) for x in (
        q, np.repeat(k, 2, axis=1), np.repeat(v, 2, axis=1))))
    np.testing.assert_allclose(got, want.numpy(), rtol=1e-12, atol=1e-13)
    # (N, L, E): no heads axis
    got = attn.torch.scaled_dot_product_attention(q[0], q[1], q[2])
    want = sdpa_formula(*(torch.tensor(x) for x in (q[0], q[1], q[2])))
    np.testing.assert_allclose(got, want.numpy(), rtol=1e-12, atol=1e-13)


def test_scaled_dot_product_attention_refuses_mask_and_causal():
    q = np.zeros((1, 1, 2, 2))
    with pytest.raises(attn.UsageError, match="attn_mask and is_causal"):
        attn.torch.scaled_dot_product_attention(
            q, q, q, attn_mask=np.ones((2, 2), dtype=bool), is_causal=True)


@pytest.mark.parametrize("fn", [flash_attn_func, flash_attn_varlen_func,
                                flash_attn_with_kvcache,
                                attn.torch.scaled_dot_product_attention])
def test_every_function_documents_its_arguments_and_return(fn):
    doc = inspect.getdoc(fn)
    for name in inspect.signature(fn).parameters:
        if name != "conventions":
            assert name in doc, "%s: %s undocumented" % (fn.__name__, name)
    assert "Returns" in doc
    assert inspect.getdoc(attn.flash) and inspect.getdoc(attn.torch)
