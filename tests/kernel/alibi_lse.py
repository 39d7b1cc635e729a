#!/usr/bin/env python3
"""alibi_lse.py DIR - softmax_lse as FlashAttention-2 computes it under
causal ALiBi, in float64 NumPy, beside the same lse in attn's relative
form, for alibi.sh.

FlashAttention-2's alibi.h adds, when the mask is causal, slope_h * j
(key j's index) to every logit of the row that the mask keeps (j <=
i + S - T, aligned at the bottom right), where attn's --alibi adds
-slope_h * |i + S - T - j|.  For each key kept the two differ by
slope_h * (i + S - T), the same for the whole row: the weights are the
same, lse is not.

Writes q, k, v (B x H x T x D, bhsd), lse (FlashAttention-2's, B x H x
T) and lse-relative (attn's form) to DIR; H = 4 query heads, whose
slopes are Press et al.'s 2^-2, 2^-4, 2^-6 and 2^-8; T = 5 < S = 7.
"""
import sys

import numpy as np

B, H, T, S, D = 2, 4, 5, 7, 8


def main():
    out = sys.argv[1]
    rng = np.random.default_rng(36)
    q = rng.standard_normal((B, H, T, D))
    k = rng.standard_normal((B, H, S, D))
    v = rng.standard_normal((B, H, S, D))
    for name, x in (("q", q), ("k", k), ("v", v)):
        np.save(f"{out}/{name}.npy", x)
    slope = 2.0 ** (-8.0 * np.arange(1, H + 1) / H)[:, None, None]
    x = (q @ k.transpose(0, 1, 3, 2)) / np.sqrt(D)
    i = np.arange(T)[:, None]
    j = np.arange(S)[None, :]
    kept = j <= i + S - T
    for name, bias in (("lse", slope * j),
                       ("lse-relative", -slope * np.abs(i + S - T - j))):
        logits = np.where(kept, x + bias, -np.inf)
        mx = logits.max(axis=-1, keepdims=True)
        lse = (mx + np.log(np.exp(logits - mx).sum(axis=-1,
                                                    keepdims=True)))[..., 0]
        np.save(f"{out}/{name}.npy", lse)


if __name__ == "__main__":
    main()
