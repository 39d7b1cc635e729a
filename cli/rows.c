/*
 * rows.c - rows of text formatted on worker threads and written in
 * order (see rows.h).
 *
 * Rows go in rounds: each of the threads formats a run of consecutive
 * rows into its own buffer, and once all are done the buffers are
 * written one after another, so that the text is the one a single
 * thread writes.  A round is sized so that a thread's buffer holds
 * ROUND_BYTES of the rows' longest text (one row when a row is longer):
 * the output is being collected in memory anyway (memory.h), so the
 * buffers are charged to the run's account, and rows whose buffers do
 * not fit beside their text are formatted by this thread alone, row by
 * row, as with one thread, so that a limit refuses the same output
 * whatever the thread count.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attn.h"
#include "rows.h"

/* A thread's share of a round: enough rows that handing them to a
 * thread costs nothing beside formatting them, few enough that the
 * buffers stay small beside the output. */
#define ROUND_BYTES (256u << 10)
/* A row this long or shorter is formatted on the stack with one thread,
 * as the printers did before (uncharged: OUTPUT_RESERVE, memory.c). */
#define STACK_ROW 16384
/* A formatting thread's stack: a number's text needs little, and the
 * default 8 MiB would count against an address-space limit. */
#define THREAD_STACK (128u << 10)

/* One thread's run of rows [first, last) and where its text goes. */
struct share {
	const struct rows_job *job;
	size_t first, last;
	char *buf;
	size_t *ends;		/* where each row's text ends in buf */
};

/* attn_pool_run's task k: share k of the round formatted. */
static void
share_format(void *ctx, size_t worker, size_t k)
{
	struct share *s = (struct share *)ctx + k;
	size_t i, len = 0;

	(void)worker;
	for (i = s->first; i < s->last; i++) {
		len += s->job->row(s->job->ctx, i, s->buf + len);
		s->ends[i - s->first] = len;
	}
}

/* Give back a round's buffers, and their charge. */
static void
shares_free(struct share *sh, size_t n, struct attn_memory *account,
    size_t charged)
{
	size_t k;

	for (k = 0; sh != NULL && k < n; k++) {
		free(sh[k].buf);
		free(sh[k].ends);
	}
	free(sh);
	if (account != NULL && charged != 0)
		attn_memory_release(account, charged);
}

/*
 * n shares of per rows of row_bytes each, charged to account (NULL:
 * none): NULL when they cannot be had.
 */
static struct share *
shares_new(size_t n, size_t per, size_t row_bytes,
    struct attn_memory *account, size_t *charged)
{
	const size_t cap = per * row_bytes, each = cap + per * sizeof(size_t);
	struct share *sh;
	size_t k;

	*charged = 0;
	if (each > ((size_t)-1 - sizeof *sh) / n || (account != NULL &&
	    attn_memory_charge(account, n * (each + sizeof *sh)) != 0))
		return NULL;
	*charged = n * (each + sizeof *sh);
	if ((sh = calloc(n, sizeof *sh)) == NULL) {
		shares_free(NULL, 0, account, *charged);
		return NULL;
	}
	for (k = 0; k < n; k++)
		if ((sh[k].buf = malloc(cap)) == NULL ||
		    (sh[k].ends = malloc(per * sizeof *sh[k].ends)) == NULL) {
			free(sh[k].buf);
			shares_free(sh, k, account, *charged);
			return NULL;
		}
	return sh;
}

/* Whether bytes fit beside what account holds (NULL: no limit). */
static int
fits(const struct attn_memory *account, size_t bytes)
{
	return account == NULL || (attn_memory_limit(account) >=
	    attn_memory_held(account) && attn_memory_limit(account) -
	    attn_memory_held(account) >= bytes);
}

/* The rows one at a time on this thread, formatted in line. */
static void
rows_alone(FILE *fp, const struct rows_job *job, char *line)
{
	size_t i;

	for (i = 0; i < job->rows; i++) {
		if (job->before != NULL)
			job->before(job->ctx, i, fp);
		fwrite(line, 1, job->row(job->ctx, i, line), fp);
	}
}

enum attn_status
rows_write(FILE *fp, size_t threads, const struct rows_job *job,
    struct attn_error *err)
{
	struct attn_memory *account = attn_memory_use(NULL);
	struct share *sh = NULL;
	size_t per, n, k, i, r, charged, text;
	char line[STACK_ROW];
	struct attn_pool_job round;

	attn_memory_use(account);
	if (job->rows == 0)
		return ATTN_OK;
	threads = threads != 0 ? threads : attn_cpu_count();
	per = ROUND_BYTES / job->row_bytes;
	per = per != 0 ? per : 1;
	/* as many threads as have a share of the rows */
	n = (job->rows + per - 1) / per;
	n = n < threads ? n : threads;
	/* Several threads when their buffers fit beside the most the rows'
	 * text can take, which the output's stream is to hold: else what a
	 * limit leaves goes to the text, as with one thread, and the
	 * output is the same whatever the threads. */
	text = job->rows <= (size_t)-1 / job->row_bytes ?
	    job->rows * job->row_bytes : (size_t)-1;
	if (n < 2 || !fits(account, text) || !fits(account, text +
	    n * (per * (job->row_bytes + sizeof(size_t)) + sizeof *sh)) ||
	    (sh = shares_new(n, per, job->row_bytes, account, &charged)) ==
	    NULL) {
		/* One thread, a row at a time: in a buffer on the stack, as
		 * the printers always had, or one charged when a row is
		 * longer. */
		if (job->row_bytes <= sizeof line) {
			rows_alone(fp, job, line);
			return ATTN_OK;
		}
		if ((sh = shares_new(1, 1, job->row_bytes, account,
		    &charged)) == NULL)
			return attn_error_set(err, ATTN_ERR_NOMEM, NULL, 0, 0,
			    "out of memory writing the output (a row of %zu "
			    "bytes)", job->row_bytes);
		rows_alone(fp, job, sh[0].buf);
		shares_free(sh, 1, account, charged);
		return ATTN_OK;
	}
	memset(&round, 0, sizeof round);
	round.threads = n;
	round.task = share_format;
	round.ctx = sh;
	round.stack = THREAD_STACK;
	for (i = 0; i < job->rows; i += n * per) {
		for (k = 0; k < n; k++) {
			sh[k].job = job;
			sh[k].first = i + k * per < job->rows ? i + k * per :
			    job->rows;
			sh[k].last = job->rows - sh[k].first > per ?
			    sh[k].first + per : job->rows;
		}
		/* the shares that have rows this round */
		for (round.tasks = 0; round.tasks < n &&
		    sh[round.tasks].first < sh[round.tasks].last; round.tasks++)
			;
		attn_pool_run(&round);
		for (k = 0; k < n; k++) {
			if (job->before == NULL && sh[k].first < sh[k].last) {
				fwrite(sh[k].buf, 1, sh[k].ends[sh[k].last -
				    sh[k].first - 1], fp);
				continue;
			}
			for (r = sh[k].first; r < sh[k].last; r++) {
				const size_t from = r > sh[k].first ?
				    sh[k].ends[r - sh[k].first - 1] : 0;

				if (job->before != NULL)
					job->before(job->ctx, r, fp);
				fwrite(sh[k].buf + from, 1,
				    sh[k].ends[r - sh[k].first] - from, fp);
			}
		}
	}
	shares_free(sh, n, account, charged);
	return ATTN_OK;
}
