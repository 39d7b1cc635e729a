"""What attn.flash and attn.torch share: PyTorch tensors taken as NumPy
arrays and given back as tensors, the reference made differentiable
for autograd, and the usage errors of what a reference cannot do.  No
arithmetic: every number comes from attn.attention.

PyTorch is imported only when a tensor is given (its import takes longer
than many attn.attention calls), by the type's module name.
"""
import numpy as np


def usage(message):
    """attn.UsageError(message), as attn.attention raises it."""
    from . import UsageError
    return UsageError(message)


def dropout(conv, dropout_p, mask, shape, drawer):
    """conv with dropout_p and its keep mask (attn's --dropout-p and
    --dropout-mask); a usage error without the mask, which the reference
    cannot draw: shape names its dims, drawer who drew it.  A mask
    without dropout_p goes to attn as given, whose rules judge it."""
    if mask is not None:
        conv["dropout_mask"] = array(mask)
    if not dropout_p:
        return
    if mask is None:
        raise usage("dropout_p > 0 needs dropout_mask=, the keep mask %s "
                    "drew (%s): the reference cannot draw its random "
                    "numbers" % (drawer, shape))
    conv["dropout_p"] = float(dropout_p)


def is_tensor(x):
    """Whether x is a PyTorch tensor (without importing torch)."""
    return type(x).__module__.split(".")[0] == "torch" and \
        hasattr(x, "detach")


def array(x):
    """x as attn.attention reads it: a tensor detached and on the CPU
    (bfloat16 widened to float32, which NumPy lacks, exactly), anything
    else as given."""
    if not is_tensor(x):
        return x
    import torch
    t = x.detach()
    if t.dtype == torch.bfloat16:
        t = t.float()
    return t.cpu().numpy()


def shape(x):
    """x's shape as a tuple, for a tensor or anything numpy.asarray
    takes."""
    return tuple(x.shape) if hasattr(x, "shape") else np.shape(x)


def wants_grad(*xs):
    """Whether autograd records a function of xs."""
    if not any(is_tensor(x) for x in xs):
        return False
    import torch
    return torch.is_grad_enabled() and \
        any(is_tensor(x) and x.requires_grad for x in xs)


_FUNCTION = []


def _function():
    """The autograd Function that runs a reference's forward and backward
    calls, made once, at the first call that needs it."""
    if not _FUNCTION:
        import torch

        class Reference(torch.autograd.Function):
            """Forward: ref.forward() -> (out, extras...), NumPy; the
            extras (lse, weights) have no gradient.  Backward:
            ref.backward(dout) -> (dq, dk, dv), NumPy, shaped as q, k, v.
            """

            @staticmethod
            def forward(ctx, ref, q, k, v):
                outs = tuple(torch.from_numpy(np.ascontiguousarray(o))
                             for o in ref.forward())
                ctx.ref = ref
                ctx.mark_non_differentiable(*outs[1:])
                return outs

            @staticmethod
            def backward(ctx, dout, *unused):
                grads = ctx.ref.backward(array(dout))
                return (None,) + tuple(
                    torch.from_numpy(np.ascontiguousarray(g))
                    for g in grads)

        _FUNCTION.append(Reference)
    return _FUNCTION[0]


class Reference:
    """A reference call: forward() and backward(dout) over attn.attention
    with the operands and keywords fixed."""

    def __init__(self, forward, backward):
        self.forward = forward
        self.backward = backward


def results(ref, like, q, k, v):
    """ref's forward results as the caller gave its operands: NumPy
    arrays, or float64 tensors when like is a tensor, differentiable
    (ref's backward) when autograd records q, k or v."""
    if wants_grad(q, k, v) and ref.backward is not None:
        return _function().apply(ref, q, k, v)
    outs = ref.forward()
    if is_tensor(like):
        import torch
        return tuple(torch.from_numpy(np.ascontiguousarray(o))
                     for o in outs)
    return outs
