#!/usr/bin/python3
# rope_torch.py - write rope_torch.h: rotary position embeddings computed
# by the formulas of Hugging Face transformers, for check_rope.c to hold
# attn's --rope against.
#
#   half:        modeling_llama.py's LlamaRotaryEmbedding (default rope
#                type) and apply_rotary_pos_emb with rotate_half;
#   interleaved: modeling_gptj.py's create_sinusoidal_positions and
#                apply_rotary_pos_emb with rotate_every_two.
#
# The functions below are those formulas written out as the two files
# write them, with two changes: float64 instead of float32 (so that the
# recorded numbers are exact to the last bits, not to float32's 7
# digits), and the base as a parameter (GPT-J fixes it at 10000).  Query
# positions start at `offset` (a cache of earlier keys, as decoding
# with HF's cache_position does), keys at 0.  The scores are each
# head's q_rot k_rot^T, unscaled, for the query heads' KV heads.
#
# Run with /usr/bin/python3 (Debian's python3-torch, 1.13 here):
#     /usr/bin/python3 tests/unit/rope_torch.py > tests/unit/rope_torch.h
import torch

torch.set_default_dtype(torch.float64)


# ---------------------------------------------------------- modeling_llama

def rotate_half(x):
    """Rotates half the hidden dims of the input."""
    x1 = x[..., : x.shape[-1] // 2]
    x2 = x[..., x.shape[-1] // 2:]
    return torch.cat((-x2, x1), dim=-1)


def llama_apply_rotary_pos_emb(q, k, cos, sin, unsqueeze_dim=1):
    cos = cos.unsqueeze(unsqueeze_dim)
    sin = sin.unsqueeze(unsqueeze_dim)
    q_embed = (q * cos) + (rotate_half(q) * sin)
    k_embed = (k * cos) + (rotate_half(k) * sin)
    return q_embed, k_embed


def llama_rotary_embedding(dim, base, position_ids):
    """LlamaRotaryEmbedding.forward for rope_type "default" (no scaling):
    cos and sin of shape (batch, seq, dim)."""
    inv_freq = 1.0 / (base ** (torch.arange(0, dim, 2, dtype=torch.int64)
                               .to(torch.float64) / dim))
    inv_freq_expanded = inv_freq[None, :, None].expand(
        position_ids.shape[0], -1, 1)
    position_ids_expanded = position_ids[:, None, :].to(torch.float64)
    freqs = (inv_freq_expanded @ position_ids_expanded).transpose(1, 2)
    emb = torch.cat((freqs, freqs), dim=-1)
    return emb.cos(), emb.sin()


def rope_half(q, k, base, offset):
    """q: (batch, heads, T, d), k: (batch, kv_heads, S, d)."""
    T, S, d = q.shape[2], k.shape[2], q.shape[3]
    cos_q, sin_q = llama_rotary_embedding(d, base,
                                          torch.arange(offset, offset + T)[None])
    cos_k, sin_k = llama_rotary_embedding(d, base, torch.arange(S)[None])
    q_rot, _ = llama_apply_rotary_pos_emb(q, q, cos_q, sin_q)
    _, k_rot = llama_apply_rotary_pos_emb(k, k, cos_k, sin_k)
    return q_rot, k_rot


# ------------------------------------------------------------ modeling_gptj

def create_sinusoidal_positions(num_pos, dim, base):
    inv_freq = 1.0 / (base ** (torch.arange(0, dim, 2, dtype=torch.int64)
                               / dim))
    sinusoid_inp = torch.einsum("i , j -> i j",
                                torch.arange(num_pos, dtype=torch.int64)
                                .to(torch.float64), inv_freq)
    return torch.cat((torch.sin(sinusoid_inp), torch.cos(sinusoid_inp)),
                     dim=1)


def rotate_every_two(x):
    x1 = x[:, :, :, ::2]
    x2 = x[:, :, :, 1::2]
    x = torch.stack((-x2, x1), dim=-1)
    return x.flatten(-2)


def gptj_apply_rotary_pos_emb(tensor, sin, cos):
    sin = torch.repeat_interleave(sin[:, :, None, :], 2, 3)
    cos = torch.repeat_interleave(cos[:, :, None, :], 2, 3)
    return (tensor * cos) + (rotate_every_two(tensor) * sin)


def gptj_rotate(x, base, offset):
    """x: (batch, heads, n, d), GPT-J's own layout being (batch, n,
    heads, d); positions offset .. offset + n - 1."""
    n, d = x.shape[2], x.shape[3]
    embed_positions = create_sinusoidal_positions(offset + n, d, base)
    sincos = embed_positions[torch.arange(offset, offset + n)][None]
    sin, cos = torch.split(sincos, sincos.shape[-1] // 2, dim=-1)
    return gptj_apply_rotary_pos_emb(x.transpose(1, 2), sin,
                                     cos).transpose(1, 2)


def rope_interleaved(q, k, base, offset):
    return gptj_rotate(q, base, offset), gptj_rotate(k, base, 0)


# -------------------------------------------------------------- the cases

CASES = [
    # name, style, base, T, S, H, G, d, offset
    ("llama_base_10000", "half", 10000.0, 5, 5, 2, 1, 8, 0),
    ("llama_base_500000_decoding", "half", 500000.0, 3, 6, 2, 2, 4, 3),
    ("gptj_base_10000", "interleaved", 10000.0, 4, 4, 2, 2, 6, 0),
    ("gptj_base_100_decoding", "interleaved", 100.0, 2, 5, 3, 1, 4, 3),
]


def flat(x):
    """(1, heads, rows, d) as attn lays it out, rows x heads*d, row by
    row."""
    return x[0].transpose(0, 1).reshape(-1).tolist()


def c_array(name, values):
    body = ",\n".join("\t%r" % v for v in values)
    return "static const double %s[] = {\n%s,\n};\n" % (name, body)


def main():
    torch.manual_seed(20261201)
    out = ["/* rope_torch.h - written by rope_torch.py (torch %s); do not "
           "edit. */\n" % torch.__version__]
    table = []
    for name, style, base, T, S, H, G, d, offset in CASES:
        q = torch.randn(1, H, T, d)
        k = torch.randn(1, G, S, d)
        if style == "half":
            q_rot, k_rot = rope_half(q, k, base, offset)
        else:
            q_rot, k_rot = rope_interleaved(q, k, base, offset)
        k_per_q = k_rot.repeat_interleave(H // G, dim=1)
        scores = q_rot @ k_per_q.transpose(-1, -2)
        out.append(c_array(name + "_q", flat(q)))
        out.append(c_array(name + "_k", flat(k)))
        out.append(c_array(name + "_q_rot", flat(q_rot)))
        out.append(c_array(name + "_k_rot", flat(k_rot)))
        out.append(c_array(name + "_scores", scores[0].reshape(-1).tolist()))
        table.append("\t{ \"%s\", ATTN_ROPE_%s, %r, %d, %d, %d, %d, %d, %d,\n"
                     "\t    %s_q, %s_k, %s_q_rot, %s_k_rot, %s_scores },"
                     % (name, style.upper(), base, T, S, H, G, d, offset,
                        name, name, name, name, name))
    out.append("static const struct rope_torch_case {\n"
               "\tconst char *name;\n"
               "\tenum attn_rope_style style;\n"
               "\tdouble base;\n"
               "\tsize_t T, S, H, G, d, offset;\n"
               "\tconst double *q, *k, *q_rot, *k_rot;\t/* T x H*d, ... */\n"
               "\tconst double *scores;\t/* H x T x S, unscaled */\n"
               "} rope_torch_cases[] = {\n%s\n};\n" % "\n".join(table))
    print("\n".join(out), end="")


main()
