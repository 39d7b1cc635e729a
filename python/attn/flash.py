"""FlashAttention 2 and 3's functions, computed by attn.

flash_attn_func, flash_attn_varlen_func and flash_attn_with_kvcache take
FlashAttention's argument names, defaults and shapes and return what it
returns, so that a kernel's test swaps the kernel's call for this one's:

    from attn.flash import flash_attn_func
    out_ref = flash_attn_func(q, k, v, causal=True)

Each is attn.attention in FlashAttention's conventions (attn(1), --like
flash): operands laid out B x T x H x D (--layout bshd); causal aligned
bottom-right when T and S differ (--align bottom-right); a row that may
attend no key has output 0 and softmax_lse +inf (--masked-rows zero,
--lse-masked inf); softmax_lse in natural log, B x H x T (H x total_q
under varlen); window_size (left, right) with -1 for no bound; K and V
with fewer heads than Q are grouped-query attention.

The results are float64 (NumPy arrays, or PyTorch tensors when q is a
tensor), attn's exact values, or with emulate="bf16" (or "fp16",
"fp32", "fp8-e4m3", ...) those of a plain kernel in that format.  When
autograd records q, k or v, the output's backward pass is attn's too
(--grad), so that q.grad holds attn's dQ.  Keywords beyond
FlashAttention's are attn.attention's conventions (threads,
max_memory, emulate, ...).  Nothing here computes: every number is
attn.attention's.
"""
import numpy as np

from . import _tensors

__all__ = ["flash_attn_func", "flash_attn_varlen_func",
           "flash_attn_with_kvcache"]


def _attention(q, k, v, stages, **conventions):
    """attn.attention, found at the call (the package imports this
    module)."""
    from . import attention
    return attention(q, k, v, stages=stages, **conventions)


def _conventions(causal, window_size, softcap, alibi_slopes, softmax_scale,
                 dropout_p, bound, extra):
    """FlashAttention's arguments as attn.attention's keywords.  bound:
    a window side that covers every key, for FlashAttention's -1."""
    conv = dict(layout="bshd", like="flash")
    if causal:
        conv["causal"] = True
    left, right = (int(w) for w in window_size)
    if left >= 0 or right >= 0:
        conv["window"] = (left if left >= 0 else bound,
                          right if right >= 0 else bound)
    if softcap:
        conv["softcap"] = float(softcap)
    if alibi_slopes is not None:
        conv["alibi_slopes"] = _tensors.array(alibi_slopes)
    if softmax_scale is not None:
        conv["scale"] = float(softmax_scale)
    _tensors.dropout(conv, dropout_p, extra.pop("dropout_mask", None),
                     "B x H x T x S", "the kernel")
    for fa3, name in (("q_descale", "descale_q"), ("k_descale", "descale_k"),
                      ("v_descale", "descale_v")):
        value = extra.pop(fa3, None)
        if value is not None:
            conv[name] = _tensors.array(value)
    for key, value in extra.items():
        if value is not None:
            conv[key] = _tensors.array(value)
    return conv


def _reference(q, k, v, conv, stages, shape_out):
    """The reference call of q, k and v under conv: forward gives the
    stages, each through shape_out; backward, attn's gradients shaped as
    q, k and v."""
    qa, ka, va = (_tensors.array(x) for x in (q, k, v))

    def forward():
        got = _attention(qa, ka, va, stages, **conv)
        return tuple(shape_out[s](got[s]) for s in stages)

    def backward(dout):
        got = _attention(qa, ka, va, ("grad_q", "grad_k", "grad_v"),
                         grad_out=np.reshape(dout, _tensors.shape(qa)),
                         **conv)
        return tuple(np.reshape(got[s], _tensors.shape(x)) for s, x in
                     (("grad_q", qa), ("grad_k", ka), ("grad_v", va)))

    return _tensors.Reference(forward, backward)


