/*
 * check_threads.c - the pool of lib/threads.c: its threads are kept from
 * job to job, a task may run a job of its own and every task of both
 * runs once with no worker index on two threads at a time, the kept
 * threads leave asynchronous signals to the program's own, a child of
 * fork() starts threads of its own, and jobs in a row start no more
 * threads than one of them needs.
 */
#define _GNU_SOURCE	/* sched_setaffinity, sched_getcpu */
#include <dirent.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "internal.h"
#include "suites.h"

/* The threads of this process, from /proc/self/task; 0 when unreadable. */
static size_t
thread_count(void)
{
	DIR *d = opendir("/proc/self/task");
	struct dirent *e;
	size_t n = 0;

	if (d == NULL)
		return 0;
	while ((e = readdir(d)) != NULL)
		n += e->d_name[0] != '.';
	closedir(d);
	return n;
}

static void
nap(long ns)
{
	struct timespec t = { 0, ns };

	nanosleep(&t, NULL);
}

#define WORKERS 3
#define OUTER 6
#define INNER 200

struct nest {
	atomic_int ran[OUTER][INNER];
	atomic_int busy[OUTER + 1][WORKERS];	/* [OUTER]: the outer job's */
	atomic_int overlap;
	atomic_int helped;			/* a task ran on worker > 0 */
};

/* The worker index w of job j is in use: no other thread may have it. */
static void
occupy(struct nest *n, size_t j, size_t w)
{
	if (atomic_exchange(&n->busy[j][w], 1) != 0)
		atomic_store(&n->overlap, 1);
	if (w > 0)
		atomic_store(&n->helped, 1);
}

struct inner_ctx {
	struct nest *n;
	size_t outer;
};

static void
inner_task(void *ctx, size_t worker, size_t t)
{
	struct inner_ctx *c = ctx;

	occupy(c->n, c->outer, worker);
	atomic_fetch_add(&c->n->ran[c->outer][t], 1);
	atomic_store(&c->n->busy[c->outer][worker], 0);
}

static void
outer_task(void *ctx, size_t worker, size_t t)
{
	struct nest *n = ctx;
	struct inner_ctx c = { n, t };
	struct attn_pool_job job;

	occupy(n, OUTER, worker);
	memset(&job, 0, sizeof job);
	job.tasks = INNER;
	job.threads = WORKERS;
	job.task = inner_task;
	job.ctx = &c;
	job.stack = 64u << 10;
	attn_pool_run(&job);
	nap(1000000);
	atomic_store(&n->busy[OUTER][worker], 0);
}

/* Every task of a job and of the jobs its tasks run, once each. */
static void
run_nested(struct nest *n)
{
	struct attn_pool_job job;
	size_t i, j;

	memset(n, 0, sizeof *n);
	memset(&job, 0, sizeof job);
	job.tasks = OUTER;
	job.threads = WORKERS;
	job.task = outer_task;
	job.ctx = n;
	attn_pool_run(&job);
	for (i = 0; i < OUTER; i++)
		for (j = 0; j < INNER; j++)
			ck_assert_int_eq(atomic_load(&n->ran[i][j]), 1);
	ck_assert_int_eq(atomic_load(&n->overlap), 0);
}

START_TEST(nested_jobs_run_each_task_once)
{
	static struct nest n;
	int k;

	for (k = 0; k < 20; k++)
		run_nested(&n);
}
END_TEST

/*
 * A job's threads stay for the next ones and serve them.  How many a run
 * starts depends on timing: a job starts a helper for each seat that no
 * idle helper takes, and in a nested run the helpers may all be inside
 * other jobs when one is posted, so each of the 1 + OUTER jobs may start
 * WORKERS - 1.  That is the bound, whatever
 * the load; a pool that kept its threads but never reused them would
 * pass it after one run and pass it no longer after a few.
 */
START_TEST(the_pool_keeps_its_threads)
{
	static struct nest n;
	size_t before = thread_count(), most, first, later;
	int k;

	ck_assert_uint_gt(before, 0);
	most = before + (1 + OUTER) * (WORKERS - 1);
	run_nested(&n);
	first = thread_count();
	ck_assert_uint_gt(first, 1);
	ck_assert_uint_le(first, most);
	for (k = 0; k < 5; k++) {
		run_nested(&n);
		later = thread_count();
		ck_assert_uint_ge(later, first);
		ck_assert_uint_le(later, most);
	}
	ck_assert_int_eq(atomic_load(&n.helped), 1);
}
END_TEST

