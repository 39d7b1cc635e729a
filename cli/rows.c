/*
 * rows.c - rows of text formatted on worker threads and written in
 * order (see rows.h).
 *
 * Rows go in rounds: the threads format runs of consecutive rows
 * (shares, two a thread) into buffers of their own, and the buffers are
 * written one after another, so that the text is the one a single
 * thread writes.  The calling thread writes a round's buffers while the
 * others format the next round into a second set (it joins them once
 * done), so that writing, which only it may do (a label goes with its
 * row, and a write to a closed pipe raises its SIGPIPE), costs the
 * others no wait: writing was a fifth of csv's output time, in rounds
 * that took turns.  A share's buffer holds SHARE_BYTES of the rows'
 * longest text (one row when a row is longer): the output is being
 * collected in memory anyway (memory.h), so the buffers are charged to
 * the run's account, and rows whose buffers do not fit beside their
 * text are formatted by this thread alone, row by row, as with one
 * thread, so that a limit refuses the same output whatever the thread
 * count.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attn.h"
#include "attn_private.h"
#include "rows.h"

/* A share of a round: enough rows that handing them to a thread costs
 * nothing beside formatting them, few enough that the buffers stay
 * small beside the output. */
#define SHARE_BYTES (128u << 10)
/* Shares a round for each thread: one more than a thread's own, so that
 * the others format while the calling thread writes. */
#define SHARES_A_THREAD 2
/* A row this long or shorter is formatted on the stack with one thread,
 * as the printers did before (uncharged: OUTPUT_RESERVE, memory.c). */
#define STACK_ROW 16384
/* A formatting thread's stack: a number's text needs little, and the
 * default 8 MiB would count against an address-space limit. */
#define THREAD_STACK (128u << 10)

/* A run of rows [first, last) and where its text goes. */
struct share {
	size_t first, last;
	char *buf;
	size_t *ends;		/* where each row's text ends in buf */
};

/* A round being formatted (fmt) and the round before it (out), whose
 * nout shares the calling thread has still to write (0 once written). */
struct rounds {
	const struct rows_job *job;
	FILE *fp;
	struct share *fmt, *out;
	size_t nout;
};

/* The text of shares sh[0..n) to fp in order, each row after what goes
 * before it. */
static void
shares_write(FILE *fp, const struct rows_job *job, const struct share *sh,
    size_t n)
{
	size_t k, r;

	for (k = 0; k < n; k++) {
		const struct share *s = &sh[k];

		if (job->before == NULL) {
			fwrite(s->buf, 1, s->ends[s->last - s->first - 1], fp);
			continue;
		}
		for (r = s->first; r < s->last; r++) {
			const size_t from = r > s->first ?
			    s->ends[r - s->first - 1] : 0;

			job->before(job->ctx, r, fp);
			fwrite(s->buf + from, 1, s->ends[r - s->first] - from,
			    fp);
		}
	}
}

/* The round before, written if it still waits: by the calling thread
 * alone (worker 0, or after the round's job), so nothing else reads or
 * sets nout. */
static void
write_pending(struct rounds *rd)
{
	shares_write(rd->fp, rd->job, rd->out, rd->nout);
	rd->nout = 0;
}

/* attn_pool_run's task k: share k of the round formatted, after the
 * round before is written when this is the calling thread. */
static void
share_format(void *ctx, size_t worker, size_t k)
{
	struct rounds *rd = ctx;
	struct share *s = &rd->fmt[k];
	size_t i, len = 0;

	if (worker == 0)
		write_pending(rd);
	for (i = s->first; i < s->last; i++) {
		len += rd->job->row(rd->job->ctx, i, s->buf + len);
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
	struct share *sh = NULL, *t;
	size_t per, n, m, k, i, charged, text, shares;
	char line[STACK_ROW];
	struct attn_pool_job round;
	struct rounds rd;

	attn_memory_use(account);
	if (job->rows == 0)
		return ATTN_OK;
	threads = threads != 0 ? threads : attn_cpu_count();
	per = SHARE_BYTES / job->row_bytes;
	per = per != 0 ? per : 1;
	/* as many threads as have a share of the rows, and a round as many
	 * shares as there are (at most SHARES_A_THREAD a thread); two
	 * rounds' buffers */
	shares = (job->rows + per - 1) / per;
	n = shares < threads ? shares : threads;
	m = n <= shares / SHARES_A_THREAD ? n * SHARES_A_THREAD : shares;
	/* Several threads when their buffers fit beside the most the rows'
	 * text can take, which the output's stream is to hold: else what a
	 * limit leaves goes to the text, as with one thread, and the
	 * output is the same whatever the threads. */
	text = job->rows <= (size_t)-1 / job->row_bytes ?
	    job->rows * job->row_bytes : (size_t)-1;
	if (n < 2 || !fits(account, text) || !fits(account, text +
	    2 * m * (per * (job->row_bytes + sizeof(size_t)) + sizeof *sh)) ||
	    (sh = shares_new(2 * m, per, job->row_bytes, account,
	    &charged)) == NULL) {
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
	rd.job = job;
	rd.fp = fp;
	rd.fmt = sh;
	rd.out = sh + m;
	rd.nout = 0;
	memset(&round, 0, sizeof round);
	round.threads = n;
	round.task = share_format;
	round.ctx = &rd;
	round.stack = THREAD_STACK;
	for (i = 0; i < job->rows; i += m * per) {
		for (k = 0; k < m; k++) {
			rd.fmt[k].first = i + k * per < job->rows ?
			    i + k * per : job->rows;
			rd.fmt[k].last = job->rows - rd.fmt[k].first > per ?
			    rd.fmt[k].first + per : job->rows;
		}
		/* the shares that have rows this round */
		for (round.tasks = 0; round.tasks < m &&
		    rd.fmt[round.tasks].first < rd.fmt[round.tasks].last;
		    round.tasks++)
			;
		attn_pool_run(&round);
		write_pending(&rd);
		t = rd.out;
		rd.out = rd.fmt;
		rd.fmt = t;
		rd.nout = round.tasks;
	}
	write_pending(&rd);
	shares_free(sh, 2 * m, account, charged);
	return ATTN_OK;
}
