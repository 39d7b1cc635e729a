/*
 * compute.c - how fast libattn computes attention, inputs already in
 * memory: `bench-compute [-j THREADS] [-r RUNS] N...` prints, for each N,
 *
 *	compute N SECONDS GFLOPS CPU_GFLOPS CPU_SECONDS
 *
 * the median of RUNS (default 3) runs of attn_run for the output stage of
 * T = S = N, d_k = d_v = 64 (Q, K and V standard normal, seeds 1, 2, 3,
 * as bench/bench.py makes them with attn gen), counted as 4 T S d flops:
 * two products of T x S x d multiply-adds, which is what a dgemm of the
 * same shapes would do.  THREADS defaults to attn's own default (the
 * CPUs attn may use).  Nothing is read or printed as text, so this is the
 * kernel alone; bench.py sets it beside NumPy's dgemm measured in the
 * same run.  CPU_GFLOPS is the rate per CPU second of the process times
 * THREADS (or the CPUs it may use, when fewer), the median of the runs': what the threads did while they
 * ran, as bench/peak.c measures the peak, which other processes on a
 * shared machine do not lower (threads left idle do not count either,
 * so on a quiet machine the two rates agree when the work is shared
 * well); CPU_SECONDS is that median's CPU seconds, all threads, which
 * bench.py sets against a whole run's.  Its first lines say the threads and the instruction set
 * the kernel's loops use (attn_simd_best: the best this CPU runs, or
 * the best up to ATTN_ISA, c, avx2 or avx512, as attn reads it, so that
 * an AVX-512 machine can be measured as an AVX2 one),
 *
 *	threads N
 *	isa NAME
 *
 * `bench-compute -g [-j THREADS] [-r RUNS] N...` prints instead, for the
 * backward rows, with Q, K, V and dO of 8 heads of d = 128 (seeds 1 to
 * 4),
 *
 *	grad N FORWARD_SECONDS FORWARD_AND_BACKWARD_SECONDS CPU_F CPU_FB
 *
 * the medians of output alone and of grad_q, grad_k and grad_v: the
 * kernels' ratio without reading or writing a file; CPU_F and CPU_FB
 * are the same runs' CPU seconds over THREADS (or the CPUs, when fewer),
 * the times the threads would take each on a core of its own.
 *
 * `bench-compute -p [-j THREADS] [-r RUNS]` prints instead the limit
 * those rates are fractions of: for each instruction set the kernel's
 * loops come in that this CPU runs, up to ATTN_ISA's, the FMA peak of
 * THREADS threads at once (bench/peak.c; a thread's rate times THREADS
 * or the CPUs this process may use, when fewer), the median of RUNS,
 *
 *	peak NAME GFLOPS
 *
 * `-d D` sets d_k = d_v of the compute rows (64 unless given).
 *
 * `bench-compute -t [-r RUNS] [-d D] N...` prints instead where one
 * thread's cycles go: the streaming kernel's inner loops (struct
 * attn_simd) alone, on one task's TASK rows of queries and one block of
 * BLOCK keys, its operands in the caches, repeated as often as a task
 * over N keys would take them,
 *
 *	tiles N SCORES ACCUMULATE BLOCK_STEPS
 *
 * each in GFLOP/s (2 rows keys d flops a product, as the compute rows
 * count them), the median of RUNS: Q K^T alone, P V alone, and the three
 * steps of a block (scores, softmax, accumulate) together.  The kernel's
 * own rate on one thread (`-j 1`) is the step after: what is lost
 * between two steps is what the later one adds, the softmax's exp, and
 * then the kernel's fetching of every block from farther caches or
 * memory for every task, and its bookkeeping.

 * Every figure is printed to six significant digits, not to a fixed
 * number of decimals, so that none prints as zero however small n is
 * or however long a loaded machine makes a run: bench.py divides by
 * them.
 */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attn.h"
#include "clock.h"
#include "internal.h"	/* attn_simd_best */
#include "peak.h"

#define D 64		/* d_k = d_v of the compute rows, unless -d */
#define RUNS_MAX 99
#define GRAD_H 8	/* heads of the backward rows, */
#define GRAD_D 128	/* and d_k = d_v of each */

static int
cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static int
usage(void)
{
	fputs("usage: [ATTN_ISA=c|avx2|avx512] bench-compute [-g] "
	    "[-j THREADS] [-r RUNS] [-d D] N...\n"
	    "       [ATTN_ISA=c|avx2|avx512] bench-compute -p [-j THREADS] "
	    "[-r RUNS]\n"
	    "       [ATTN_ISA=c|avx2|avx512] bench-compute -t [-r RUNS] "
	    "[-d D] N...\n", stderr);
	return 64;
}

/* The instruction set the runs may use: the best, or ATTN_ISA's. */
static enum attn_isa isa = ATTN_ISA_AUTO;