def flash_attn_func(q, k, v, dropout_p=0.0, softmax_scale=None,
                    causal=False, window_size=(-1, -1), softcap=0.0,
                    alibi_slopes=None, deterministic=False,
                    return_attn_probs=False, *, q_descale=None,
                    k_descale=None, v_descale=None, **conventions):
    """FlashAttention's flash_attn_func, computed by attn in float64.

    q: (batch, seqlen_q, nheads, headdim); k, v: (batch, seqlen_k,
    nheads_k, headdim), nheads divisible by nheads_k (MQA, GQA).
    dropout_p: with dropout_p > 0, give dropout_mask= (B x H x T x S,
    the keep mask the kernel drew); attn scales what it keeps by
    1 / (1 - dropout_p).  softmax_scale: default 1 / sqrt(headdim).
    causal: bottom-right aligned (FlashAttention >= 2.1): query i sees
    keys j <= i + seqlen_k - seqlen_q.  window_size: (left, right),
    query i sees keys i + seqlen_k - seqlen_q - left to ... + right, -1
    for no bound.  softcap: logits become softcap * tanh(logits /
    softcap), after the scale (0: none).  alibi_slopes: (nheads,) or
    (batch, nheads); FlashAttention-2's softmax_lse under causal ALiBi is
    attn's plus slope * (i + seqlen_k - seqlen_q) (attn(1), ALiBi
    slopes).  deterministic: the reference always is.  q_descale,
    k_descale, v_descale: FlashAttention 3's fp8 descale factors.
    Other keywords: attn.attention's conventions (emulate, threads,
    max_memory, ...).

    Returns out (batch, seqlen_q, nheads, headdim); with
    return_attn_probs, (out, softmax_lse, attn_probs): softmax_lse
    (batch, nheads, seqlen_q) in natural log, +inf for a row with no
    key; attn_probs the weights (batch, nheads, seqlen_q, seqlen_k).
    Raises attn.Error (attn.UsageError, attn.DataError, ...) with the
    CLI's message.
    """
    extra = dict(conventions, q_descale=q_descale, k_descale=k_descale,
                 v_descale=v_descale)
    bound = _tensors.shape(q)[1] + _tensors.shape(k)[1]
    conv = _conventions(causal, window_size, softcap, alibi_slopes,
                        softmax_scale, dropout_p, bound, extra)
    stages = ("output", "lse", "weights") if return_attn_probs else \
        ("output",)
    shape_out = {"output": lambda x: x, "lse": lambda x: x[..., 0],
                 "weights": lambda x: x}
    outs = _tensors.results(_reference(q, k, v, conv, stages, shape_out),
                            q, q, k, v)
    return tuple(outs) if return_attn_probs else outs[0]


def _seqlens(cu):
    """The lengths of the sequences cu_seqlens delimits."""
    cu = np.asarray(_tensors.array(cu)).reshape(-1)
    return np.diff(cu) if cu.size > 1 else np.zeros(0, dtype=np.int64)


def flash_attn_varlen_func(q, k, v, cu_seqlens_q, cu_seqlens_k, max_seqlen_q,
                           max_seqlen_k, dropout_p=0.0, softmax_scale=None,
                           causal=False, window_size=(-1, -1), softcap=0.0,
                           alibi_slopes=None, deterministic=False,
                           return_attn_probs=False, block_table=None, *,
                           seqused_k=None, q_descale=None, k_descale=None,
                           v_descale=None, **conventions):
    """FlashAttention's flash_attn_varlen_func, computed by attn in float64.

    q: (total_q, nheads, headdim), the sequences packed; k, v: (total_k,
    nheads_k, headdim); cu_seqlens_q, cu_seqlens_k: (batch + 1,) int,
    sequence b at rows cu_seqlens[b] to cu_seqlens[b + 1].
    max_seqlen_q, max_seqlen_k: the longest sequences (an argument
    smaller than a sequence is a usage error, where the kernel would
    read past its grid).  block_table: (batch, max_blocks) with k and v
    paged caches (num_blocks, page_block_size, nheads_k, headdim).
    seqused_k: (batch,) keys in use of each sequence (FlashAttention 3).
    The rest as flash_attn_func: causal bottom-right within each
    sequence, window_size, softcap, softmax_scale, alibi_slopes,
    dropout_p with dropout_mask=, deterministic, the fp8 descales
    q_descale, k_descale, v_descale, and attn.attention's conventions.

    Returns out (total_q, nheads, headdim); with return_attn_probs,
    (out, softmax_lse, attn_probs): softmax_lse (nheads, total_q) in
    natural log, attn_probs attn's weights of the packed batch.
    """
    for cu, longest, name in ((cu_seqlens_q, max_seqlen_q, "max_seqlen_q"),
                              (cu_seqlens_k, max_seqlen_k, "max_seqlen_k")):
        lens = _seqlens(cu)
        if block_table is None or name == "max_seqlen_q":
            if lens.size and int(lens.max()) > int(longest):
                raise _tensors.usage(
                    "%s is %d, but a sequence of cu_seqlens_%s has %d rows"
                    % (name, int(longest), name[-1], int(lens.max())))
    extra = dict(conventions, q_descale=q_descale, k_descale=k_descale,
                 v_descale=v_descale, block_table=block_table,
                 seqused_k=seqused_k,
                 cu_seqlens_q=_tensors.array(cu_seqlens_q),
                 cu_seqlens_k=_tensors.array(cu_seqlens_k))
    bound = _tensors.shape(q)[0] + _tensors.shape(k)[0]
    conv = _conventions(causal, window_size, softcap, alibi_slopes,
                        softmax_scale, dropout_p, bound, extra)
    stages = ("output", "lse", "weights") if return_attn_probs else \
        ("output",)
    # attn writes the packed batch as one batch: 1 x total_q x H x D, and
    # lse 1 x H x total_q x 1
    shape_out = {"output": lambda x: x[0], "lse": lambda x: x[0, ..., 0],
                 "weights": lambda x: x}
    ref = _reference(q, k, v, conv, stages, shape_out)
    if block_table is not None:
        ref.backward = None
    outs = _tensors.results(ref, q, q, k, v)
    return tuple(outs) if return_attn_probs else outs[0]


