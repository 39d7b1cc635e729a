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

/* Whether a run of want shares (batch, KV head) pairs: whether the
 * stages its kernel needs (attn_problem_init's p->need, lse held
 * always) hold a backward one. */
static int
shares_pairs(unsigned want)
{
	return (attn_stage_closure((attn_kernel_want(want) &
	    ATTN_STAGES_EVERY) | ATTN_STAGE_BIT(ATTN_STAGE_LSE)) &
	    ATTN_STAGES_GRAD) != 0;
}

void
attn_split_rows(size_t ranks, size_t rank, unsigned want, size_t B,
    size_t H, size_t G, size_t T, void (*each)(void *arg, size_t n,
    size_t i0, size_t rows), void *arg)
{
	const size_t tasks = (T + ATTN_TASK_ROWS - 1) / ATTN_TASK_ROWS;
	size_t n, k, first, end;

	for (n = 0; n < B * H; n++) {
		if (shares_pairs(want)) {
			/* every row of the heads of this process's pairs */
			if (attn_split_pair_owner(ranks, n / H * G + n % H /
			    (H / G)) == rank)
				each(arg, n, 0, T);
			continue;
		}
		for (k = 0; k < tasks;) {
			if (attn_split_task_owner(ranks, n, k, tasks) != rank) {
				k++;
				continue;
			}
			for (first = k; k < tasks && attn_split_task_owner(ranks,
			    n, k, tasks) == rank; k++)
				;
			end = k * ATTN_TASK_ROWS < T ? k * ATTN_TASK_ROWS : T;
			each(arg, n, first * ATTN_TASK_ROWS,
			    end - first * ATTN_TASK_ROWS);
		}
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