static int
isa_from_env(void)
{
	const char *env = getenv("ATTN_ISA");
	int i;

	if (env == NULL || *env == '\0')
		return 0;
	for (i = 0; i < ATTN_ISA_COUNT; i++)
		if (strcmp(env, attn_isa_name((enum attn_isa)i)) == 0) {
			isa = (enum attn_isa)i;
			return 0;
		}
	return -1;
}

/* The cores `threads` threads can run on at once: the CPUs this process
 * may use, when there are more threads. */
static size_t
cores(size_t threads)
{
	size_t cpus = attn_cpu_count();

	return threads < cpus ? threads : cpus;
}

/* The process's CPU seconds, all threads. */
static double
cpu_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static double
median_of(double *t, int runs)
{
	qsort(t, (size_t)runs, sizeof t[0], cmp_double);
	return runs % 2 ? t[runs / 2] : (t[runs / 2 - 1] + t[runs / 2]) / 2;
}

/* The median of runs timed attn_run calls at T = S = n, keeping want,
 * with `heads` heads of d columns (and dO with backward stages); -1 on
 * failure.  *cpu: the median of their CPU seconds over threads. */
static double
time_run(size_t n, size_t heads, size_t d, unsigned want, size_t threads,
    int runs, double *cpu)
{
	struct attn_matrix m[4] = { { 0 } };
	struct attn_inputs in;
	struct attn_config cfg;
	struct attn_stages st;
	struct attn_error err;
	double t[RUNS_MAX], c[RUNS_MAX], median = -1;
	int i, r;

	memset(&in, 0, sizeof in);
	for (i = 0; i < 4; i++) {
		if (attn_matrix_alloc(&m[i], n, heads * d, &err) != ATTN_OK)
			goto done;
		attn_random_fill(&m[i], (unsigned long long)i + 1,
		    ATTN_DIST_NORMAL);
	}
	in.batches = 1;
	in.q = m[0];
	in.k = m[1];
	in.v = m[2];
	if (want & ATTN_STAGES_GRAD)
		in.d_out = m[3];
	attn_config_init(&cfg);
	cfg.threads = threads;
	cfg.heads = heads;
	cfg.isa = isa;
	for (r = 0; r < runs; r++) {
		c[r] = cpu_now();
		t[r] = now();
		if (attn_run(&cfg, &in, want, &st, &err) != ATTN_OK) {
			fprintf(stderr, "bench-compute: %s\n", err.msg);
			goto done;
		}
		t[r] = now() - t[r];
		c[r] = (cpu_now() - c[r]) / (double)cores(threads);
		attn_stages_free(&st);
	}
	median = median_of(t, runs);
	*cpu = median_of(c, runs);
done:
	for (i = 0; i < 4; i++)
		attn_matrix_free(&m[i]);
	return median;
}

/* The FMA peak of each instruction set this CPU runs, from plain C up
 * to the one the kernel's loops take. */
static int
print_peaks(size_t threads, int runs)
{
	const struct attn_simd *best = attn_simd_best(isa), *set = NULL;
	double rate;
	int i;

	for (i = ATTN_ISA_C; i < ATTN_ISA_COUNT && set != best; i++) {
		if ((set = attn_simd_get((enum attn_isa)i)) == NULL)
			continue;
		/* each thread's rate, as many times as threads can run
		 * at once */
		if ((rate = peak_rate((enum attn_isa)i, threads, runs)) < 0) {
			fprintf(stderr, "bench-compute: no %s peak measured\n",
			    set->name);
			return 1;
		}
		printf("peak %s %.6g\n", set->name,
		    rate / (double)threads * (double)cores(threads));
		fflush(stdout);
	}
	return 0;
}

/* One task of the kernel's (lib/kernel_stream.c's TASK_ROWS and
 * BLOCK_KEYS). */
#define TASK 144
#define BLOCK 128

/* An array of n doubles, aligned for the vector loops, filled from seed
 * (all small: no exp overflows); NULL when there is no memory. */
static double *
tiles_array(size_t n, unsigned seed)
{
	double *a = aligned_alloc(64, (n * sizeof *a + 63) / 64 * 64);
	size_t i;

	for (i = 0; a != NULL && i < n; i++)
		a[i] = (double)((i * 2654435761u + seed) % 1000) * 1e-3 - 0.5;
	return a;
}

/* The three steps of -t at n keys of d columns, as "tiles" prints
 * them. */
