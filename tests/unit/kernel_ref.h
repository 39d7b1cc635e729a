/*
 * kernel_ref.h - the reference kernel (kernel_ref.c, kernel_ref_grad.c):
 * every stage, forward and backward, in plain passes over whole blocks
 * in the streaming kernel's arithmetic, the oracle the unit tests hold
 * the library's kernel to byte for byte.  Run it through
 * attn_run_kernel(&kernel_ref, ...) (lib/internal.h).
 */
#ifndef KERNEL_REF_H
#define KERNEL_REF_H

#include "internal.h"

extern const struct attn_kernel_ops kernel_ref;

/*
 * The backward pass of one batch and head (kernel_ref_grad.c): from the
 * blocks m of the stages p needs (scores, weights, output and row_max
 * computed) and hd's inputs and dO, compute the backward stages in
 * p->need into m.  grad_k and grad_v are added to, since the query heads
 * that share a KV head add up there; run the heads of a KV head in order
 * on zeroed blocks.  acc holds max(d_k, d_v) doubles of scratch.  *done
 * collects the stages computed.  Gradients that overflow are a data
 * error.
 */
enum attn_status kernel_ref_grad_head(const struct attn_problem *p,
    const struct attn_head *hd, struct attn_matrix *m, double *acc,
    unsigned *done, struct attn_error *err);

#endif /* KERNEL_REF_H */
