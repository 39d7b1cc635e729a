/*
 * run.c - attn's run once its options are parsed (run.h): inputs read,
 * the run refused whole if it would not fit in memory, computed, checked
 * and rendered in memory before a byte is written, so a failed run
 * prints nothing on stdout and leaves -o FILE untouched.  main() runs it
 * for the command line; the library's session (session.c) runs the same
 * with the output kept in memory, so that both give the same bytes and
 * the same messages.
 */
#define _POSIX_C_SOURCE 200809L
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "attn.h"
#include "attn_io.h"
#include "check.h"
#include "inputs.h"
#include "labels.h"
#include "load.h"
#include "memory.h"
#include "options.h"
#include "print.h"
#include "print_run.h"
#include "progress.h"
#include "query.h"
#include "render.h"
#include "report.h"
#include "run.h"
#include "words.h"

/* The exit code attn(1) gives each status (EXIT STATUS): the one place
 * they meet. */
int
run_exit_code(enum attn_status status)
{
	switch (status) {
	case ATTN_OK:
		return 0;
	case ATTN_ERR_USAGE:
		return 64;
	case ATTN_ERR_DATA:
		return 65;
	case ATTN_ERR_NOINPUT:
		return 66;
	case ATTN_ERR_CANTCREAT:
		return 73;
	case ATTN_ERR_IO:
		return 74;
	case ATTN_ERR_NOMEM:
		return 71;
	case ATTN_ERR_INTERNAL:
		break;
	}
	return 70;
}

/* One line: "attn: FILE:LINE:COL: message", or "attn: FILE: byte N:
 * message" for a binary file, with the parts that apply; a usage error
 * is followed by a line pointing to the help of its command (attn, attn
 * gen or attn workbench), as attn(1) says under EXIT STATUS. */
void
run_report(FILE *msg, const struct attn_error *err, const struct options *o)
{
	report_error_to(msg, "", err);
	if (err->status == ATTN_ERR_USAGE)
		fprintf(msg, "Try 'attn%s --help'.\n", o->gen ? " gen" :
		    o->workbench ? " workbench" : "");
}

/*
 * One warning line a run when some query rows may attend no key, naming
 * them (the first few), and what --masked-rows gave them.
 */
static void
warn_masked_rows(FILE *msg, const struct options *o,
    const struct attn_stages *stages, const struct names *lab)
{
	const size_t shown = 8;
	size_t i;

	if (stages->nmasked == 0)
		return;
	fprintf(msg, "attn: warning: %zu quer%s may attend no key: ",
	    stages->nmasked, stages->nmasked == 1 ? "y" : "ies");
	for (i = 0; i < stages->nmasked && i < shown; i++) {
		size_t row = stages->masked[i], block = row / stages->T;
		char where[64];

		attn_block_name(where, sizeof where, stages->batches,
		    stages->heads, block, " (", ")");
		fprintf(msg, "%s%s%s", i > 0 ? ", " : "",
		    lab->query[row % stages->T], where);
	}
	if (stages->nmasked > shown)
		fprintf(msg, " and %zu more", stages->nmasked - shown);
	fprintf(msg, "; %s %s (--masked-rows %s)\n",
	    stages->nmasked == 1 ? "it gets" : "they get",
	    words_masked_rows_effect[o->cfg.masked_rows],
	    words_masked_rows[o->cfg.masked_rows]);
}

/*
 * Refuse a run whose inputs and stages would not fit in the memory limit
 * (memory.h), so that it fails with a message instead of being killed.
 */
static enum attn_status
check_memory(const struct options *o, const struct inputs *in,
    struct attn_error *err)
{
	enum attn_status status;
	size_t need = 0, emu = 0, i;

	/* --emulate alone computes only the emulation; with --check, both. */
	if ((o->emulate == ATTN_PREC_FP64 || o->check != NULL) &&
	    (status = attn_plan(&o->cfg, &in->in, print_wants(o), &need,
	    err)) != ATTN_OK)
		return status;
	if (o->emulate != ATTN_PREC_FP64 &&
	    (status = attn_emulate_plan(&o->cfg, &in->in, print_wants(o),
	    o->emulate, &emu, err)) != ATTN_OK)
		return status;
	need = need > SIZE_MAX - emu ? SIZE_MAX : need + emu;
	/* --check's copies of each stage in C order: attn's, the
	 * baseline's, and one to try the hints on (bounded by the plan of
	 * that stage alone, its scratch included). */
	for (i = 0; o->check != NULL && i < o->nstages; i++) {
		if ((status = attn_plan(&o->cfg, &in->in,
		    ATTN_STAGE_BIT(o->stages[i]), &emu, err)) != ATTN_OK)
			return status;
		emu = emu > SIZE_MAX / 3 ? SIZE_MAX : emu * 3;
		need = need > SIZE_MAX - emu ? SIZE_MAX : need + emu;
	}
	return memory_admit_run(&in->query, &in->key, in->in.q.rows +
	    in->in.k.rows, need, err);
}

/*
 * Render everything into memory, then write it in one piece: the SVG and
 * the output both (render_write_both writes both before it replaces
 * either, and standard output last).  With --svg, an output with nothing
 * in it (no stage asked for) is not written, so that --svg - has
 * standard output to itself.
 * With --check the output is its report.
 * Output alone goes straight into -o FILE's temporary file where there
 * is one (render_open_to); with --svg the two are made in memory, to be
 * written both or neither, and so is --check's report.
 * With keep (the library's session) the output is rendered into keep
 * and nothing is written.
 */