static int
print_tiles(size_t n, size_t d, int runs)
{
	const struct attn_simd *simd = attn_simd_best(isa);
	/* a task's blocks over n keys: as much work as a task does */
	const size_t blocks = (n + BLOCK - 1) / BLOCK;
	double *qt = tiles_array(d * TASK, 1), *k = tiles_array(BLOCK * d, 2),
	    *v = tiles_array(BLOCK * d, 3), *ot = tiles_array(d * TASK, 4),
	    *tile = tiles_array(TASK * BLOCK, 5), *mb = tiles_array(TASK, 6),
	    *m = tiles_array(TASK, 7), *l = tiles_array(TASK, 8),
	    *alpha = tiles_array(TASK, 9);
	double t[3][RUNS_MAX], rate[3];
	const double block_flops = 2.0 * TASK * BLOCK * (double)d;
	size_t b, i;
	int r, step, ok = qt && k && v && ot && tile && mb && m && l && alpha;

	for (r = 0; ok && r < runs; r++)
		for (step = 0; step < 3; step++) {
			t[step][r] = now();
			for (b = 0; b < blocks; b++) {
				if (step != 1)
					simd->scores(qt, TASK, d, k, d, BLOCK,
					    0.125, tile, mb);
				if (step == 2)
					simd->softmax(tile, TASK, BLOCK, m, l,
					    mb, alpha);
				if (step != 0)
					simd->accumulate(tile, TASK, BLOCK, v,
					    d, d, alpha, ot);
			}
			t[step][r] = now() - t[step][r];
			/* the softmax's running sums start again */
			for (i = 0; i < TASK; i++)
				m[i] = l[i] = 0;
		}
	for (step = 0; ok && step < 3; step++)
		rate[step] = (step == 2 ? 2 : 1) * block_flops *
		    (double)blocks / median_of(t[step], runs) * 1e-9;
	if (ok)
		printf("tiles %zu %.6g %.6g %.6g\n", blocks * BLOCK, rate[0],
		    rate[1], rate[2]);
	else
		fputs("bench-compute: out of memory\n", stderr);
	free(qt), free(k), free(v), free(ot), free(tile), free(mb), free(m),
	    free(l), free(alpha);
	return ok ? 0 : 1;
}

#define OUTPUT ATTN_STAGE_BIT(ATTN_STAGE_OUTPUT)
#define GRADS (ATTN_STAGE_BIT(ATTN_STAGE_GRAD_Q) | \
	ATTN_STAGE_BIT(ATTN_STAGE_GRAD_K) | ATTN_STAGE_BIT(ATTN_STAGE_GRAD_V))

int
main(int argc, char **argv)
{
	size_t threads = 0, n, d = D;
	double t, tg, c, cg, flops;
	int runs = 3, i, grad = 0, peak = 0, tiles = 0;
	char *end;

	if (argc > 1 && strcmp(argv[1], "-g") == 0) {
		grad = 1;
		argv++;
		argc--;
	} else if (argc > 1 && strcmp(argv[1], "-p") == 0) {
		peak = 1;
		argv++;
		argc--;
	} else if (argc > 1 && strcmp(argv[1], "-t") == 0) {
		tiles = 1;
		argv++;
		argc--;
	}
	for (i = 1; i < argc && argv[i][0] == '-'; i += 2) {
		if (i + 1 == argc)
			return usage();
		if (strcmp(argv[i], "-j") == 0)
			threads = strtoul(argv[i + 1], &end, 10);
		else if (strcmp(argv[i], "-r") == 0)
			runs = (int)strtol(argv[i + 1], &end, 10);
		else if (strcmp(argv[i], "-d") == 0 && !grad && !peak)
			d = strtoul(argv[i + 1], &end, 10);
		else
			return usage();
		if (*end != '\0' || runs < 1 || runs > RUNS_MAX || d == 0)
			return usage();
	}
	if ((i == argc) != peak)
		return usage();
	if (threads == 0)
		threads = tiles ? 1 : attn_cpu_count();
	if (tiles && threads != 1)
		return usage();	/* the loops of one thread */
	printf("threads %zu\n", threads);
	if (isa_from_env() != 0)
		return usage();
	printf("isa %s\n", attn_simd_best(isa)->name);
	if (peak)
		return print_peaks(threads, runs);
	for (; i < argc; i++) {
		n = strtoul(argv[i], &end, 10);
		if (*end != '\0' || n == 0)
			return usage();
		if (tiles) {
			if (print_tiles(n, d, runs) != 0)
				return 1;
			fflush(stdout);
			continue;
		}
		if (grad) {
			if ((t = time_run(n, GRAD_H, GRAD_D, OUTPUT, threads,
			    runs, &c)) < 0 || (tg = time_run(n, GRAD_H, GRAD_D,
			    GRADS, threads, runs, &cg)) < 0)
				return 1;
			printf("grad %zu %.6g %.6g %.6g %.6g\n", n, t, tg, c, cg);
			fflush(stdout);
			continue;
		}
		if ((t = time_run(n, 1, d, OUTPUT, threads, runs, &c)) < 0)
			return 1;
		flops = 4.0 * (double)n * (double)n * (double)d;
		printf("compute %zu %.6g %.6g %.6g %.6g\n", n, t,
		    flops / t * 1e-9, flops / c * 1e-9,
		    c * (double)cores(threads));
		fflush(stdout);
	}
	return 0;
}
