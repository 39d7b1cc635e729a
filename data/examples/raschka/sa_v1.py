#!/usr/bin/python3
# sa_v1.py - write sa_v1.json, the weights of SelfAttention_v1 in chapter
# 3 of Sebastian Raschka's "Build a Large Language Model (From Scratch)"
# (Manning, 2024; section 3.4.2), as the book makes them:
#
#     torch.manual_seed(123)
#     sa_v1 = SelfAttention_v1(d_in=3, d_out=2)
#
# whose __init__ draws W_query, W_key and W_value, in that order, with
# torch.rand(d_in, d_out).  The numbers are float32, written as the
# shortest decimal that reads back to the same double (the float32
# value exactly), so that attn computes what the book's code computes,
# in double.  torch's CPU generator (mt19937) gives the same numbers in
# every release; this ran under Debian's python3-torch 1.13:
#
#     /usr/bin/python3 data/examples/raschka/sa_v1.py > data/examples/raschka/sa_v1.json
#
# The forward pass is x @ W (queries = x @ W_query, ...), which is what
# attn --proj computes.
import json

import torch

torch.manual_seed(123)
d_in, d_out = 3, 2
W_query = torch.rand(d_in, d_out)
W_key = torch.rand(d_in, d_out)
W_value = torch.rand(d_in, d_out)


def rows(w):
    return [[float(x) for x in row] for row in w.double().tolist()]


layer = {"W_Q": rows(W_query), "W_K": rows(W_key), "W_V": rows(W_value)}
print("{\n" + ",\n".join('  "%s": %s' % (k, json.dumps(v))
                         for k, v in layer.items()) + "\n}")
