/*
 * split.c - a run's tasks shared among several processes (attn-mpi,
 * attn_split in attn_private.h): which process computes which.  The
 * kernels ask attn_split_task_mine and attn_split_pair_mine before a
 * task and skip those of other processes, leaving their rows zero;
 * attn_run_split (lib/run.c) has the shares merged after the kernel.
 */
#include <stdlib.h>

#include "internal.h"

/* Forward: the tasks of a head in 2R runs, process r taking runs r and
 * 2R-1-r (under a causal mask run i's rows cost about i, so every
 * process's pair costs about 2R-1).  A head of fewer than 2R tasks has
 * empty runs: its first is then shifted by the head, so that such heads
 * go round the processes.  A longer head is not shifted, so that a
 * process computes the same rows of every head and reads no other rows
 * of Q (attn_split_rows); its runs differ by a task at most. */
size_t
attn_split_task_owner(size_t ranks, size_t n, size_t k, size_t tasks)
{
	const size_t runs = 2 * ranks;
	size_t run = k <= SIZE_MAX / runs ? k * runs / tasks :
	    (size_t)((double)k / (double)tasks * (double)runs);
	size_t r;

	run = run < runs ? run : runs - 1;
	r = run < ranks ? run : runs - 1 - run;

	return tasks < runs ? (r + n % ranks) % ranks : r;
}

size_t
attn_stream_tasks(const struct attn_varlen *vl, size_t T, size_t *rows)
{
	size_t s, i, n = 0;

	if (vl == NULL || vl->seqs == 0)
		return (T + ATTN_TASK_ROWS - 1) / ATTN_TASK_ROWS;
	for (s = 0; s < vl->seqs; s++) {
		const size_t q1 = vl->cu_q[s + 1];

		if (rows == NULL) {
			n += (q1 - vl->cu_q[s] + ATTN_TASK_ROWS - 1) /
			    ATTN_TASK_ROWS;
			continue;
		}
		for (i = vl->cu_q[s]; i < q1; i += ATTN_TASK_ROWS, n++) {
			rows[2 * n] = i;
			rows[2 * n + 1] = q1 - i < ATTN_TASK_ROWS ? q1 - i :
			    ATTN_TASK_ROWS;
		}
	}
	return n;
}

/* Whether the stages the kernel needs for want (attn_problem_init's
 * p->need, lse held always) hold a backward one. */
int
attn_split_pairs(unsigned want)
{
	return (attn_stage_closure((attn_kernel_want(want) &
	    ATTN_STAGES_EVERY) | ATTN_STAGE_BIT(ATTN_STAGE_LSE)) &
	    ATTN_STAGES_GRAD) != 0;
}

/* Task k's first row into *i0 and its rows into *rows, of a head's
 * tasks: the streaming kernel's (table, packed; else ATTN_TASK_ROWS
 * each) or the emulation's (ATTN_EMULATE_LANES each). */
static void
task_rows(const struct attn_split_shape *sh, const size_t *table,
    size_t k, size_t *i0, size_t *rows)
{
	const size_t each = sh->prec == ATTN_PREC_FP64 ? ATTN_TASK_ROWS :
	    ATTN_EMULATE_LANES;

	if (table != NULL) {
		*i0 = table[2 * k];
		*rows = table[2 * k + 1];
		return;
	}
	*i0 = k * each;
	*rows = sh->T - *i0 < each ? sh->T - *i0 : each;
}

enum attn_status
attn_split_rows(const struct attn_split_shape *sh, size_t ranks,
    size_t rank, void (*each)(void *arg, size_t n, size_t i0, size_t rows),
    void *arg, struct attn_error *err)
{
	const int stream = sh->prec == ATTN_PREC_FP64;
	const int packed = stream && sh->varlen != NULL &&
	    sh->varlen->seqs > 0;
	const size_t tasks = stream ? attn_stream_tasks(sh->varlen, sh->T,
	    NULL) : (sh->T + ATTN_EMULATE_LANES - 1) / ATTN_EMULATE_LANES;
	size_t n, k, first, i0, rows, end, *table = NULL;

	if (packed && (table = attn_alloc_array(tasks, 2 * sizeof *table)) ==
	    NULL)
		return attn_error_nomem(err, NULL, "listing the tasks");
	if (packed)
		(void)attn_stream_tasks(sh->varlen, sh->T, table);
	for (n = 0; n < sh->B * sh->H; n++) {
		if (attn_split_pairs(sh->want)) {
			/* every row of the heads of this process's pairs */
			if (attn_split_pair_owner(ranks, n / sh->H * sh->G +
			    n % sh->H / (sh->H / sh->G)) == rank)
				each(arg, n, 0, sh->T);
			continue;
		}
		/* the runs of this process's tasks, a run of rows each where
		 * they follow one another */
		for (k = 0; k < tasks;) {
			if (attn_split_task_owner(ranks, n, k, tasks) != rank) {
				k++;
				continue;
			}
			task_rows(sh, table, k, &first, &rows);
			end = first + rows;
			for (k++; k < tasks && attn_split_task_owner(ranks, n, k,
			    tasks) == rank; k++) {
				task_rows(sh, table, k, &i0, &rows);
				if (i0 != end)
					break;
				end += rows;
			}
			each(arg, n, first, end - first);
		}
	}
	free(table);
	return ATTN_OK;
}

/* Backward: the (batch, KV head) pairs cost alike, so round the
 * processes. */
size_t
attn_split_pair_owner(size_t ranks, size_t u)
{
	return u % ranks;
}

int
attn_split_pair_mine(const struct attn_problem *p, size_t b, size_t g)
{
	return p->split == NULL || attn_split_pair_owner(p->split->ranks,
	    b * p->G + g) == p->split->rank;
}

int
attn_split_task_mine(const struct attn_problem *p, size_t n, size_t k,
    size_t tasks)
{
	if (p->split == NULL)
		return 1;
	if (p->need & ATTN_STAGES_GRAD)
		return attn_split_pair_mine(p, n / p->H,
		    n % p->H / (p->H / p->G));
	return attn_split_task_owner(p->split->ranks, n, k, tasks) ==
	    p->split->rank;
}
