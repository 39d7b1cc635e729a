#!/usr/bin/python3
# mha_torch.py - write mha_torch.h: what torch.nn.MultiheadAttention
# computes on small cases, for check_project.c to hold attn --proj
# against.
#
# Each case is an nn.MultiheadAttention(embed_dim=4, num_heads=2,
# bias=True, batch_first=True) in float64 with seeded weights and
# nonzero biases (in_proj_bias and out_proj.bias are drawn, not left at
# their zero init), called as mha(XQ, XKV, XKV) on a batch of two, once
# without a mask and once with a key_padding_mask (True = ignore).  What
# is recorded:
#
#   the layer as attn reads it: W_Q = in_proj_weight[:E].T,
#     W_K = in_proj_weight[E:2E].T, W_V = in_proj_weight[2E:].T, the
#     thirds of in_proj_bias as b_Q, b_K, b_V, W_O = out_proj.weight.T,
#     b_O = out_proj.bias (nn.Linear stores weight as out x in, attn
#     wants x @ W);
#   attn_output (B x T x E), what attn calls projected;
#   attn_output_weights with average_attn_weights=False (B x H x T x S),
#     attn's weights stage.
#
# Run with /usr/bin/python3 (Debian's python3-torch, 1.13 here):
#     /usr/bin/python3 tests/unit/mha_torch.py > tests/unit/mha_torch.h
import torch

torch.set_default_dtype(torch.float64)

E, H, B, T, S = 4, 2, 2, 3, 4


def c_array(name, values):
    body = ",\n".join("\t%r" % v for v in values)
    return "static const double %s[] = {\n%s,\n};\n" % (name, body)


def flat(t):
    return t.reshape(-1).tolist()


def main():
    torch.manual_seed(1201)
    mha = torch.nn.MultiheadAttention(E, H, bias=True, batch_first=True)
    with torch.no_grad():
        mha.in_proj_bias.uniform_(-0.5, 0.5)
        mha.out_proj.bias.uniform_(-0.5, 0.5)
    mha.eval()
    xq = torch.randn(B, T, E)
    xkv = torch.randn(B, S, E)
    # batch 1 may not attend its last key, batch 2 its first two
    pad = torch.tensor([[False, False, False, True],
                        [True, True, False, False]])
    w = mha.in_proj_weight.detach()
    b = mha.in_proj_bias.detach()
    out = ["/* mha_torch.h - written by mha_torch.py (torch %s); do not "
           "edit. */\n" % torch.__version__,
           "enum { MHA_E = %d, MHA_H = %d, MHA_B = %d, MHA_T = %d, "
           "MHA_S = %d };\n" % (E, H, B, T, S),
           c_array("mha_xq", flat(xq)),
           c_array("mha_xkv", flat(xkv)),
           c_array("mha_w_q", flat(w[:E].T)),
           c_array("mha_w_k", flat(w[E:2 * E].T)),
           c_array("mha_w_v", flat(w[2 * E:].T)),
           c_array("mha_b_q", flat(b[:E])),
           c_array("mha_b_k", flat(b[E:2 * E])),
           c_array("mha_b_v", flat(b[2 * E:])),
           c_array("mha_w_o", flat(mha.out_proj.weight.detach().T)),
           c_array("mha_b_o", flat(mha.out_proj.bias.detach())),
           c_array("mha_key_padding", flat(pad.double()))]
    with torch.no_grad():
        for name, mask in (("plain", None), ("padded", pad)):
            o, wts = mha(xq, xkv, xkv, key_padding_mask=mask,
                         need_weights=True, average_attn_weights=False)
            out.append(c_array("mha_%s_output" % name, flat(o)))
            out.append(c_array("mha_%s_weights" % name, flat(wts)))
    print("\n".join(out), end="")


main()
