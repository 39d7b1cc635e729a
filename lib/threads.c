/*
 * threads.c - a pool of POSIX threads that share out numbered tasks, and
 * how many CPUs this process may use.
 *
 * Tasks go out in increasing order from one atomic counter: which thread
 * runs a task never changes what the task computes (the kernels make
 * sure of that by giving each task its own rows), so results do not
 * depend on the thread count.  The threads are kept from job to job
 * (helpers, below); one that cannot be started is done without, since
 * the caller's thread runs tasks too.
 *
 * A worker charges its allocations to the memory account of the job's
 * caller.
 *
 * The CPU count is the online CPUs, narrowed by the affinity mask
 * (taskset, cpusets) and by a cgroup CPU quota (containers, systemd's
 * CPUQuota), rounded up: more threads than that only take turns.  It is
 * read once.
 */
#define _GNU_SOURCE	/* sched_getaffinity, CPU_COUNT */
#include <limits.h>	/* PTHREAD_STACK_MIN */
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "internal.h"

/* ---------------------------------------------------------------- pool */

/*
 * A job in progress.  Its tasks go out from one atomic counter; its seats
 * (worker indexes 1 .. seats) are taken by helpers under helpers.lock,
 * which also counts the helpers inside it, so that the caller returns
 * only when the last of them has left.
 */
struct pool {
	const struct attn_pool_job *job;
	struct attn_memory *account;	/* the caller's, for its workers */
	atomic_size_t next;		/* the next task to hand out */
	pthread_mutex_t lock;		/* guards done and progress calls */
	size_t done;
	/* under helpers.lock: */
	size_t stack;		/* what a helper needs; SIZE_MAX: default */
	size_t seats, seated, inside;	/* listed while seated < seats */
	struct pool *up;	/* the next open job */
	pthread_cond_t left;	/* the last helper inside has left */
};

/*
 * The helpers: threads started as jobs need them and kept for the life
 * of the process, since a small run has a dozen jobs (the three inputs
 * side by side, each file's chunks, the kernel, the output rows), and
 * starting and reaping threads for each would be a noticeable part of
 * it.  An idle helper waits for a job to be posted and takes a seat in
 * the newest open one its stack is large enough for.  Each keeps the
 * stack size of the job it was started for (0 in attn_pool_job: the
 * default, the largest), so that a job of small stacks (the readers')
 * does not map 8 MiB per thread.
 */
#define HELPERS_MOST 256

struct helper {
	size_t stack;		/* SIZE_MAX: the default */
	int idle;		/* waiting for a job */
};

static struct {
	pthread_mutex_t lock;
	pthread_cond_t posted;	/* a job has opened */
	struct pool *open;	/* jobs with seats left, newest first */
	struct helper all[HELPERS_MOST];
	size_t count;
} helpers = { PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, NULL,
	{ { 0, 0 } }, 0 };
static pthread_once_t helpers_once = PTHREAD_ONCE_INIT;

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

/* pl leaves helpers.open (under its lock). */
static void
unlist(struct pool *pl)
{
	struct pool **at;

	for (at = &helpers.open; *at != pl; at = &(*at)->up)
		;
	*at = pl->up;
}

static void *
helper_main(void *arg)
{
	struct helper *me = arg;
	struct pool *pl;
	size_t index;

	pthread_mutex_lock(&helpers.lock);
	for (;;) {
		for (pl = helpers.open; pl != NULL && pl->stack > me->stack;
		    pl = pl->up)
			;
		if (pl == NULL) {
			me->idle = 1;
			pthread_cond_wait(&helpers.posted, &helpers.lock);
			continue;
		}
		me->idle = 0;
		index = ++pl->seated;
		if (pl->seated == pl->seats)
			unlist(pl);
		pl->inside++;
		pthread_mutex_unlock(&helpers.lock);
		attn_memory_use(pl->account);
		pool_work(pl, index);
		attn_memory_use(NULL);
		pthread_mutex_lock(&helpers.lock);
		if (--pl->inside == 0)
			pthread_cond_signal(&pl->left);
	}
	return NULL;
}

/* A helper of `stack` bytes started (under helpers.lock), with the
 * signals that come from outside blocked: those a fault raises stay
 * open, since a blocked one kills the process unhandled.  -1 when it
 * could not be. */
