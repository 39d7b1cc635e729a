#!/usr/bin/python3
"""grad_reduce_torch.py - record the gradients of a broadcast bias and of
the sinks from PyTorch autograd for check_grad_reduce.c, which compares
attn_grad_bias and attn_grad_sinks with them and does not need torch
itself.

    /usr/bin/python3 tests/unit/grad_reduce_torch.py \\
        > tests/unit/grad_reduce_torch.h

(Debian's python3-torch, 1.13, made the header in the tree; without torch
the script says so and exits 77, as a skipped test does.)

The cases: B = 2 batches of H = 2 query heads sharing G = 1 KV head,
T = 3 queries, S = 4 keys, d = 2, softcap 3, one sink per head, written
as one more key whose logit is the sink and whose value is 0, and a bias:
a key-padding one B x 1 x 1 x S (one row per batch, broadcast over heads
and queries: autograd sums its gradient over them), then one per head
and query shared by the batches, 1 x H x T x 1 (summed over the batches
and keys).  The loss is sum(dO * output).
"""
import math
import sys

try:
    import torch
except ImportError:
    print("grad_reduce_torch.py: skipped: python3-torch is missing",
          file=sys.stderr)
    sys.exit(77)

B, H, G, T, S, D = 2, 2, 1, 3, 4, 2
torch.manual_seed(5)
f64 = torch.float64
q = torch.rand(B, H, T, D, dtype=f64) * 3 - 1.5
k = torch.rand(B, G, S, D, dtype=f64) * 3 - 1.5
v = torch.rand(B, G, S, D, dtype=f64) * 3 - 1.5
d_out = torch.rand(B, H, T, D, dtype=f64) * 2 - 1
bias = (torch.rand(B, 1, 1, S, dtype=f64) * 2 - 1).requires_grad_()
bias_h = (torch.rand(1, H, T, 1, dtype=f64) * 2 - 1).requires_grad_()
sinks = torch.tensor([0.5, -1.0], dtype=f64, requires_grad=True)


def backward(b):
    """sum(dO * output) with bias b, backward: b.grad and sinks.grad."""
    sinks.grad = None
    kk = k.repeat_interleave(H // G, dim=1)
    vv = v.repeat_interleave(H // G, dim=1)
    logits = q @ kk.transpose(-1, -2) / math.sqrt(D)
    logits = 3.0 * torch.tanh(logits / 3.0) + b
    ext = torch.cat([logits, sinks.view(1, H, 1, 1).expand(B, H, T, 1)],
                    -1)
    p = torch.softmax(ext, dim=-1)[..., :S]
    out = p @ vv
    (out * d_out).sum().backward()


backward(bias_h)
grad_sinks_h = sinks.grad.clone()
backward(bias)


def emit(name, rows, t):
    flat = t.detach().reshape(-1).tolist()
    print("/* %s */" % rows)
    print("static const double %s[%d] = {" % (name, len(flat)))
    for i in range(0, len(flat), 3):
        print("\t" + " ".join(repr(x) + "," for x in flat[i:i + 3]))
    print("};")


print("/*\n * grad_reduce_torch.h - the gradients of a broadcast bias and of"
      "\n * the sinks, recorded from PyTorch %s autograd in float64 by"
      "\n * grad_reduce_torch.py (which says what the case is); generated:"
      "\n * do not edit, run the script again.\n */" % torch.__version__)
print("enum { GRT_B = %d, GRT_H = %d, GRT_G = %d, GRT_T = %d, GRT_S = %d, "
      "GRT_D = %d };" % (B, H, G, T, S, D))
emit("grt_q", "B*T x H*d", q.permute(0, 2, 1, 3))
emit("grt_k", "B*S x G*d", k.permute(0, 2, 1, 3))
emit("grt_v", "B*S x G*d", v.permute(0, 2, 1, 3))
emit("grt_d_out", "B*T x H*d", d_out.permute(0, 2, 1, 3))
emit("grt_bias", "B x S: one block of 1 x S per batch", bias)
emit("grt_sinks", "1 x H", sinks)
emit("grt_grad_bias", "B x S, as the bias", bias.grad)
emit("grt_grad_sinks", "1 x H", sinks.grad)
emit("grt_bias_h", "H x T: one block of T x 1 per head, for every batch",
     bias_h)
emit("grt_grad_bias_h", "H x T, as the bias", bias_h.grad)
emit("grt_grad_sinks_h", "1 x H, with that bias", grad_sinks_h)