def _append(cache, new, cache_seqlens, block_table):
    """A float64 copy of cache with new (batch, seqlen_new, nheads_k,
    headdim) written at each batch's cache_seqlens[b], into its pages
    by block_table when given."""
    out = np.array(_tensors.array(cache), dtype=np.float64)
    new = np.asarray(_tensors.array(new), dtype=np.float64)
    page = out.shape[1]
    for b in range(new.shape[0]):
        for t in range(new.shape[1]):
            pos = int(cache_seqlens[b]) + t
            if block_table is None:
                out[b, pos] = new[b, t]
            else:
                out[int(block_table[b][pos // page]), pos % page] = new[b, t]
    return out


def flash_attn_with_kvcache(q, k_cache, v_cache, k=None, v=None,
                            rotary_cos=None, rotary_sin=None,
                            cache_seqlens=None, cache_batch_idx=None,
                            cache_leftpad=None, block_table=None,
                            softmax_scale=None, causal=False,
                            window_size=(-1, -1), softcap=0.0,
                            rotary_interleaved=True, alibi_slopes=None,
                            num_splits=0, return_softmax_lse=False,
                            **conventions):
    """FlashAttention's flash_attn_with_kvcache, computed by attn in float64.

    q: (batch, seqlen_q, nheads, headdim).  k_cache, v_cache:
    (batch_size_cache, seqlen_cache, nheads_k, headdim), or with
    block_table (batch, max_blocks) int, the pages (num_blocks,
    page_block_size, nheads_k, headdim).  cache_seqlens: int or (batch,),
    the keys in use of each batch (attn's seqused_k); causal aligns the
    queries with the last of them (bottom-right).  k, v: (batch,
    seqlen_new, nheads_k, headdim), appended at cache_seqlens before
    attending, which then counts them: FlashAttention writes them into
    the caches in place, the reference into a copy, leaving the caller's
    caches as they were.  cache_batch_idx: (batch,) the cache's rows
    each batch reads.  cache_leftpad: (batch,) the keys each batch's
    cache starts at (attn's key_leftpad).  rotary_cos, rotary_sin: not
    computed here (attn.UsageError): rotate q and k first, or give attn's
    rope= convention; rotary_interleaved goes with them.  num_splits:
    the reference does not split.  softmax_scale, causal, window_size,
    softcap, alibi_slopes and the other keywords (attn.attention's
    conventions) as flash_attn_func.

    Returns out (batch, seqlen_q, nheads, headdim); with
    return_softmax_lse, (out, softmax_lse (batch, nheads, seqlen_q)).
    No autograd: FlashAttention has no backward pass of this function.
    """
    if rotary_cos is not None or rotary_sin is not None:
        raise _tensors.usage(
            "rotary_cos and rotary_sin: the reference does not rotate k; "
            "give rope= (attn's --rope) or rotate q and k first")
    batch = _tensors.shape(q)[0]
    if cache_batch_idx is not None:
        if block_table is not None:
            raise _tensors.usage("cache_batch_idx and block_table: "
                                 "FlashAttention takes one of them")
        idx = np.asarray(_tensors.array(cache_batch_idx)).reshape(-1)
        k_cache = np.asarray(_tensors.array(k_cache))[idx]
        v_cache = np.asarray(_tensors.array(v_cache))[idx]
    if block_table is not None:
        block_table = np.asarray(_tensors.array(block_table))
        used_max = block_table.shape[1] * _tensors.shape(k_cache)[1]
    else:
        used_max = _tensors.shape(k_cache)[1]
    if cache_seqlens is None:
        seqlens = np.full(batch, used_max, dtype=np.int64)
    else:
        seqlens = np.broadcast_to(np.asarray(_tensors.array(cache_seqlens),
                                             dtype=np.int64), (batch,))
    if k is not None or v is not None:
        if k is None or v is None:
            raise _tensors.usage("k and v: give both or neither")
        k_cache = _append(k_cache, k, seqlens, block_table)
        v_cache = _append(v_cache, v, seqlens, block_table)
        seqlens = seqlens + _tensors.shape(k)[1]
    extra = dict(conventions, block_table=block_table,
                 key_leftpad=cache_leftpad)
    if cache_seqlens is not None or k is not None or \
            block_table is not None:
        extra["seqused_k"] = seqlens
    bound = _tensors.shape(q)[1] + used_max
    conv = _conventions(causal, window_size, softcap, alibi_slopes,
                        softmax_scale, 0.0, bound, extra)
    stages = ("output", "lse") if return_softmax_lse else ("output",)
    shape_out = {"output": lambda x: x, "lse": lambda x: x[..., 0]}
    ref = _reference(q, k_cache, v_cache, conv, stages, shape_out)
    ref.backward = None
    outs = _tensors.results(ref, q, q, k_cache, v_cache)
    return tuple(outs) if return_softmax_lse else outs[0]