static int
helper_start(size_t stack)
{
	static const int faults[] = {
		SIGBUS, SIGFPE, SIGILL, SIGSEGV, SIGTRAP, SIGSYS, SIGXFSZ
	};
	struct helper *h;
	pthread_attr_t attr;
	sigset_t block, old;
	pthread_t thread;
	size_t i;
	int rc;

	if (helpers.count == HELPERS_MOST)
		return -1;
	h = &helpers.all[helpers.count];
	h->stack = stack;
	/* Idle from the start: it looks for a job as soon as it runs.
	 * Counted as busy until then, a helper the scheduler is slow to
	 * run (a loaded machine) would have the next job start another,
	 * and the next another: more threads, and their stacks' address
	 * space, than any run needs. */
	h->idle = 1;
	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	if (stack != SIZE_MAX)
		pthread_attr_setstacksize(&attr, stack);
	sigfillset(&block);
	for (i = 0; i < sizeof faults / sizeof *faults; i++)
		sigdelset(&block, faults[i]);
	pthread_sigmask(SIG_BLOCK, &block, &old);
	rc = pthread_create(&thread, &attr, helper_main, h);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	pthread_attr_destroy(&attr);
	if (rc != 0)
		return -1;
	helpers.count++;
	return 0;
}

/* fork() copies only the thread that called it: the child's helpers are
 * none, and the lock is taken across the fork so that it is free and
 * the lists whole in both. */
static void
fork_prepare(void)
{
	pthread_mutex_lock(&helpers.lock);
}

static void
fork_parent(void)
{
	pthread_mutex_unlock(&helpers.lock);
}

static void
fork_child(void)
{
	helpers.open = NULL;
	helpers.count = 0;
	pthread_mutex_init(&helpers.lock, NULL);
	pthread_cond_init(&helpers.posted, NULL);
}

static void
helpers_init(void)
{
	pthread_atfork(fork_prepare, fork_parent, fork_child);
}

/* pl opens with `seats` seats for helpers, started for it where too
 * few idle ones have the stack it needs. */
static void
job_open(struct pool *pl, size_t seats)
{
	size_t i, fit = 0;

	pthread_once(&helpers_once, helpers_init);
	pthread_cond_init(&pl->left, NULL);
	pthread_mutex_lock(&helpers.lock);
	pl->seats = seats;
	pl->seated = pl->inside = 0;
	pl->up = helpers.open;
	helpers.open = pl;
	for (i = 0; i < helpers.count; i++)
		fit += helpers.all[i].idle && helpers.all[i].stack >= pl->stack;
	for (; fit < seats && helper_start(pl->stack) == 0; fit++)
		;
	pthread_cond_broadcast(&helpers.posted);
	pthread_mutex_unlock(&helpers.lock);
}

/* pl takes no more helpers (its seats are all taken), and those inside
 * have left. */
static void
job_close(struct pool *pl)
{
	pthread_mutex_lock(&helpers.lock);
	if (pl->seated < pl->seats) {
		unlist(pl);
		pl->seats = pl->seated;
	}
	while (pl->inside > 0)
		pthread_cond_wait(&pl->left, &helpers.lock);
	pthread_mutex_unlock(&helpers.lock);
	pthread_cond_destroy(&pl->left);
}

void
attn_pool_run(const struct attn_pool_job *job)
{
	const size_t least = (size_t)PTHREAD_STACK_MIN;
	struct pool pl;
	size_t n = job->threads < job->tasks ? job->threads : job->tasks;

	pl.job = job;
	pl.account = attn_memory_current();
	atomic_init(&pl.next, 0);
	pthread_mutex_init(&pl.lock, NULL);
	pl.done = 0;
	pl.stack = job->stack == 0 ? SIZE_MAX : job->stack < least ? least :
	    job->stack;
	if (n > 1)
		job_open(&pl, n - 1);
	pool_work(&pl, 0);
	if (n > 1)
		job_close(&pl);
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

static size_t cpus;
static pthread_once_t cpus_once = PTHREAD_ONCE_INIT;

static void
count_cpus(void)
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
	cpus = n;
}

size_t
attn_cpu_count(void)
{
	pthread_once(&cpus_once, count_cpus);
	return cpus;
}
