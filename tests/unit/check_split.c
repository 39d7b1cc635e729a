/*
 * check_split.c - a run shared among processes (attn_split,
 * lib/split.c): every task has one owner among the ranks, the forward
 * pass's shares cost alike under a causal mask, and the shares of R
 * processes, merged, are attn_run's bytes for every stage, forward and
 * backward, in double precision and emulated bf16; the passes before
 * the kernel make a process's rows of q alone.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "ref.h"
#include "suites.h"
#include "testutil.h"
#include "vcase.h"

#define MAX_RANKS 5

/* Each task of each head has one owner among the ranks, and with at
 * least 2R tasks a head every rank owns some. */
START_TEST(every_task_has_one_owner)
{
	size_t ranks, tasks, n, k;

	for (ranks = 1; ranks <= MAX_RANKS; ranks++)
		for (tasks = 1; tasks <= 64; tasks++)
			for (n = 0; n < 7; n++) {
				size_t count[MAX_RANKS] = { 0 }, r;

				for (k = 0; k < tasks; k++) {
					r = attn_split_task_owner(ranks, n, k,
					    tasks);
					ck_assert_uint_lt(r, ranks);
					count[r]++;
				}
				for (r = 0; tasks >= 2 * ranks && r < ranks;
				    r++)
					ck_assert_msg(count[r] > 0, "rank %zu "
					    "of %zu owns none of %zu tasks", r,
					    ranks, tasks);
			}
	for (ranks = 1; ranks <= MAX_RANKS; ranks++)
		for (k = 0; k < 40; k++)
			ck_assert_uint_eq(attn_split_pair_owner(ranks, k),
			    k % ranks);
}
END_TEST

/* Under a causal mask task k of a head costs about k + 1 key blocks:
 * each rank's cost is within 10% of the mean (plus a task's, when the
 * tasks do not fall evenly into 2R runs). */
START_TEST(causal_shares_cost_alike)
{
	size_t ranks, tasks, k, r;

	for (ranks = 1; ranks <= MAX_RANKS; ranks++)
		for (tasks = 4 * ranks; tasks <= 400; tasks += 7) {
			double cost[MAX_RANKS] = { 0 }, total = 0, mean;

			for (k = 0; k < tasks; k++) {
				cost[attn_split_task_owner(ranks, 0, k,
				    tasks)] += (double)(k + 1);
				total += (double)(k + 1);
			}
			mean = total / (double)ranks;
			for (r = 0; r < ranks; r++)
				ck_assert_msg(cost[r] <= 1.1 * mean +
				    (double)tasks, "rank %zu of %zu: %g, "
				    "mean %g, %zu tasks", r, ranks, cost[r],
				    mean, tasks);
		}
}
END_TEST

/* The rows of Q a process reads (attn_split_rows) are those of the
 * tasks it owns, each row of each head read by one process; a head of at
 * least 2R tasks has the same rows read in every head, so that a process
 * reads no other rows of a stack whose rows hold every head.  With a
 * backward stage, or grad_bias (reduced from one), they are every row of
 * the heads of its (batch, KV head) pairs; the emulation's tasks are of
 * 16 rows, and packed sequences have tasks of their own. */
struct rows_seen {
	size_t heads, T, rank, ranks;
	unsigned char *seen;	/* heads x T, the rank + 1 that read it */
	size_t calls, last_n, last_end;
};

static void
rows_each(void *arg, size_t n, size_t i0, size_t rows)
{
	struct rows_seen *rs = arg;
	size_t i;

	ck_assert_uint_lt(n, rs->heads);
	ck_assert_uint_gt(rows, 0);
	ck_assert_uint_le(i0 + rows, rs->T);
	/* in order, runs apart (a run is as long as it can be) */
	ck_assert(rs->calls == 0 || n > rs->last_n || i0 > rs->last_end);
	for (i = i0; i < i0 + rows; i++) {
		ck_assert_uint_eq(rs->seen[n * rs->T + i], 0);
		rs->seen[n * rs->T + i] = (unsigned char)(rs->rank + 1);
	}
	rs->calls++;
	rs->last_n = n;
	rs->last_end = i0 + rows;
}

