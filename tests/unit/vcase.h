/*
 * vcase.h - seeded random cases of every variant, shared by the suites
 * that compare the library with the long double reference
 * (check_variants.c forward, check_grad.c backward) or kernels with each
 * other (check_stream.c).
 *
 * A case is a random combination of every variant: the seed decides
 * everything, so a failure names a replayable case.  T and S up to 8 and
 * 9 (T == S half the time), d_k and d_v up to 5 per head, H up to 4 with
 * G dividing it, B up to 3; mask and bias present half the time each, as
 * 1, B or B*H blocks; the bias sometimes holds -inf, and masks and biases
 * sometimes wipe out a whole row; sinks one case in three.  Large cases,
 * for kernels that work in blocks (check_stream.c): T and S up to 300
 * and 420, d_k and d_v up to 70, windows up to 200, H up to 2, B up to
 * 2.
 */
#ifndef ATTN_VCASE_H
#define ATTN_VCASE_H

#include <stdint.h>

#include "attn.h"
#include "ref.h"

struct vcase {
	uint64_t seed;
	struct attn_config cfg;
	size_t B, H, G, T, S, d_k, d_v;
	struct attn_matrix q, k, v;	/* B*T x H*d_k, B*S x G*d_k, x G*d_v */
	struct attn_matrix mask, bias;	/* blocks*T x S; data NULL if absent */
	size_t mask_blocks, bias_blocks;
	int bias_inf;			/* the bias holds -inf somewhere */
	struct attn_matrix sinks;	/* 1 x H, one case in three; data
					 * NULL if absent */
	char what[176];			/* the case, for failure messages */
};

/* Draw the case of seed; fails the current Check test when out of
 * memory.  Free with vcase_free. */
void vcase_make(struct vcase *c, uint64_t seed);

/* The same for a large case. */
void vcase_make_large(struct vcase *c, uint64_t seed);

void vcase_free(struct vcase *c);

/* The case as attn_run's inputs (views of c). */
void vcase_inputs(const struct vcase *c, struct attn_inputs *in);

/* The case as the reference reads it: its scale is 1/sqrtl(d_k) itself,
 * not the library's rounded one.  p borrows c's matrices. */
void vcase_ref_problem(const struct vcase *c, struct ref_config *rc,
    struct ref_problem *p);

/* ref_run of the case; fails the current Check test when out of
 * memory. */
void vcase_reference(const struct vcase *c, struct ref_stages *r);

/* A case with a dO in [-1, 1) drawn from its own seed, so that the
 * case's inputs are vcase_make's (or vcase_make_large's): for the
 * backward pass. */
struct gcase {
	struct vcase c;
	struct attn_matrix d_out;	/* B*T x H*d_v */
	struct attn_inputs in;		/* views of c, and d_out */
};

void gcase_make(struct gcase *g, uint64_t seed);
void gcase_make_large(struct gcase *g, uint64_t seed);
void gcase_free(struct gcase *g);

#endif