static enum attn_status
write_output(const struct options *o, const struct attn_stages *stages,
    const struct names *lab, const struct attn_inputs *in,
    const struct check *chk, struct render *keep, struct attn_error *err)
{
	struct render out = { 0 }, svg = { 0 };
	enum attn_status status;

	status = keep != NULL ? render_open(&out, err) :
	    o->svg == NULL && o->check == NULL ?
	    render_open_to(&out, o->output, err) : render_open(&out, err);
	if (status == ATTN_OK && o->check != NULL) {
		check_print(out.fp, o, stages, chk);
		status = render_close(&out, ATTN_OK, err);
	} else if (status == ATTN_OK) {
		status = render_close(&out, print_run(out.fp, o, stages, lab,
		    in, err), err);
	}
	if (status == ATTN_OK && keep != NULL) {
		*keep = out;	/* the caller's to free */
		return ATTN_OK;
	}
	if (status == ATTN_OK && o->svg != NULL &&
	    (status = render_open(&svg, err)) == ATTN_OK)
		status = render_close(&svg, print_svg_run(svg.fp, o, stages,
		    lab, in, err), err);
	if (status == ATTN_OK && o->svg == NULL)
		status = render_write(&out, o->output, err);
	else if (status == ATTN_OK)
		status = render_write_both(&svg, strcmp(o->svg, "-") == 0 ?
		    NULL : o->svg, out.len > 0 ? &out : NULL, o->output, err);
	render_free(&out);
	render_free(&svg);
	return status;
}

const struct run_hooks *run_hooks;

/* attn_run; with --emulate alone, the emulation's stages; with hooks,
 * theirs. */
static enum attn_status
compute(const struct options *o, const struct inputs *in,
    struct attn_stages *stages, struct attn_error *err)
{
	/* --emulate with --check is the check's baseline, not the run */
	const enum attn_precision prec = o->check == NULL ? o->emulate :
	    ATTN_PREC_FP64;

	if (run_hooks != NULL)
		return run_hooks->compute(&o->cfg, &in->in, print_wants(o),
		    prec, stages, err);
	if (prec != ATTN_PREC_FP64)
		return attn_emulate(&o->cfg, &in->in, print_wants(o), prec,
		    stages, err);
	return attn_run(&o->cfg, &in->in, print_wants(o), stages, err);
}

int
run_attn(struct options *o, const struct run_io *io)
{
	struct attn_error err = { 0 };
	struct attn_labels query = { 0 }, key = { 0 };
	struct attn_stages stages = { 0 };
	struct inputs in = { 0 };
	struct check chk = { 0 };
	struct query sel = { 0 };
	struct progress pr;
	struct names lab;
	enum attn_status status;
	int failed, write = 1, whole = 1;

	status = load_inputs(o, &in, &err);
	if (status == ATTN_OK && o->check != NULL)
		status = check_load(o, &chk, &err);
	if (status == ATTN_OK) {
		/* a layer, its W_O and RoPE make stages of their own */
		options_offer(o, attn_stages_available(&o->cfg, &in.in),
		    in.in.proj.w_q.data != NULL);
		if (o->check != NULL)
			status = check_stages(o, &chk, &err);
		if (status == ATTN_OK)
			status = check_memory(o, &in, &err);
	}
	/* A progress line on stderr while the long phases go on: attn's
	 * run, --check's emulated baseline after it (progress.c); none in
	 * a library call. */
	progress_start(&pr, io->keep == NULL &&
	    progress_wanted(o->progress));
	o->cfg.progress = progress_update;
	o->cfg.progress_arg = &pr;
	if (status == ATTN_OK)
		status = compute(o, &in, &stages, &err);
	if (status == ATTN_OK && run_hooks != NULL && !run_hooks->whole()) {
		whole = 0;	/* a share, to be neither checked nor written */
		status = run_hooks->output(&write, &err);
	}
	if (status == ATTN_OK && whole)
		status = name_rows(o, &in, &stages, &query, &key, &err);
	if (status == ATTN_OK && whole && o->check != NULL)
		status = check_run(o, &in.in, &stages, &chk, &err);
	progress_end(&pr);
	o->cfg.progress = NULL;
	/* --query: the rows it names, of everything printed */
	if (status == ATTN_OK && whole)
		status = query_select(o, &in.in, &stages, &query, &sel, &err);
	if (status == ATTN_OK && whole) {
		lab.query = query.names;
		lab.key = key.names;
		lab.value = name_values(&in, &stages);
		lab.mask = in.name[IN_MASK];
		lab.bias = in.name[IN_BIAS];
		lab.slopes = in.name[IN_SLOPES];
		warn_masked_rows(io->msg, o, &stages, &lab);
		if (run_hooks != NULL)
			status = run_hooks->output(&write, &err);
		if (status == ATTN_OK && write)
			status = write_output(o, &stages, &lab, &sel.in,
			    &chk, io->keep, &err);
	}
	if (status != ATTN_OK && err.msg[0] != '\0')
		run_report(io->msg, &err, o);
	/* A check that fails is no error but attn(1)'s exit 1, after its
	 * report. */
	failed = status == ATTN_OK && whole && o->check != NULL &&
	    !check_passed(&chk);
	attn_labels_free(&query);
	attn_labels_free(&key);
	attn_stages_free(&stages);
	inputs_free(&in);
	check_free(&chk);
	query_free(&sel);
	return failed ? 1 : run_exit_code(status);
}
