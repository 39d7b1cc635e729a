"""PyTorch's scaled_dot_product_attention, computed by attn.

    from attn.torch import scaled_dot_product_attention
    ref = scaled_dot_product_attention(q, k, v, is_causal=True)

takes torch.nn.functional.scaled_dot_product_attention's argument names
and defaults and returns what it returns, in PyTorch's conventions
(attn(1), --like torch): operands (N, ..., H, L, E) (--layout bhsd);
is_causal aligned top-left (query i sees keys j <= i); a row that may
attend no key has output 0 (PyTorch >= 2.5); attn_mask bool (True takes
part) or a float added to the logits, broadcast as PyTorch broadcasts
it.  The result is float64 (a tensor when query is one, differentiable
when autograd records query, key or value: attn's backward pass), attn's
exact values, or with emulate="bf16" (...) those of a plain kernel in
that format.  Nothing here computes: every number is attn.attention's.
"""
import numpy as np

from . import _tensors

__all__ = ["scaled_dot_product_attention"]


def _heads(shape):
    """(batch, heads) of an operand (N, ..., H, L, E): the heads its
    third dim from the end, every dim before it one batch axis."""
    return int(np.prod(shape[:-3], dtype=np.int64)), \
        (shape[-3] if len(shape) >= 3 else 1)


def scaled_dot_product_attention(query, key, value, attn_mask=None,
                                 dropout_p=0.0, is_causal=False, scale=None,
                                 enable_gqa=False, **conventions):
    """PyTorch's scaled_dot_product_attention, computed by attn in float64.

    query: (N, ..., Hq, L, E); key: (N, ..., H, S, E); value: (N, ...,
    H, S, Ev).  attn_mask: broadcastable to (N, ..., Hq, L, S), bool
    (True: the query may attend the key) or float (added to the logits;
    -inf removes a key).  dropout_p: with dropout_p > 0, give
    dropout_mask= (N x Hq x L x S, the keep mask of the run checked).
    is_causal: top-left aligned, query i sees keys j <= i (with
    attn_mask an error, as in PyTorch).  scale: default 1 / sqrt(E).
    enable_gqa: key and value may have fewer heads than query (Hq a
    multiple of H); without it different head counts are an error, as
    in PyTorch.  Other keywords: attn.attention's conventions (emulate,
    threads, max_memory, ...).

    Returns the output (N, ..., Hq, L, Ev), float64: a tensor when query
    is one (autograd gives attn's gradients of query, key and value; a
    float attn_mask gets none), else a NumPy array.  Raises attn.Error
    (attn.UsageError, attn.DataError, ...) with the CLI's message.
    """
    qs, ks, vs = (_tensors.shape(x) for x in (query, key, value))
    if min(len(qs), len(ks), len(vs)) < 2:
        raise _tensors.usage(
            "query, key and value need at least 2 dims (L x E), not %d, %d "
            "and %d" % (len(qs), len(ks), len(vs)))
    (B, H), (_, G) = _heads(qs), _heads(ks)
    if G != H and not enable_gqa:
        raise _tensors.usage(
            "query has %d heads, key and value %d: give enable_gqa=True for "
            "grouped-query attention" % (H, G))
    if is_causal and attn_mask is not None:
        raise _tensors.usage("attn_mask and is_causal: give one of them, "
                             "as PyTorch takes one")
    conv = dict(conventions, layout="bhsd", like="torch")
    if is_causal:
        conv["causal"] = True
    if scale is not None:
        conv["scale"] = float(scale)
    _tensors.dropout(conv, dropout_p, conv.pop("dropout_mask", None),
                     "N x H x L x S", "the run")
    if attn_mask is not None:
        m = np.asarray(_tensors.array(attn_mask))
        full = tuple(qs[:-1]) + (ks[-2],)
        try:
            m = np.broadcast_to(m, full)
        except ValueError:
            raise _tensors.usage(
                "attn_mask of shape %s does not broadcast to %s" % (
                    "x".join(map(str, m.shape)),
                    "x".join(map(str, full)))) from None
        conv["mask" if m.dtype == np.bool_ else "bias"] = \
            m.reshape(B, H, qs[-2], ks[-2])
    qa, ka, va = (np.reshape(_tensors.array(x), (b, h) + tuple(s[-2:]))
                  for x, s, (b, h) in ((query, qs, (B, H)),
                                       (key, ks, (B, G)),
                                       (value, vs, (B, G))))
    from . import attention

    def forward():
        out = attention(qa, ka, va, stages=("output",), **conv)["output"]
        return (out.reshape(tuple(qs[:-1]) + (vs[-1],)),)

    def backward(dout):
        got = attention(qa, ka, va, stages=("grad_q", "grad_k", "grad_v"),
                        grad_out=np.reshape(dout, (B, H, qs[-2], vs[-1])),
                        **conv)
        return tuple(got[s].reshape(shp) for s, shp in
                     (("grad_q", qs), ("grad_k", ks), ("grad_v", vs)))

    ref = _tensors.Reference(forward, backward)
    return _tensors.results(ref, query, query, key, value)[0]
