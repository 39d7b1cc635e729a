/*
 * peak.h - the FMA peak of this CPU for one of attn's instruction sets
 * (bench/peak.c), the limit bench-compute's rates are a fraction of.
 */
#ifndef ATTN_BENCH_PEAK_H
#define ATTN_BENCH_PEAK_H

#include <stddef.h>

#include "attn.h"	/* enum attn_isa */

/* GFLOP/s of multiply-adds (2 flops each) on `threads` threads at once
 * in isa's instructions, the median of `runs` runs; -1 when isa is not
 * one this build has or a thread cannot be started.  The caller checks
 * that the CPU has isa. */
double peak_rate(enum attn_isa isa, size_t threads, int runs);

#endif