static volatile sig_atomic_t caught;

static void
on_usr1(int sig)
{
	(void)sig;
	caught++;
}

/* With SIGUSR1 blocked on this thread, a kill() of the process stays
 * pending: no kept thread takes it. */
START_TEST(kept_threads_leave_signals_to_the_programs_own)
{
	static struct nest n;
	struct sigaction sa, old;
	sigset_t set, prev, pending;

	run_nested(&n);		/* threads kept, waiting */
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_usr1;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGUSR1, &sa, &old);
	sigemptyset(&set);
	sigaddset(&set, SIGUSR1);
	pthread_sigmask(SIG_BLOCK, &set, &prev);
	caught = 0;
	kill(getpid(), SIGUSR1);
	nap(50000000);
	ck_assert_int_eq(caught, 0);
	ck_assert_int_eq(sigpending(&pending), 0);
	ck_assert(sigismember(&pending, SIGUSR1));
	pthread_sigmask(SIG_SETMASK, &prev, NULL);
	ck_assert_int_eq(caught, 1);
	sigaction(SIGUSR1, &old, NULL);
}
END_TEST

/* A child of fork() has none of its parent's threads: it starts its
 * own, and its jobs still run on several. */
START_TEST(a_child_of_fork_starts_threads_of_its_own)
{
	static struct nest n;
	int status;
	pid_t pid;

	run_nested(&n);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		memset(&n, 0, sizeof n);
		run_nested(&n);
		_exit(atomic_load(&n.helped) == 1 ? 0 : 3);
	}
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	ck_assert(WIFEXITED(status));
	ck_assert_int_eq(WEXITSTATUS(status), 0);
}
END_TEST

static void
count_task(void *ctx, size_t worker, size_t t)
{
	(void)worker, (void)t;
	atomic_fetch_add((atomic_int *)ctx, 1);
}

/*
 * Jobs one after the other start no more helpers than one job's seats,
 * however slowly the scheduler runs a helper just started: a child of
 * fork (no helpers yet) pinned to one CPU, where a new thread runs only
 * once the caller's time slice ends, runs JOBS quick jobs in a row and
 * then has at most WORKERS - 1 threads besides its own.  Were a helper
 * not yet run counted as busy, each job would start helpers of its own.
 */
#define JOBS 50

START_TEST(jobs_in_a_row_start_no_more_helpers_than_seats)
{
	int status;
	pid_t pid;

	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		struct attn_pool_job job;
		atomic_int ran = 0;
		cpu_set_t one, mine;
		size_t c;
		int k;

		/* the first CPU this process may use */
		if (sched_getaffinity(0, sizeof mine, &mine) != 0)
			_exit(2);
		for (c = 0; c < CPU_SETSIZE && !CPU_ISSET(c, &mine); c++)
			;
		CPU_ZERO(&one);
		CPU_SET(c, &one);
		if (sched_setaffinity(0, sizeof one, &one) != 0)
			_exit(2);
		memset(&job, 0, sizeof job);
		job.tasks = WORKERS;
		job.threads = WORKERS;
		job.task = count_task;
		job.ctx = &ran;
		for (k = 0; k < JOBS; k++)
			attn_pool_run(&job);
		if (atomic_load(&ran) != JOBS * WORKERS)
			_exit(3);
		_exit(thread_count() <= WORKERS ? 0 : 4);
	}
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	ck_assert(WIFEXITED(status));
	ck_assert_int_eq(WEXITSTATUS(status), 0);
}
END_TEST

Suite *
threads_suite(void)
{
	Suite *s = suite_create("threads");
	TCase *tc = tcase_create("pool");

	tcase_add_test(tc, nested_jobs_run_each_task_once);
	tcase_add_test(tc, the_pool_keeps_its_threads);
	tcase_add_test(tc, kept_threads_leave_signals_to_the_programs_own);
	tcase_add_test(tc, a_child_of_fork_starts_threads_of_its_own);
	/* four times: a helper the scheduler happens to run at once
	 * would let the pool of the fault pass once */
	tcase_add_loop_test(tc, jobs_in_a_row_start_no_more_helpers_than_seats,
	    0, 4);
	suite_add_tcase(s, tc);
	return s;
}
