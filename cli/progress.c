/*
 * progress.c - the progress line of a long computation, on stderr:
 *
 *	attn: 42% of query blocks, 3.1 s elapsed, about 4.3 s left
 *
 * for each phase the library reports (the streaming kernel's query
 * blocks and its key blocks of the backward pass, the blocks of an
 * emulated kernel, --check's baseline after attn's own run) and --check's comparison (check.c), on the same
 * line: a new phase replaces the last one's text, and its estimate of
 * the time left is its own, from its own start: where it reported done 0,
 * else where the phase before it last reported (the run's start for the
 * first), since a pool of tasks reports only tasks done.
 *
 * A phase is drawn once it has done some of its work.  A report of done
 * 0 (check.c begins its comparison so, and may then compute --emulate's
 * baseline, a phase of its own, before the first stage is compared)
 * starts the phase's clock and erases the line of the phase before,
 * which is over: 0% of a phase would say nothing but its name, with an
 * estimate from no work done ("about 0.0 s left"), and the name may be
 * of a phase that is not the one running yet.
 *
 * shown only when asked (--progress) or when stderr is a terminal, only
 * once the run has gone on for PROGRESS_DELAY seconds (a short run shows
 * nothing), redrawn at most every PROGRESS_EVERY seconds, and erased at
 * the end, so that a terminal keeps only what attn printed and a pipe or
 * a CI log gets nothing unless --progress asks.  The library calls
 * progress_update from its worker threads, one call at a time.
 */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "progress.h"

#define PROGRESS_DELAY 1.0	/* seconds before the line appears */
#define PROGRESS_EVERY 0.25	/* seconds between redraws */

static double
seconds_now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

int
progress_wanted(enum progress_mode mode)
{
	if (mode == PROGRESS_AUTO)
		return isatty(STDERR_FILENO);
	return mode == PROGRESS_ON;
}

void
progress_start(struct progress *pr, int on)
{
	memset(pr, 0, sizeof *pr);
	pr->on = on;
	pr->start = pr->last = pr->phase = pr->prev = seconds_now();
}

void
progress_update(void *arg, const char *what, size_t done, size_t total)
{
	struct progress *pr = arg;
	const double t = seconds_now(), elapsed = t - pr->start;
	char line[160];
	int n;

	if (what != pr->what) {		/* a new phase */
		pr->what = what;
		pr->phase = done == 0 ? t : pr->prev;
		pr->last = 0;		/* drawn at once, once on */
	}
	pr->prev = t;
	if (done == 0) {
		progress_end(pr);
		return;
	}
	if (!pr->on || elapsed < PROGRESS_DELAY || total == 0 ||
	    (pr->width > 0 && t - pr->last < PROGRESS_EVERY && done < total))
		return;
	pr->last = t;
	n = snprintf(line, sizeof line, "attn: %zu%% of %s, %.1f s elapsed, "
	    "about %.1f s left", done * 100 / total, what, elapsed,
	    (t - pr->phase) * (double)(total - done) /
	    (double)(done > 0 ? done : 1));
	if (n < 0)
		return;
	/* Spaces cover the rest of a longer line drawn before. */
	fprintf(stderr, "\r%s%*s", line,
	    pr->width > (size_t)n ? (int)(pr->width - (size_t)n) : 0, "");
	fflush(stderr);
	if ((size_t)n > pr->width)
		pr->width = (size_t)n;
}

void
progress_end(struct progress *pr)
{
	if (pr->width == 0)
		return;
	fprintf(stderr, "\r%*s\r", (int)pr->width, "");
	fflush(stderr);
	pr->width = 0;
}