/* The task of row i of a head and the head's tasks, as the kernel of
 * case c cuts them: the streaming kernel's 144 rows, within each packed
 * sequence (cu, seqs), or the emulation's 16. */
static size_t
task_of(int c, size_t i, size_t T, const size_t *cu, size_t seqs,
    size_t *tasks)
{
	size_t s, k = 0, at = 0;

	if (c == 3) {
		*tasks = (T + 15) / 16;
		return i / 16;
	}
	if (c != 4) {
		*tasks = (T + 143) / 144;
		return i / 144;
	}
	for (s = 0; s < seqs; s++) {
		const size_t n = (cu[s + 1] - cu[s] + 143) / 144;

		if (i >= cu[s] && i < cu[s + 1])
			at = k + (i - cu[s]) / 144;
		k += n;
	}
	*tasks = k;
	return at;
}

START_TEST(each_process_reads_the_rows_of_its_tasks)
{
	static const size_t Ts[] = { 1, 143, 144, 145, 300, 1200, 5000 };
	/* output; grad_q; grad_bias (reduced from one); the emulation's
	 * output; output of three packed sequences */
	static const unsigned wants[5] = {
		ATTN_STAGE_BIT(ATTN_STAGE_OUTPUT),
		ATTN_STAGE_BIT(ATTN_STAGE_GRAD_Q),
		ATTN_STAGE_BIT(ATTN_STAGE_GRAD_BIAS),
		ATTN_STAGE_BIT(ATTN_STAGE_OUTPUT),
		ATTN_STAGE_BIT(ATTN_STAGE_OUTPUT),
	};
	const size_t B = _i == 4 ? 1 : 2, H = 6, G = 3, heads = B * H;
	size_t ranks, t, n, i, k, tasks;

	for (ranks = 1; ranks <= MAX_RANKS; ranks++)
		for (t = 0; t < sizeof Ts / sizeof Ts[0]; t++) {
			const size_t T = Ts[t];
			/* three sequences: a third, one row, the rest */
			const size_t cu[4] = { 0, T / 3, T / 3 + (T > 1),
			    T };
			struct attn_varlen vl;
			struct attn_split_shape sh;
			struct rows_seen rs = { heads, T, 0, ranks, NULL, 0, 0,
			    0 };

			memset(&vl, 0, sizeof vl);
			vl.seqs = _i == 4 ? 3 : 0;
			vl.cu_q = cu;
			sh.pairs = attn_split_pairs(wants[_i]);
			sh.prec = _i == 3 ? ATTN_PREC_BF16 : ATTN_PREC_FP64;
			sh.B = B;
			sh.H = H;
			sh.G = G;
			sh.T = T;
			sh.varlen = &vl;
			rs.seen = calloc(heads * T, 1);
			ck_assert_ptr_nonnull(rs.seen);
			for (rs.rank = 0; rs.rank < ranks; rs.rank++) {
				rs.calls = 0;
				attn_split_rows(&sh, ranks, rs.rank, rows_each,
				    &rs);
			}
			for (n = 0; n < heads; n++)
				for (i = 0; i < T; i++) {
					k = task_of(_i, i, T, cu, 3, &tasks);
					ck_assert_uint_eq(rs.seen[n * T + i],
					    (_i == 1 || _i == 2 ?
					    attn_split_pair_owner(ranks, n / H *
					    G + n % H / (H / G)) :
					    attn_split_task_owner(ranks, n, k,
					    tasks)) + 1);
					if (_i == 0 && tasks >= 2 * ranks)
						ck_assert_uint_eq(rs.seen[n *
						    T + i], rs.seen[i]);
				}
			free(rs.seen);
		}
}
END_TEST

/* The shares of ranks processes, run one after the other in this one:
 * first each run keeps a copy of its share and stops, then a last run
 * merges them all (as attn-mpi's merge does over MPI, by bits). */
struct shares {
	size_t ranks, rank;
	int merging;
	double *stage[MAX_RANKS][ATTN_STAGE_COUNT];
	double *sums[MAX_RANKS];
	size_t lse_bytes;	/* of each share's lse */
};

