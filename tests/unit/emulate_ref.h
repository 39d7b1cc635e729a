/*
 * emulate_ref.h - the emulation's oracle (emulate_ref.c): attn_emulate's
 * stages of want, computed one element at a time in software rounding.
 * No passes (projections, RoPE) and no memory account: for the unit
 * tests, which give it Q, K, V and the variants' inputs.
 */
#ifndef EMULATE_REF_H
#define EMULATE_REF_H

#include "attn.h"

enum attn_status emulate_ref(const struct attn_config *cfg,
    const struct attn_inputs *in, unsigned want, enum attn_precision prec,
    struct attn_stages *out, struct attn_error *err);

#endif /* EMULATE_REF_H */
