#!/usr/bin/python3
"""grad_torch.py - record one backward pass from PyTorch autograd for
check_grad.c, which compares attn's backward stages with it and does not
need torch itself.

    /usr/bin/python3 tests/unit/grad_torch.py > tests/unit/grad_torch.h

(Debian's python3-torch, 1.13, is what made the header in the tree.)

The case has every variant at once: B = 2 batches of H = 4 query heads
sharing G = 2 KV heads, T = 3 queries and S = 4 keys, d_k = 3 and d_v = 2,
the default scale 1/sqrt(d_k), softcap 2, one T x S bias for every batch
and head with a -inf entry, ALiBi, and a causal mask aligned bottom-right
(offset S - T), so that no row loses every key.  It is written out as
plain float64 tensor operations in attn's order (scale, softcap, bias and
ALiBi, masks, softmax, weights V), so that autograd does the calculus:
repeat_interleave gives query head h the KV head h // (H // G), and its
backward adds the gradients of the heads that share one; the bias
broadcasts over batches and heads, and its gradient adds theirs.
retain_grad() records the gradients of the weights and of the masked
logits (attn's grad_weights and grad_scaled) too.

Matrices are printed in attn's layout: Q, dO, output and grad_q as
B*T x H*d (heads side by side), K, V, grad_k and grad_v as B*S x G*d,
per-head stages as B*H blocks of T rows; every number with repr(), which
reads back as the same double.
"""
import math

import torch

B, H, G, T, S, DK, DV = 2, 4, 2, 3, 4, 3, 2
SOFTCAP = 2.0


def alibi_slopes(n):
    """Press et al.'s get_slopes for a power of two n."""
    start = 2 ** (-2 ** -(math.log2(n) - 3))
    return [start * start ** i for i in range(n)]


def main():
    gen = torch.Generator().manual_seed(20260611)

    def rand(*shape):
        return (torch.rand(*shape, generator=gen, dtype=torch.float64) * 2
                - 1)

    q = rand(B, T, H * DK).requires_grad_()
    k = rand(B, S, G * DK).requires_grad_()
    v = rand(B, S, G * DV).requires_grad_()
    bias = rand(T, S)
    bias[0, 1] = -math.inf
    bias.requires_grad_()
    d_out = rand(B, T, H * DV)

    scale = 1 / math.sqrt(DK)
    offset = S - T
    qh = q.view(B, T, H, DK).transpose(1, 2)
    kh = k.view(B, S, G, DK).transpose(1, 2).repeat_interleave(H // G, 1)
    vh = v.view(B, S, G, DV).transpose(1, 2).repeat_interleave(H // G, 1)
    i = torch.arange(T).view(T, 1)
    j = torch.arange(S).view(1, S)
    dist = (i + offset - j).abs().to(torch.float64)
    slopes = torch.tensor(alibi_slopes(H), dtype=torch.float64)
    alibi = -slopes.view(H, 1, 1) * dist
    keep = j <= i + offset

    logits = qh @ kh.transpose(-1, -2) * scale
    logits = SOFTCAP * torch.tanh(logits / SOFTCAP)
    logits = logits + bias + alibi
    scaled = logits.masked_fill(~keep, -math.inf)
    scaled.retain_grad()
    weights = torch.softmax(scaled, dim=-1)
    weights.retain_grad()
    out = (weights @ vh).transpose(1, 2).reshape(B, T, H * DV)
    (out * d_out).sum().backward()

    def number(x):
        if math.isinf(x):
            return "-INFINITY" if x < 0 else "INFINITY"
        return repr(x)

    def emit(name, t, what):
        vals = t.detach().reshape(-1).tolist()
        print("/* %s */" % what)
        print("static const double %s[%d] = {" % (name, len(vals)))
        for n in range(0, len(vals), 3):
            print("\t" + ", ".join(number(x) for x in vals[n:n + 3]) + ",")
        print("};")
        print()

    print("/*")
    print(" * grad_torch.h - one backward pass recorded from PyTorch %s"
          % torch.__version__)
    print(" * autograd in float64 by grad_torch.py (which says what the case"
          " is);")
    print(" * generated: do not edit, run the script again.")
    print(" */")
    print("enum { TORCH_B = %d, TORCH_H = %d, TORCH_G = %d, TORCH_T = %d,"
          % (B, H, G, T))
    print("    TORCH_S = %d, TORCH_DK = %d, TORCH_DV = %d };" % (S, DK, DV))
    print("#define TORCH_SOFTCAP %r" % SOFTCAP)
    print()
    emit("torch_q", q, "B*T x H*d_k")
    emit("torch_k", k, "B*S x G*d_k")
    emit("torch_v", v, "B*S x G*d_v")
    emit("torch_bias", bias, "T x S, one block for every batch and head")
    emit("torch_d_out", d_out, "B*T x H*d_v")
    emit("torch_output", out, "B*T x H*d_v")
    emit("torch_grad_weights", weights.grad, "B*H*T x S")
    emit("torch_grad_scaled", scaled.grad, "B*H*T x S")
    emit("torch_grad_q", q.grad, "B*T x H*d_k")
    emit("torch_grad_k", k.grad, "B*S x G*d_k")
    emit("torch_grad_v", v.grad, "B*S x G*d_v")
    emit("torch_grad_bias", bias.grad, "T x S: the sum over batches and "
         "heads")


if __name__ == "__main__":
    main()
