/*
 * command.c - attn's command line: parse options, then the command they
 * name: help, gen, workbench, or attn's run (run.c: read inputs,
 * compute, write), and its exit code; main() of attn (main.c) and of
 * attn-mpi (cli/mpi/main.c).
 */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <string.h>

#include "attn.h"
#include "command.h"
#include "gen.h"
#include "help.h"
#include "options.h"
#include "options_table.h"
#include "output.h"
#include "run.h"
#include "workbench.h"

/* attn --version: the Makefile passes what tools/version.sh says. */
#ifndef ATTN_VERSION
#error "ATTN_VERSION: build with make, which defines it"
#endif

int
command_main(int argc, char **argv)
{
	struct attn_error err = { 0 };
	struct options o;
	enum attn_status status;

	/* attn help [TOPIC]: the manual pages (help.c) */
	if (argc > 1 && strcmp(argv[1], "help") == 0)
		return help_main(argc - 2, argv + 2);
	if ((status = options_parse(argc, argv, &o, &err)) != ATTN_OK) {
		run_report(stderr, &err, &o);
		return run_exit_code(status);
	}
	if (o.help || o.version) {
		struct output out;

		output_open(&out, NULL, &err);
		if (o.help)
			options_print_help(&o, out.fp);
		else
			fputs("attn " ATTN_VERSION "\n", out.fp);
		status = output_commit(&out, &err);
		if (status != ATTN_OK)
			run_report(stderr, &err, &o);
		return run_exit_code(status);
	}
	if (o.gen) {		/* attn gen: a seeded random matrix */
		if ((status = gen_main(&o, &err)) != ATTN_OK)
			run_report(stderr, &err, &o);
		return run_exit_code(status);
	}
	if (o.workbench) {	/* attn workbench: the terminal's */
		if ((status = workbench_main(&o, &err)) != ATTN_OK)
			run_report(stderr, &err, &o);
		return run_exit_code(status);
	}

	return run_attn(&o, &(struct run_io){ stderr, NULL });
}
