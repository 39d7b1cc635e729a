/*
 * peak.c - the limit the kernel's rates are measured against: the
 * multiply-adds a second this CPU does on all the threads given, for one
 * of the instruction sets attn's loops come in (lib/simd_*.c), counted
 * as 2 flops each as the kernel's are.
 *
 * Each thread runs the same loop of independent multiply-adds, acc =
 * acc * x + y for ACC accumulators, with nothing but the accumulators
 * in registers: enough chains that no multiply-add waits for the one
 * before it on any core that pipelines them (two units of four cycles'
 * latency need 8), and no loads.  x just below 1 and y small keep every
 * accumulator near 1, never subnormal or infinite.  The plain C loop is
 * fma() of <math.h> compiled as lib/simd_c.c is, which is what that
 * kernel's loops do at best.  The AVX2 and AVX-512 loops are built with
 * a function attribute, as lib/simd_avx2.c and lib/simd_avx512.c are.
 *
 * The number of iterations is doubled from a small one until a run on
 * one thread takes PEAK_SECONDS, then every thread runs that many, all
 * let go at once (so that whatever the cores share, a clock or a power
 * budget, is shared as the kernel shares it), and the rate of a run is
 * each thread's flops over its own CPU time, summed over the threads:
 * the processor's limit, which the other processes of a loaded machine
 * take turns with but do not lower, as they would a rate over the wall
 * clock.  The result is the median of `runs` such runs.
 */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <pthread.h>
#include <stdlib.h>

#include <time.h>

#include "peak.h"

#define PEAK_SECONDS 0.05
#define PEAK_RUNS_MAX 99
#define X 0.9999999
#define Y 1e-7

/* Each loop returns the sum of its accumulators, which the caller keeps,
 * so that the compiler cannot drop the work. */

#define C_ACC 8

static double
loop_c(unsigned long iters)
{
	double acc[C_ACC], s = 0.0;
	unsigned long i;
	int u;

	for (u = 0; u < C_ACC; u++)
		acc[u] = 1.0 + u * 1e-3;
	for (i = 0; i < iters; i++)
		for (u = 0; u < C_ACC; u++)
			acc[u] = fma(acc[u], X, Y);
	for (u = 0; u < C_ACC; u++)
		s += acc[u];
	return s;
}

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>

/* 12 accumulators and x and y take 14 of AVX2's 16 registers; 24 of
 * AVX-512's 32. */
#define AVX2_ACC 12
#define AVX512_ACC 24

/* NAME(iters): the loop in VEC, LANES doubles, with ACC accumulators,
 * built for TARGET; the intrinsics' prefix P (_mm256, _mm512) names its
 * operations. */
#define VECTOR_LOOP(NAME, TARGET, VEC, LANES, ACC, P) \
__attribute__((target(TARGET))) static double \
NAME(unsigned long iters) \
{ \
	const VEC x = P##_set1_pd(X), y = P##_set1_pd(Y); \
	VEC acc[ACC]; \
	double lanes[LANES], s = 0.0; \
	unsigned long i; \
	int u; \
 \
	for (u = 0; u < ACC; u++) \
		acc[u] = P##_set1_pd(1.0 + u * 1e-3); \
	for (i = 0; i < iters; i++) \
		_Pragma("GCC unroll 24") \
		for (u = 0; u < ACC; u++) \
			acc[u] = P##_fmadd_pd(acc[u], x, y); \
	for (u = 1; u < ACC; u++) \
		acc[0] = P##_add_pd(acc[0], acc[u]); \
	P##_storeu_pd(lanes, acc[0]); \
	for (u = 0; u < LANES; u++) \
		s += lanes[u]; \
	return s; \
}

VECTOR_LOOP(loop_avx2, "avx2,fma", __m256d, 4, AVX2_ACC, _mm256)
VECTOR_LOOP(loop_avx512, "avx512f", __m512d, 8, AVX512_ACC, _mm512)
#endif

