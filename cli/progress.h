/*
 * progress.h - the progress line on stderr for long runs (progress.c).
 */
#ifndef ATTN_PROGRESS_H
#define ATTN_PROGRESS_H

#include <stddef.h>

/* --progress, --no-progress, or neither (stderr a terminal decides). */
enum progress_mode { PROGRESS_AUTO, PROGRESS_ON, PROGRESS_OFF };

struct progress {
	int on;			/* may show at all */
	double start, last;	/* when the run and the last redraw began */
	const char *what;	/* the phase, as the library names it */
	double phase;		/* when it began */
	double prev;		/* when any phase last reported */
	size_t width;		/* of the line on screen; 0 when none */
};

/* Whether a run with this mode shows progress: AUTO when stderr is a
 * terminal. */
int progress_wanted(enum progress_mode mode);

/* Start the clock of a run; nothing shows unless on. */
void progress_start(struct progress *pr, int on);

/* attn_config.progress: arg is the struct progress. */
void progress_update(void *arg, const char *what, size_t done,
    size_t total);

/* Erase the line, if one was drawn. */
void progress_end(struct progress *pr);

#endif