static size_t
count_of(const struct attn_matrix *m)
{
	return m->data == NULL ? 0 : m->rows * m->cols;
}

/* m's elements |= those of x (n of them), bit by bit. */
static void
or_into(struct attn_matrix *m, const double *x)
{
	size_t i, n = count_of(m);

	for (i = 0; i < n; i++) {
		uint64_t a, b;

		memcpy(&a, &m->data[i], sizeof a);
		memcpy(&b, &x[i], sizeof b);
		a |= b;
		memcpy(&m->data[i], &a, sizeof a);
	}
}

static double *
copy_of(const struct attn_matrix *m)
{
	double *x = malloc(count_of(m) * sizeof *x + 1);

	ck_assert_ptr_nonnull(x);
	if (count_of(m) > 0)
		memcpy(x, m->data, count_of(m) * sizeof *x);
	return x;
}

static enum attn_status
merge_shares(void *arg, enum attn_status st, struct attn_stages *out,
    struct attn_matrix *sums, struct attn_error *err)
{
	struct shares *sh = arg;
	size_t s, r;

	ck_assert_int_eq(st, ATTN_OK);
	if (!sh->merging) {
		for (s = 0; s < ATTN_STAGE_COUNT; s++)
			sh->stage[sh->rank][s] = copy_of(&out->stage[s]);
		sh->sums[sh->rank] = copy_of(sums);
		sh->lse_bytes = count_of(&out->stage[ATTN_STAGE_LSE]) *
		    sizeof(double);
		return attn_error_set(err, ATTN_ERR_INTERNAL, NULL, 0, 0,
		    "share kept");
	}
	for (r = 0; r < sh->ranks; r++) {
		if (r == sh->rank)
			continue;
		for (s = 0; s < ATTN_STAGE_COUNT; s++)
			or_into(&out->stage[s], sh->stage[r][s]);
		or_into(sums, sh->sums[r]);
	}
	return ATTN_OK;
}

/* attn_run_split by ranks processes, merged, into *st. */
static void
run_shared(const struct attn_config *cfg, const struct attn_inputs *in,
    unsigned want, enum attn_precision prec, size_t ranks,
    struct attn_stages *st)
{
	struct shares sh;
	struct attn_split split;
	struct attn_error err;
	size_t r, s;

	memset(&sh, 0, sizeof sh);
	memset(&err, 0, sizeof err);
	sh.ranks = ranks;
	split.ranks = ranks;
	split.merge = merge_shares;
	split.arg = &sh;
	for (r = 0; r < ranks; r++) {
		split.rank = sh.rank = r;
		ck_assert_int_eq(attn_run_split(cfg, in, want, prec, &split,
		    st, &err), ATTN_ERR_INTERNAL);
	}
	/* each process computed its share, not the whole: a kernel that
	 * ignored the split would merge to the same bytes */
	if (ranks > 1)
		ck_assert_msg(memcmp(sh.stage[0][ATTN_STAGE_LSE],
		    sh.stage[1][ATTN_STAGE_LSE], sh.lse_bytes) != 0,
		    "ranks 0 and 1 of %zu computed the same lse", ranks);
	sh.merging = 1;
	split.rank = sh.rank = ranks - 1;
	ck_assert_msg(attn_run_split(cfg, in, want, prec, &split, st, &err) ==
	    ATTN_OK, "%s", err.msg);
	for (r = 0; r < ranks; r++) {
		for (s = 0; s < ATTN_STAGE_COUNT; s++)
			free(sh.stage[r][s]);
		free(sh.sums[r]);
	}
}

#ifdef UNDER_ASAN
#define SPLIT_CASES 3	/* suites.h says why */
#else
#define SPLIT_CASES 12
#endif
#define SPLIT_SEED 0x5B117000u

/* The merged shares of 1 to 4 processes are attn_run's bytes (or
 * attn_emulate's in bf16), forward alone and with the backward stages,
 * on large random cases of every variant (causal, windows, masks,
 * biases, sinks, GQA). */
