/*
 * split.c - a run's tasks shared among several processes (attn-mpi,
 * attn_split in attn_private.h): which process computes which.  The
 * kernels ask attn_split_task_mine and attn_split_pair_mine before a
 * task and skip those of other processes, leaving their rows zero;
 * attn_run_split (lib/run.c) has the shares merged after the kernel.
 */
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

/* The row after the task that starts at row i, of a head's tasks in
 * order, which follow one another: the streaming kernel's
 * (ATTN_TASK_ROWS, within each packed sequence, *s the one reached) or
 * the emulation's (ATTN_EMULATE_LANES). */
static size_t
task_end(const struct attn_split_shape *sh, size_t *s, size_t i)
{
	const int stream = sh->prec == ATTN_PREC_FP64;
	const size_t each = stream ? ATTN_TASK_ROWS : ATTN_EMULATE_LANES;
	const struct attn_varlen *vl = sh->varlen;
	size_t end = sh->T;

	if (stream && vl != NULL && vl->seqs > 0) {
		while (*s + 1 < vl->seqs && vl->cu_q[*s + 1] <= i)
			(*s)++;
		end = vl->cu_q[*s + 1];
	}
	return end - i < each ? end : i + each;
}

void
attn_split_rows(const struct attn_split_shape *sh, size_t ranks,
    size_t rank, void (*each)(void *arg, size_t n, size_t i0, size_t rows),
    void *arg)
{
	const size_t tasks = sh->prec == ATTN_PREC_FP64 ?
	    attn_stream_tasks(sh->varlen, sh->T, NULL) :
	    (sh->T + ATTN_EMULATE_LANES - 1) / ATTN_EMULATE_LANES;
	size_t n, k, s, i, next, run0 = 0, run1 = 0;

	for (n = 0; n < sh->B * sh->H; n++) {
		if (sh->pairs) {
			/* every row of the heads of this process's pairs */
			if (attn_split_pair_owner(ranks, n / sh->H * sh->G +
			    n % sh->H / (sh->H / sh->G)) == rank)
				each(arg, n, 0, sh->T);
			continue;
		}
		/* this process's tasks, a run of rows each where they follow
		 * one another (run0 to run1; none open when equal) */
		run0 = run1 = 0;
		for (k = 0, i = 0, s = 0; k < tasks; k++, i = next) {
			next = task_end(sh, &s, i);
			if (attn_split_task_owner(ranks, n, k, tasks) != rank)
				continue;
			if (run1 > run0 && run1 == i) {
				run1 = next;
				continue;
			}
			if (run1 > run0)
				each(arg, n, run0, run1 - run0);
			run0 = i;
			run1 = next;
		}
		if (run1 > run0)
			each(arg, n, run0, run1 - run0);
	}
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
