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
 * process's pair costs about 2R-1), the whole shifted by the head, so
 * that heads of fewer than 2R tasks go round the processes too. */
size_t
attn_split_task_owner(size_t ranks, size_t n, size_t k, size_t tasks)
{
	const size_t runs = 2 * ranks;
	size_t run = k <= SIZE_MAX / runs ? k * runs / tasks :
	    (size_t)((double)k / (double)tasks * (double)runs);
	size_t r;

	run = run < runs ? run : runs - 1;
	r = run < ranks ? run : runs - 1 - run;

	return (r + n % ranks) % ranks;
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