START_TEST(merged_shares_are_the_whole_runs_bytes)
{
	const enum attn_precision precs[] = { ATTN_PREC_FP64,
	    ATTN_PREC_BF16 };
	struct gcase g;
	size_t ranks, i, grad;

	gcase_make_large(&g, SPLIT_SEED + (uint64_t)_i);
	for (grad = 0; grad < 2; grad++)
		for (i = 0; i < 2; i++) {
			const unsigned want = ATTN_STAGES_ALL |
			    (grad ? ATTN_STAGES_GRAD : 0);
			struct attn_inputs in = g.in;
			struct attn_config cfg = g.c.cfg;
			struct attn_stages whole, st;
			struct attn_error err;

			memset(&err, 0, sizeof err);
			cfg.threads = 2;
			if (!grad)
				memset(&in.d_out, 0, sizeof in.d_out);
			if (attn_run_split(&cfg, &in, want, precs[i], NULL,
			    &whole, &err) != ATTN_OK)
				continue;	/* an overflow: not shared */
			for (ranks = 1; ranks <= 4; ranks++) {
				run_shared(&cfg, &in, want, precs[i], ranks,
				    &st);
				expect_stage_bytes(g.c.what, grad ?
				    "backward" : "forward", want, &whole, &st);
				attn_stages_free(&st);
			}
			attn_stages_free(&whole);
		}
	gcase_free(&g);
}
END_TEST

/* A layer's XQ (2 batches of 900 rows, 7 tasks a head: 2R tasks or more
 * for R up to 3, shifted by the head at R = 4), projected to 4 heads of
 * 8 sharing 2 KV heads, descaled and rotated. */
struct passes_case {
	struct attn_config cfg;
	struct attn_inputs in;
	struct attn_matrix w_q, w_k, w_v, b_q, xq, xkv, f_q;
};

static void
passes_case_make(struct passes_case *c)
{
	struct ref_rng rng;

	ref_rng_seed(&rng, 0x5B11A000u);
	attn_config_init(&c->cfg);
	c->cfg.heads = 4;
	c->cfg.kv_heads = 2;
	c->cfg.rope = 1;
	c->cfg.causal = 1;
	c->cfg.threads = 2;
	memset(&c->in, 0, sizeof c->in);
	c->in.batches = 2;
	c->xq = matrix_random(&rng, 1800, 6, -1.0, 1.0);
	c->xkv = matrix_random(&rng, 2 * 300, 6, -1.0, 1.0);
	/* positive, so that rows of 1e308 overflow in every column */
	c->w_q = matrix_random(&rng, 6, 32, 0.5, 1.0);
	c->w_k = matrix_random(&rng, 6, 16, -1.0, 1.0);
	c->w_v = matrix_random(&rng, 6, 16, -1.0, 1.0);
	c->b_q = matrix_random(&rng, 1, 32, -1.0, 1.0);
	c->f_q = matrix_random(&rng, 2, 2, 0.5, 2.0);
	c->in.q = c->xq;
	c->in.k = c->xkv;
	c->in.v = c->xkv;
	c->in.proj.w_q = c->w_q;
	c->in.proj.w_k = c->w_k;
	c->in.proj.w_v = c->w_v;
	c->in.proj.b_q = c->b_q;
	c->in.descale_q = c->f_q;
}

static void
passes_case_free(struct passes_case *c)
{
	attn_matrix_free(&c->xq);
	attn_matrix_free(&c->xkv);
	attn_matrix_free(&c->w_q);
	attn_matrix_free(&c->w_k);
	attn_matrix_free(&c->w_v);
	attn_matrix_free(&c->b_q);
	attn_matrix_free(&c->f_q);
}

/* attn_split_rows' each: the rows of XQ (batch n / 4's) marked. */
static void
mark_rows(void *arg, size_t n, size_t i0, size_t rows)
{
	unsigned char *mine = arg;

	memset(mine + n / 4 * 900 + i0, 1, rows);
}

static enum attn_status
merge_status(void *arg, enum attn_status st, struct attn_stages *out,
    struct attn_matrix *sums, struct attn_error *err)
{
	(void)out;
	(void)sums;
	(void)err;
	*(enum attn_status *)arg = st;
	return st;
}

