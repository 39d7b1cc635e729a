/*
 * threads.c - a pool of POSIX threads that share out numbered tasks, and
 * how many CPUs this process may use.
 *
 * Tasks go out in increasing order from one atomic counter: which thread
 * runs a task never changes what the task computes (the kernels make
 * sure of that by giving each task its own rows), so results do not
 * depend on the thread count.  A thread that cannot be started is done
 * without, since the caller's thread runs tasks too.
 *
 * A worker charges its allocations to the memory account of the thread
 * that started it.
 *
 * The CPU count is the online CPUs, narrowed by the affinity mask
 * (taskset, cpusets) and by a cgroup CPU quota (containers, systemd's
 * CPUQuota), rounded up: more threads than that only take turns.
 */
#define _GNU_SOURCE	/* sched_getaffinity, CPU_COUNT */
#include <limits.h>	/* PTHREAD_STACK_MIN */
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "internal.h"

/* ---------------------------------------------------------------- pool */

struct pool {
	const struct attn_pool_job *job;
	struct attn_memory *account;	/* the caller's, for its workers */
	atomic_size_t next;		/* the next task to hand out */
	pthread_mutex_t lock;		/* guards done and progress calls */
	size_t done;
};

struct worker {
	struct pool *pool;
	size_t index;
	pthread_t thread;
};

static void
pool_work(struct pool *pl, size_t index)
{
	const struct attn_pool_job *job = pl->job;
	size_t t;

	while ((t = atomic_fetch_add(&pl->next, 1)) < job->tasks) {
		if (job->stop != NULL && job->stop(job->ctx, t))
			continue;
		job->task(job->ctx, index, t);
		if (job->progress != NULL) {
			pthread_mutex_lock(&pl->lock);
			pl->done++;
			job->progress(job->progress_arg, job->what, pl->done,
			    job->tasks);
			pthread_mutex_unlock(&pl->lock);
		}
	}
}

static void *
worker_main(void *arg)
{
	struct worker *w = arg;

	attn_memory_use(w->pool->account);
	pool_work(w->pool, w->index);
	return NULL;
}

void
attn_progress_block(const struct attn_problem *p, const char *what,
    size_t n)
{
	if (p->cfg->progress != NULL)
		p->cfg->progress(p->cfg->progress_arg, what, n + 1,
		    p->B * p->H);
}

void
attn_pool_run(const struct attn_pool_job *job)
{
	const size_t least = (size_t)PTHREAD_STACK_MIN;
	struct worker *w = NULL;
	pthread_attr_t attr;
	struct pool pl;
	size_t n = job->threads < job->tasks ? job->threads : job->tasks;
	size_t i, started = 0;

	pl.job = job;
	pl.account = attn_memory_current();
	atomic_init(&pl.next, 0);
	pthread_mutex_init(&pl.lock, NULL);
	pl.done = 0;
	pthread_attr_init(&attr);
	if (job->stack != 0)
		pthread_attr_setstacksize(&attr, job->stack < least ? least :
		    job->stack);
	if (n > 1 && (w = attn_mem_array(n, sizeof *w)) != NULL)
		for (i = 1; i < n; i++) {
			w[started].pool = &pl;
			w[started].index = i;
			if (pthread_create(&w[started].thread, &attr,
			    worker_main, &w[started]) != 0)
				break;
			started++;
		}
	pthread_attr_destroy(&attr);
	pool_work(&pl, 0);
	for (i = 0; i < started; i++)
		pthread_join(w[i].thread, NULL);
	attn_mem_free(w, n * sizeof *w);
	pthread_mutex_destroy(&pl.lock);
}

/* ---------------------------------------------------------------- CPUs */

size_t
attn_cgroup_cpus(const char *quota, const char *period)
{
	char *end;
	double q, t, n;

	/* "max" (v2) or -1 (v1) is no quota; so is anything unreadable. */
	q = strtod(quota, &end);
	if (end == quota)
		return 0;
	t = strtod(period, &end);
	if (end == period || !(q > 0.0) || !(t > 0.0) || q / t > 1e6)
		return 0;
	n = q / t;
	return (size_t)n + (n > (double)(size_t)n);
}

/* The first line of a small file, NUL-terminated, or NULL. */
static char *
read_line(const char *path, char *buf, size_t size)
{
	FILE *f = fopen(path, "r");
	char *s;

	if (f == NULL)
		return NULL;
	s = fgets(buf, (int)size, f);
	fclose(f);
	return s;
}

/* This process's cgroup quota in CPUs, or 0 when it has none. */
static size_t
cgroup_limit(void)
{
	char line[512], path[1024], a[128], b[128];
	char *rel, *end, *sp;
	size_t n, best = 0;

	/* v2: "0::/some/group"; the limit of a group is the least along
	 * its path, so look at each ancestor. */
	if (read_line("/proc/self/cgroup", line, sizeof line) != NULL &&
	    strncmp(line, "0::", 3) == 0) {
		rel = line + 3;
		rel[strcspn(rel, "\n")] = '\0';
		for (;;) {
			snprintf(path, sizeof path, "/sys/fs/cgroup%s/cpu.max",
			    strcmp(rel, "/") == 0 ? "" : rel);
			/* cpu.max is "QUOTA PERIOD". */
			if (read_line(path, a, sizeof a) != NULL &&
			    (sp = strchr(a, ' ')) != NULL &&
			    (n = attn_cgroup_cpus(a, sp + 1)) != 0 &&
			    (best == 0 || n < best))
				best = n;
			if ((end = strrchr(rel, '/')) == NULL || end == rel)
				break;
			*end = '\0';
		}
		return best;
	}
	/* v1, where the cpu controller is usually mounted. */
	if (read_line("/sys/fs/cgroup/cpu/cpu.cfs_quota_us", a,
	    sizeof a) != NULL &&
	    read_line("/sys/fs/cgroup/cpu/cpu.cfs_period_us", b,
	    sizeof b) != NULL)
		return attn_cgroup_cpus(a, b);
	return 0;
}

size_t
attn_cpu_count(void)
{
	long online = sysconf(_SC_NPROCESSORS_ONLN);
	size_t n = online > 0 ? (size_t)online : 1, quota;
	cpu_set_t set;

	CPU_ZERO(&set);
	if (sched_getaffinity(0, sizeof set, &set) == 0 && CPU_COUNT(&set) > 0 &&
	    (size_t)CPU_COUNT(&set) < n)
		n = (size_t)CPU_COUNT(&set);
	if ((quota = cgroup_limit()) != 0 && quota < n)
		n = quota;
	return n;
}
