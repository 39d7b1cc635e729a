/*
 * run.h - attn's run once its options are parsed: inputs read, the run
 * planned, computed, checked and rendered, each error reported; what
 * main() runs after options_parse, and what the library's session
 * (session.c) runs with its output kept in memory.
 */
#ifndef ATTN_RUN_H
#define ATTN_RUN_H

#include <stdio.h>

#include "attn.h"
#include "options.h"
#include "render.h"

/* Where a run's output and messages go. */
struct run_io {
	FILE *msg;	/* error and warning lines (stderr for attn) */
	/* NULL: written to -o FILE (or standard output) and --svg, as
	 * attn(1) says; else the output is rendered here and not written
	 * (render_free gives it back), and no progress line is shown */
	struct render *keep;
};

/* What attn-mpi (cli/mpi/main.c) puts around attn's run, the same in every
 * process of its job; NULL in attn and the library's session. */
struct run_hooks {
	/* Computes the stages in attn_run's place: its arguments, with
	 * the precision of --emulate (ATTN_PREC_FP64 for attn_run). */
	enum attn_status (*compute)(const struct attn_config *cfg,
	    const struct attn_inputs *in, unsigned want,
	    enum attn_precision prec, struct attn_stages *out,
	    struct attn_error *err);
	/* Before the output is written: *write set to 0 where this
	 * process writes none. */
	enum attn_status (*output)(int *write, struct attn_error *err);
	/* After compute: 1 where this process holds the stages whole, 0
	 * where it holds its share of them only, which it then neither
	 * checks nor writes (it goes to output at once). */
	int (*whole)(void);
};
extern const struct run_hooks *run_hooks;

/* The exit code attn(1) gives each status (EXIT STATUS). */
int run_exit_code(enum attn_status status);

/* One line on io->msg, "attn: FILE:LINE:COL: message", and after a usage
 * error a line naming the --help of o's command. */
void run_report(FILE *msg, const struct attn_error *err,
    const struct options *o);

/* Read o's inputs, compute, check and write (or keep) the output:
 * returns the exit code attn(1) gives, 1 for a check that failed. */
int run_attn(struct options *o, const struct run_io *io);

#endif
