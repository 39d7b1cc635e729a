#!/usr/bin/python3
# mha.py - write mha.json, the weights of MultiHeadAttention in chapter 3
# of Sebastian Raschka's "Build a Large Language Model (From Scratch)"
# (Manning, 2024; section 3.6.2), as the book makes them:
#
#     torch.manual_seed(123)
#     mha = MultiHeadAttention(d_in=3, d_out=2, context_length=6,
#                              dropout=0.0, num_heads=2)
#
# whose __init__ makes W_query, W_key and W_value (nn.Linear(d_in, d_out,
# bias=qkv_bias), qkv_bias False) and then out_proj (nn.Linear(d_out,
# d_out), with a bias), in that order.  Each head has head_dim = d_out /
# num_heads = 1 of the columns of the queries, keys and values, side by
# side, as attn --heads 2 splits them; the scores are divided by
# keys.shape[-1]**0.5 = sqrt(head_dim) = 1, masked causally, and the
# heads' outputs, side by side again, go through out_proj.  nn.Linear
# computes x @ weight.T + bias, so the layer holds the transposes (W_O is
# out_proj.weight.T, b_O out_proj.bias), each float32 number as the
# shortest decimal that reads back to the same double.  Run under
# Debian's python3-torch 1.13:
#
#     /usr/bin/python3 data/examples/raschka/mha.py > data/examples/raschka/mha.json
#
# attn --causal --proj mha.json --heads 2 -s projected inputs.csv prints
# the book's context vectors.
import json

import torch


class MultiHeadAttention(torch.nn.Module):
    """The book's __init__, the part that draws the weights."""

    def __init__(self, d_in, d_out, context_length, dropout, num_heads,
                 qkv_bias=False):
        super().__init__()
        assert d_out % num_heads == 0, "d_out must be divisible by num_heads"
        self.d_out = d_out
        self.num_heads = num_heads
        self.head_dim = d_out // num_heads
        self.W_query = torch.nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = torch.nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_value = torch.nn.Linear(d_in, d_out, bias=qkv_bias)
        self.out_proj = torch.nn.Linear(d_out, d_out)
        self.dropout = torch.nn.Dropout(dropout)
        self.register_buffer("mask", torch.triu(
            torch.ones(context_length, context_length), diagonal=1))


torch.manual_seed(123)
mha = MultiHeadAttention(d_in=3, d_out=2, context_length=6, dropout=0.0,
                         num_heads=2)


def rows(linear):
    """x @ W: nn.Linear's weight transposed, as doubles."""
    return [[float(x) for x in row]
            for row in linear.weight.detach().T.double().tolist()]


layer = {"W_Q": rows(mha.W_query), "W_K": rows(mha.W_key),
         "W_V": rows(mha.W_value), "W_O": rows(mha.out_proj),
         "b_O": [float(x) for x in mha.out_proj.bias.detach().double()]}
print("{\n" + ",\n".join('  "%s": %s' % (k, json.dumps(v))
                         for k, v in layer.items()) + "\n}")