struct loop {
	double (*run)(unsigned long);
	double flops;	/* a loop's iteration */
};

static int
loop_of(enum attn_isa isa, struct loop *l)
{
	switch (isa) {
	case ATTN_ISA_C:
		*l = (struct loop){ loop_c, 2.0 * C_ACC };
		return 0;
#if defined(__x86_64__) && defined(__GNUC__)
	case ATTN_ISA_AVX2:
		*l = (struct loop){ loop_avx2, 2.0 * 4 * AVX2_ACC };
		return 0;
	case ATTN_ISA_AVX512:
		*l = (struct loop){ loop_avx512, 2.0 * 8 * AVX512_ACC };
		return 0;
#endif
	default:
		return -1;
	}
}

struct start {
	pthread_mutex_t lock;
	pthread_cond_t go;
	int state;	/* 0 wait, 1 run, -1 give up */
};

struct worker {
	pthread_t id;
	struct start *start;
	struct loop l;
	unsigned long iters;
	double sum, seconds;	/* the thread's CPU time */
};

static double
thread_seconds(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void *
work(void *arg)
{
	struct worker *w = arg;
	int state;

	pthread_mutex_lock(&w->start->lock);
	while ((state = w->start->state) == 0)
		pthread_cond_wait(&w->start->go, &w->start->lock);
	pthread_mutex_unlock(&w->start->lock);
	if (state > 0) {
		w->seconds = thread_seconds();
		w->sum = w->l.run(w->iters);
		w->seconds = thread_seconds() - w->seconds;
	}
	return NULL;
}

/* Let the workers go (state 1) or give up (-1). */
static void
start_all(struct start *s, int state)
{
	pthread_mutex_lock(&s->lock);
	s->state = state;
	pthread_cond_broadcast(&s->go);
	pthread_mutex_unlock(&s->lock);
}

static int
cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* The rate, in flops a CPU second summed over the threads, of one run
 * of iters iterations on each of `threads` threads, started together;
 * -1 when a thread cannot be started. */
static double
timed_run(struct worker *w, size_t threads, struct loop l,
    unsigned long iters, double *sum)
{
	struct start s = { PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER,
	    0 };
	double rate = 0.0;
	size_t i, started;

	for (started = 0; started < threads; started++) {
		w[started] = (struct worker){ .start = &s, .l = l,
		    .iters = iters };
		if (pthread_create(&w[started].id, NULL, work,
		    &w[started]) != 0)
			break;
	}
	start_all(&s, started == threads ? 1 : -1);
	for (i = 0; i < started; i++) {
		pthread_join(w[i].id, NULL);
		*sum += w[i].sum;
		rate += l.flops * (double)iters / w[i].seconds;
	}
	return started == threads ? rate : -1;
}

double
peak_rate(enum attn_isa isa, size_t threads, int runs)
{
	struct worker *w;
	struct loop l;
	unsigned long iters = 1UL << 12;
	double t[PEAK_RUNS_MAX], t0, sum = 0.0;	/* t: rates */
	int r;

	if (loop_of(isa, &l) != 0 || threads == 0 || runs < 1 ||
	    runs > PEAK_RUNS_MAX)
		return -1;
	for (;;) {
		t0 = thread_seconds();
		sum += l.run(iters);
		if (thread_seconds() - t0 >= PEAK_SECONDS || iters >= 1UL << 40)
			break;
		iters *= 2;
	}
	if ((w = calloc(threads, sizeof *w)) == NULL)
		return -1;
	for (r = 0; r < runs; r++)
		if (!((t[r] = timed_run(w, threads, l, iters, &sum)) > 0))
			break;
	free(w);
	if (r < runs || !(sum > 0))
		return -1;
	qsort(t, (size_t)runs, sizeof t[0], cmp_double);
	return (runs % 2 ? t[runs / 2] : (t[runs / 2 - 1] + t[runs / 2]) / 2) *
	    1e-9;
}
