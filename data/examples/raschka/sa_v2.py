#!/usr/bin/python3
# sa_v2.py - write sa_v2.json, the weights of CausalAttention in chapter 3
# of Sebastian Raschka's "Build a Large Language Model (From Scratch)"
# (Manning, 2024; section 3.5.3), as the book makes them:
#
#     torch.manual_seed(123)
#     ca = CausalAttention(d_in=3, d_out=2, context_length=6, dropout=0.0)
#
# CausalAttention is SelfAttention_v2 (section 3.4.2) with the causal
# mask: its __init__ makes W_query, W_key and W_value, in that order, as
# nn.Linear(d_in, d_out, bias=qkv_bias) with qkv_bias False, which is
# all the generator draws.  nn.Linear keeps its weight as d_out x d_in
# and computes x @ weight.T, so the layer holds the transposes, each
# float32 number written as the shortest decimal that reads back to the
# same double (the float32 value exactly).  torch's CPU generator
# (mt19937) gives the same numbers in every release; this ran under
# Debian's python3-torch 1.13:
#
#     /usr/bin/python3 data/examples/raschka/sa_v2.py > data/examples/raschka/sa_v2.json
#
# The book's forward pass: scores = queries @ keys.T, masked above the
# diagonal with -inf, softmax(scores / keys.shape[-1]**0.5), times values:
# attn --causal --proj sa_v2.json inputs.csv.
import json

import torch


class CausalAttention(torch.nn.Module):
    """The book's __init__, the part that draws the weights."""

    def __init__(self, d_in, d_out, context_length, dropout, qkv_bias=False):
        super().__init__()
        self.d_out = d_out
        self.W_query = torch.nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = torch.nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_value = torch.nn.Linear(d_in, d_out, bias=qkv_bias)
        self.dropout = torch.nn.Dropout(dropout)
        self.register_buffer("mask", torch.triu(
            torch.ones(context_length, context_length), diagonal=1))


torch.manual_seed(123)
ca = CausalAttention(d_in=3, d_out=2, context_length=6, dropout=0.0)


def rows(linear):
    """x @ W: nn.Linear's weight transposed, as doubles."""
    return [[float(x) for x in row]
            for row in linear.weight.detach().T.double().tolist()]


layer = {"W_Q": rows(ca.W_query), "W_K": rows(ca.W_key),
         "W_V": rows(ca.W_value)}
print("{\n" + ",\n".join('  "%s": %s' % (k, json.dumps(v))
                         for k, v in layer.items()) + "\n}")
