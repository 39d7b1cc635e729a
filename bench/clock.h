/*
 * clock.h - the one clock the bench programs time with: seconds on the
 * monotonic clock, for differences only.
 */
#ifndef ATTN_BENCH_CLOCK_H
#define ATTN_BENCH_CLOCK_H

#include <time.h>

static inline double
now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

#endif