/* The passes before the kernel (XQ projected, descaled, rotated) make a
 * process's rows of q alone, from its rows of XQ: the merged shares are
 * the whole run's bytes, and a process runs with every other row of XQ
 * so large that projecting it would overflow.  On rank 0, q_rot asked
 * for is made whole. */
START_TEST(passes_make_a_process_rows_of_q)
{
	const unsigned want = ATTN_STAGE_BIT(ATTN_STAGE_OUTPUT) |
	    ATTN_STAGE_BIT(ATTN_STAGE_LSE);
	const unsigned wants[2] = { want, want |
	    ATTN_STAGE_BIT(ATTN_STAGE_Q_ROT) };
	struct passes_case c;
	struct attn_stages whole, st;
	struct attn_split_shape sh;
	struct attn_split split;
	struct attn_error err;
	enum attn_status merged;
	unsigned char mine[1800];
	size_t ranks, r, i, j, w;

	passes_case_make(&c);
	memset(&err, 0, sizeof err);
	for (w = 0; w < 2; w++) {
		ck_assert_msg(attn_run_split(&c.cfg, &c.in, wants[w],
		    ATTN_PREC_FP64, NULL, &whole, &err) == ATTN_OK, "%s",
		    err.msg);
		for (ranks = 2; ranks <= 4; ranks++) {
			run_shared(&c.cfg, &c.in, wants[w], ATTN_PREC_FP64,
			    ranks, &st);
			expect_stage_bytes("a layer, --descale-q, RoPE",
			    "shared", want, &whole, &st);
			attn_stages_free(&st);
		}
		attn_stages_free(&whole);
	}

	sh.pairs = attn_split_pairs(want);
	sh.prec = ATTN_PREC_FP64;
	sh.B = 2;
	sh.H = 4;
	sh.G = 2;
	sh.T = 900;
	sh.varlen = &c.in.varlen;
	split.ranks = 3;
	split.merge = merge_status;
	split.arg = &merged;
	for (r = 0; r < split.ranks; r++) {
		struct attn_matrix poisoned = c.xq;
		struct attn_inputs in = c.in;

		memset(mine, 0, sizeof mine);
		attn_split_rows(&sh, split.ranks, r, mark_rows, mine);
		poisoned.data = malloc(1800 * 6 * sizeof(double));
		ck_assert_ptr_nonnull(poisoned.data);
		for (i = 0; i < 1800; i++)
			for (j = 0; j < 6; j++)
				poisoned.data[i * 6 + j] = mine[i] ?
				    c.xq.data[i * 6 + j] : 1e308;
		in.q = poisoned;
		split.rank = r;
		merged = ATTN_ERR_INTERNAL;
		ck_assert_msg(attn_run_split(&c.cfg, &in, want,
		    ATTN_PREC_FP64, &split, &st, &err) == ATTN_OK,
		    "rank %zu of 3: %s", r, err.msg);
		ck_assert_int_eq(merged, ATTN_OK);
		attn_stages_free(&st);
		/* rank 0 makes q_rot whole: from every row */
		if (r == 0)
			ck_assert_int_eq(attn_run_split(&c.cfg, &in, wants[1],
			    ATTN_PREC_FP64, &split, &st, &err),
			    ATTN_ERR_DATA);
		free(poisoned.data);
	}
	passes_case_free(&c);
}
END_TEST

Suite *
split_suite(void)
{
	Suite *s = suite_create("split");
	TCase *tc = tcase_create("split");

	tcase_add_test(tc, every_task_has_one_owner);
	tcase_add_test(tc, causal_shares_cost_alike);
	tcase_add_loop_test(tc, each_process_reads_the_rows_of_its_tasks, 0,
	    5);
	tcase_add_loop_test(tc, merged_shares_are_the_whole_runs_bytes, 0,
	    SPLIT_CASES);
	tcase_add_test(tc, passes_make_a_process_rows_of_q);
	suite_add_tcase(s, tc);
	return s;
}
