/*
 * load.c - from operands to matrices (struct inputs, inputs.h).  Three
 * operands are Q, K and V; one is a JSON BUNDLE; --self X is all three.
 * With --proj LAYER the operands are embeddings: X (self-attention), XQ
 * XKV (cross-attention), or a BUNDLE holding them; a BUNDLE may also
 * bring its layer ("proj").
 * Files are read whole (slurp_file) and parsed by libattn, side by side
 * on -j's threads where they can be (load_side_by_side); labels come
 * from a first column of names (Q's or XQ's for queries, K's or XKV's
 * for keys, X's for both) or from the bundle.
 *
 * A 3-D array is a stack of B independent problems; Q, K and V must all
 * be 2-D or all be 3-D with the same B.  A mask or bias is T x S, or one
 * T x S block per batch (B x T x S; H x T x S when Q, K and V are 4-D,
 * as NumPy aligns it), or per batch and head (B x H x T x S).
 * dO (--grad) is shaped like output: T x H*d_v, or B of those as a 3-D
 * array or stacked in 2-D, as attn's csv writes output; libattn checks
 * the matrix, this file the batches of a 3-D one.
 */
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "attn.h"
#include "attn_io.h"
#include "attn_private.h"
#include "inputs.h"
#include "logits.h"
#include "load.h"
#include "formats.h"
#include "layout.h"
#include "memory.h"
#include "paged.h"
#include "print_run.h"
#include "report.h"
#include "rules.h"
#include "slurp.h"
#include "varlen.h"

/* Labels move from one struct to another without copying. */
static void
labels_move(struct attn_labels *to, struct attn_labels *from)
{
	*to = *from;
	memset(from, 0, sizeof *from);
}

static const char *
display_name(const char *path)
{
	return strcmp(path, "-") == 0 ? STDIN_NAME : path;
}

/* The readers' notices (a one-column file's first line read as its
 * header), one warning line each; the run goes on. */
static void
warn_notices(const struct inputs *in)
{
	size_t i;

	for (i = 0; i < IN_COUNT; i++)
		if (in->arr[i].notice.msg[0] != '\0' &&
		    in->arr[i].notice.file != NULL)
			report_error("warning: ", &in->arr[i].notice);
}

/*
 * What to say when a BUNDLE (a JSON object) is given where the option
 * (NULL: an operand) wants an array: what it wants, and what to do.
 */
static enum attn_status
bundle_misplaced(const char *name, const char *option,
    struct attn_error *err)
{
	static const struct {
		const char *option, *want, *fix;
	} roles[] = {
		{ "--self", "a matrix X", "give the BUNDLE alone as the "
		    "operand (attn FILE), without --self" },
		{ "--mask", "the mask as an array", "give its array alone, or "
		    "put it in the BUNDLE as \"mask\"" },
		{ "--bias", "the bias as an array", "give its array alone, or "
		    "put it in the BUNDLE as \"bias\"" },
		{ "--grad", "dO as an array", "give its array alone" },
		{ "--sinks", "one logit per head, an array", "give the array "
		    "alone" },
		{ "--alibi-slopes", "a slope per head, an array", "give the "
		    "array alone" },
		{ "--dropout-mask", "dropout's keep-mask as an array", "give "
		    "its array alone" },
	};
	size_t i;

	for (i = 0; option != NULL && i < sizeof roles / sizeof roles[0]; i++)
		if (strcmp(option, roles[i].option) == 0)
			return attn_error_set(err, ATTN_ERR_DATA, name, 0, 0,
			    "%s wants %s, and this is a JSON object (a "
			    "BUNDLE): %s", option, roles[i].want,
			    roles[i].fix);
	return attn_error_set(err, ATTN_ERR_DATA, name, 0, 0, "a JSON object "
	    "(a BUNDLE) must be the only operand: give it alone (attn FILE), "
	    "or give each operand as an array");
}

/* Read one file with the reader flags its role needs, on up to threads
 * threads (-j); option names the role (--self, --mask, ...), NULL for
 * an operand.  A file in memory (the session's), which outlives the run,
 * is read in place where its layout allows (float64 .npy in C order), a
 * mask's excepted, whose 0s and 1s are rewritten; with ATTN_READ_IN_PLACE
 * in flags, so is a file that slurp_keep keeps mapped.  With qin not
 * NULL, Q is read later (load.h): a .npy that slurp_keep keeps mapped
 * has its header read alone, its reader put in qin->q_later
 * (attn_read_npy_later); any other file is read by one process alone
 * (slurp_alone), which gives the others its dims (qin->q_scattered). */
static enum attn_status
load_array_later(const char *path, const char *option, unsigned flags,
    size_t threads, struct attn_array *a, struct inputs *qin,
    struct attn_error *err)
{
	const char *name = display_name(path);
	enum attn_status status;
	struct slurp f;
	int alone;

	slurp_alone = qin != NULL;
	status = slurp_parts(path, &f, err);
	slurp_alone = 0;
	if (status != ATTN_OK)
		return status;
	if ((alone = f.alone) < 0) {
		/* another process reads it */
		qin->q_scattered = 1;
		return load_later->dims(a, err);
	}
	if (qin != NULL && f.data == NULL && attn_is_npy(f.buf, f.len) &&
	    (f.lent || slurp_keep(&f))) {
		status = attn_read_npy_later(name, f.buf, f.len, flags &
		    ~(unsigned)ATTN_READ_IN_PLACE, a, &qin->q_later, err);
		slurp_release(&f);
		return status;
	}
	if ((flags & ATTN_READ_IN_PLACE) && !f.lent)
		(void)slurp_keep(&f);
	flags &= ~(unsigned)ATTN_READ_IN_PLACE;
	if (f.lent && !(flags & ATTN_READ_BOOL))
		flags |= ATTN_READ_IN_PLACE;
	if (f.data != NULL)
		status = attn_read_npy_parts(name, f.buf, f.len, f.data,
		    f.dlen, flags, a, err);
	else if (attn_is_bundle(f.buf, f.len))
		status = bundle_misplaced(name, option, err);
	else
		status = attn_read_array_threads(name, f.buf, f.len,
		    ATTN_FMT_AUTO, flags, threads, a, err);
	slurp_release(&f);
	if (status == ATTN_OK && alone > 0) {
		qin->q_scattered = 1;
		status = load_later->dims(a, err);
	}
	return status;
}

static enum attn_status
load_array(const char *path, const char *option, unsigned flags,
    size_t threads, struct attn_array *a, struct attn_error *err)
{
	return load_array_later(path, option, flags, threads, a, NULL, err);
}

/*
 * The files of Q K V (or XQ XKV), --mask, --bias and --grad read side by
 * side, a file a thread, when -j gives more than one: each is slurped
 * and parsed as load_array does alone, charging the run's account.  If
 * any of them fails, all are given back and the caller reads them one
 * after another, which tells the error a read in order meets first, in
 * the same words (and refuses only what that read refuses, since it
 * holds one input's buffer at a time): so only regular files, which can
 * be read twice, are read so.
 */
#define SIDE_MOST 6
/* A reading thread's stack: cJSON's nesting, 1000 deep at most, takes a
 * fraction; the default 8 MiB would count against an address-space
 * limit (tests/memory). */
#define SIDE_STACK (1u << 20)

struct side_job {
	const char *path, *option;
	unsigned flags;
	struct attn_array *a;
	enum attn_status st;
	struct attn_error err;
};

struct side {
	struct side_job job[SIDE_MOST];
	size_t n, threads;
};

static void
side_add(struct side *sd, const char *path, const char *option,
    unsigned flags, struct attn_array *a)
{
	struct side_job *jb = &sd->job[sd->n++];

	jb->path = path;
	jb->option = option;
	jb->flags = flags;
	jb->a = a;
}

/* attn_pool_run's task k: the k-th file. */
static void
side_work(void *ctx, size_t worker, size_t k)
{
	struct side *sd = ctx;
	struct side_job *jb = &sd->job[k];

	(void)worker;
	jb->st = load_array(jb->path, jb->option, jb->flags, sd->threads,
	    jb->a, &jb->err);
}

/* The reader's flags for operand i: K and V as caches may hold anything
 * where no key in use lies, and their keys are checked as they are
 * gathered (attn_paged_gather).  Q may be read in place where its file
 * can stay mapped (attn-mpi's: slurp_keep), since the kernel reads each
 * of its rows once; K and V, which it reads again for every block of
 * query rows, are copied to memory of attn's, on pages the processor
 * walks faster. */
static unsigned
operand_flags(const struct inputs *in, size_t i)
{
	if (i == IN_Q)
		return ATTN_READ_FINITE | ATTN_READ_IN_PLACE;
	return in->caches != CACHES_NONE ? 0u : ATTN_READ_FINITE;
}

/* 1 when every file is read (see above), 0 when they are to be read in
 * order, with nothing held. */
static int
load_side_by_side(const struct options *o, struct inputs *in,
    size_t threads)
{
	struct attn_pool_job job;
	struct attn_error spare;
	struct side sd;
	size_t k;
	struct stat sb;

	threads = threads != 0 ? threads : attn_cpu_count();
	memset(&sd, 0, sizeof sd);
	for (k = 0; k < (in->embeddings ? 2u : 3u); k++)
		side_add(&sd, o->operands[k], NULL, operand_flags(in, k),
		    &in->arr[k]);
	if (o->mask != NULL)
		side_add(&sd, o->mask, "--mask", ATTN_READ_BOOL,
		    &in->arr[IN_MASK]);
	if (o->bias != NULL)
		side_add(&sd, o->bias, "--bias", ATTN_READ_BIAS,
		    &in->arr[IN_BIAS]);
	if (o->grad != NULL)
		side_add(&sd, o->grad, "--grad", ATTN_READ_FINITE,
		    &in->arr[IN_DO]);
	if (threads < 2 || slurp_hook != NULL)	/* attn-mpi's, in order */
		return 0;
	for (k = 0; k < sd.n; k++)
		if (strcmp(sd.job[k].path, "-") == 0 ||
		    stat(sd.job[k].path, &sb) != 0 || !S_ISREG(sb.st_mode))
			return 0;
	/* the account, made before the threads use it */
	if (memory_ready(&spare) != ATTN_OK)
		return 0;
	sd.threads = threads;
	memset(&job, 0, sizeof job);
	job.tasks = sd.n;
	job.threads = threads;
	job.task = side_work;
	job.ctx = &sd;
	job.stack = SIDE_STACK;
	attn_pool_run(&job);
	for (k = 0; k < sd.n && sd.job[k].st == ATTN_OK; k++)
		;
	if (k < sd.n) {
		for (k = 0; k < sd.n; k++)
			attn_array_free(sd.job[k].a);
		return 0;
	}
	for (k = 0; k < sd.n; k++)
		in->name[sd.job[k].a - in->arr] = display_name(sd.job[k].path);
	return 1;
}

/* ------------------------------------------------------------ Q read later */

const struct load_later *load_later;

/* Whether Q is read later (load.h): attn-mpi's, where the kernel alone
 * reads Q's numbers, each task its rows. */
static int
q_later_wanted(const struct options *o)
{
	return load_later != NULL && o->self == NULL && !o->softmax &&
	    o->noperands == (o->proj != NULL ? 2u : 3u);
}

/* Whether rank 0, which alone checks and writes, reads all of Q: its
 * output or --check reads Q's numbers. */
static int
q_output_reads(const struct options *o)
{
	return o->check != NULL || o->query != NULL || o->explain ||
	    o->arithmetic || (formats[o->format].flags & FORMAT_PAGE) ||
	    (print_wants(o) & (ATTN_STAGE_BIT(ATTN_STAGE_Q) |
	    ATTN_STAGE_BIT(ATTN_STAGE_Q_ROT)));
}

/* Q's rows read into its stack: B x T rows of H heads of d_k columns,
 * from the file's bshd order, or bhsd (in->q_heads_first); or sent to
 * the stack from another process's (in->q_scattered).  With a layer,
 * the operand is the embeddings XQ, B x T rows of d_model columns, one
 * "head" of the stack: a row is read once, for whichever heads'
 * rows it is (x_rows). */
struct fill {
	const struct inputs *in;
	double *data;		/* NULL: read where they lie */
	struct attn_split_shape sh;	/* the run's (attn_split_rows) */
	size_t heads;		/* the stack's: sh.H, or 1 for XQ */
	size_t d_k;		/* columns of a head of the stack */
	/* XQ's: a bit a row, set once read, and what reads it */
	unsigned char *seen;
	void (*each)(void *arg, size_t n, size_t i0, size_t rows);
	size_t first;		/* the first element not finite */
	/* scattered: rows one after another, cap of them at most, sent to
	 * process `to` a pack at a time, total of them (or unpacked) */
	double *pack;
	size_t packed, cap, done, total, to;
	int unpack;		/* from pack into data, not from data */
};

static struct fill rest;	/* the rows not read yet (load_rest) */

/* attn_split_rows' each: rows i0 to i0 + rows - 1 of head n (b*H + h),
 * read from the file. */
static void
fill_rows(void *arg, size_t n, size_t i0, size_t rows)
{
	struct fill *f = arg;
	const size_t T = f->sh.T, H = f->heads, b = n / H, h = n % H;
	size_t t, to, bad;

	for (t = i0; t < i0 + rows; t++) {
		to = ((b * T + t) * H + h) * f->d_k;
		bad = attn_npy_later_read(f->in->q_later,
		    f->in->q_heads_first ? ((b * H + h) * T + t) * f->d_k : to,
		    f->d_k, f->data != NULL ? f->data + to : NULL);
		f->first = bad < f->first ? bad : f->first;
	}
}

/* attn_split_rows' each for a scattered Q: the rows counted (pack
 * NULL), or packed from the stack and sent, a pack at a time, or
 * received and unpacked into it. */
static void
pack_rows(void *arg, size_t n, size_t i0, size_t rows)
{
	struct fill *f = arg;
	const size_t H = f->heads, b = n / H, h = n % H;
	size_t t;

	if (f->pack == NULL) {
		f->total += rows;
		return;
	}
	for (t = i0; t < i0 + rows; t++) {
		double *at = f->data + ((b * f->sh.T + t) * H + h) * f->d_k;
		double *in_pack = f->pack + f->packed * f->d_k;

		if (f->unpack && f->packed == 0)
			load_later->recv(f->pack, (f->total - f->done < f->cap ?
			    f->total - f->done : f->cap) * f->d_k);
		memcpy(f->unpack ? at : in_pack, f->unpack ? in_pack : at,
		    f->d_k * sizeof *at);
		if (++f->packed < f->cap && f->done + f->packed < f->total)
			continue;
		if (!f->unpack)
			load_later->send(f->pack, f->packed * f->d_k, f->to);
		f->done += f->packed;
		f->packed = 0;
	}
}

/* attn_split_rows' each for XQ: the rows of head n (b*H + h) that no
 * head before had, each given to f->each as row t of the stack's
 * "head" b. */
static void
x_rows(void *arg, size_t n, size_t i0, size_t rows)
{
	struct fill *f = arg;
	const size_t b = n / f->sh.H;
	size_t t, r;

	for (t = i0; t < i0 + rows; t++) {
		r = b * f->sh.T + t;
		if (f->seen[r / CHAR_BIT] & (1u << r % CHAR_BIT))
			continue;
		f->seen[r / CHAR_BIT] |= (unsigned char)(1u << r % CHAR_BIT);
		f->each(f, b, t, 1);
	}
}

/* The rows of Q (or XQ) that process rank reads in the run
 * (attn_split_rows), each run given to each. */
static void
walk_rows(struct fill *f, size_t rank,
    void (*each)(void *arg, size_t n, size_t i0, size_t rows))
{
	if (f->seen == NULL) {
		attn_split_rows(&f->sh, load_later->ranks, rank, each, f);
		return;
	}
	memset(f->seen, 0, (f->sh.B * f->sh.T + CHAR_BIT - 1) / CHAR_BIT);
	f->each = each;
	attn_split_rows(&f->sh, load_later->ranks, rank, x_rows, f);
}

/* The rows of Q that process rank reads, given to pack_rows: counted
 * into *f's total when its pack is NULL, else sent to rank or received
 * from rank 0. */
static void
pack_rows_of(struct fill *f, size_t rank)
{
	f->packed = 0;
	f->done = 0;
	f->to = rank;
	walk_rows(f, rank, pack_rows);
}

/* The bytes a pack of a scattered Q's rows holds at most, whatever Q's
 * size: a message long enough that MPI sends it at the link's rate. */
#define PACK_BYTES ((size_t)1 << 20)

/* A scattered Q (read by rank 0 alone, into its stack whole): every
 * other process's stack made zeros of the whole size, then its rows
 * sent to it, a pack at a time, once every process has come this far
 * (the meeting of least); every row to every process when the shapes
 * are not those of heads (split 0). */
static enum attn_status
scatter_rows(struct inputs *in, struct fill *f, int split,
    struct attn_error *err)
{
	struct attn_array *a = &in->arr[IN_Q];
	const struct attn_matrix m = attn_array_matrix(a);
	const size_t rank = load_later->rank;
	struct attn_matrix zeros, pack;
	enum attn_status status = ATTN_OK;
	size_t k;

	memset(&pack, 0, sizeof pack);
	if (rank != 0) {
		if ((status = attn_matrix_alloc(&zeros, m.rows, m.cols, err)) !=
		    ATTN_OK)
			return status;
		a->data = zeros.data;
	}
	f->data = a->data;
	/* the pack, made before the meeting, where a refusal is still
	 * every process's news */
	f->cap = split ? PACK_BYTES / sizeof(double) / f->d_k : 0;
	f->cap = f->cap > 0 ? f->cap : 1;
	if (split && load_later->ranks > 1 &&
	    (status = attn_matrix_alloc(&pack, f->cap, f->d_k, err)) !=
	    ATTN_OK)
		return status;
	(void)load_later->least(SIZE_MAX);
	for (k = 1; split && k < load_later->ranks; k++) {
		if (rank != 0 && k != rank)
			continue;
		f->pack = NULL;
		f->total = 0;
		pack_rows_of(f, k);	/* counted */
		f->pack = pack.data;
		f->unpack = rank != 0;
		pack_rows_of(f, k);
	}
	attn_matrix_free(&pack);
	f->pack = NULL;
	if (!split)
		load_later->bcast(a->data, m.rows * m.cols);
	return ATTN_OK;
}

/* The first of Q's n elements that is not finite, SIZE_MAX for none:
 * the whole read into a chunk at a time. */
static size_t
first_fault(const struct attn_npy_later *l, size_t n)
{
	double chunk[1024];
	size_t i, k, bad;

	for (i = 0; i < n; i += k) {
		k = n - i < 1024 ? n - i : 1024;
		if ((bad = attn_npy_later_read(l, i, k, chunk)) != SIZE_MAX)
			return bad;
	}
	return SIZE_MAX;
}

/* Q's rows that this process computes, once every other input is read
 * and the heads are known; every row when the shapes are not those of
 * heads (attn_run then says why).  Where the file's order is the
 * stack's, float64 is read where it lies. */
static enum attn_status
load_q_rows(const struct options *o, struct inputs *in,
    struct attn_error *err)
{
	struct attn_array *a = &in->arr[IN_Q];
	const struct attn_matrix m = attn_array_matrix(a);
	enum attn_status status;
	const int layer = in->in.proj.w_q.data != NULL;
	struct fill f;
	size_t n;
	int split;

	memset(&rest, 0, sizeof rest);
	if (in->q_later == NULL && !in->q_scattered) {
		(void)load_later->least(SIZE_MAX);
		return ATTN_OK;
	}
	memset(&f, 0, sizeof f);
	f.in = in;
	f.first = SIZE_MAX;
	f.sh.pairs = attn_split_pairs(print_wants(o));
	/* --emulate with --check is the check's baseline, rank 0's */
	f.sh.prec = o->check == NULL ? o->emulate : ATTN_PREC_FP64;
	f.sh.B = in->in.batches;
	f.sh.H = o->cfg.heads;
	f.sh.G = o->cfg.kv_heads != 0 ? o->cfg.kv_heads : f.sh.H;
	f.sh.varlen = &in->in.varlen;
	/* XQ is one "head" of all its columns, read a row at a time */
	f.heads = layer ? 1 : f.sh.H;
	split = f.sh.B > 0 && f.sh.H > 0 && m.rows > 0 && m.cols > 0 &&
	    m.rows % f.sh.B == 0 && m.cols % f.heads == 0 && f.sh.G > 0 &&
	    f.sh.H % f.sh.G == 0;
	if (split) {
		f.sh.T = m.rows / f.sh.B;
		f.d_k = m.cols / f.heads;
	}
	if (split && layer && (f.seen = calloc((f.sh.B * f.sh.T +
	    CHAR_BIT - 1) / CHAR_BIT, 1)) == NULL)
		return attn_error_set(err, ATTN_ERR_NOMEM, NULL, 0, 0,
		    "out of memory");
	if (in->q_scattered) {
		if ((status = scatter_rows(in, &f, split, err)) == ATTN_OK &&
		    split)
			rest = f;
		free(f.seen);
		rest.seen = NULL;
		return status;
	}
	if ((status = attn_npy_later_place(in->q_later, !in->q_heads_first ||
	    f.heads == 1, a, err)) != ATTN_OK) {
		free(f.seen);
		return status;
	}
	f.data = a->lent ? NULL : a->data;
	if (split && (load_later->rank != 0 || !q_output_reads(o))) {
		walk_rows(&f, load_later->rank, fill_rows);
		free(f.seen);
		f.seen = NULL;
		rest = f;
	} else if (split) {
		/* rank 0's all, each head's rows where its stack has them */
		free(f.seen);
		f.seen = NULL;
		for (n = 0; n < f.sh.B * f.heads; n++)
			fill_rows(&f, n, 0, f.sh.T);
	} else {
		f.first = attn_npy_later_read(in->q_later, 0, m.rows * m.cols,
		    f.data);
	}
	f.first = load_later->least(f.first);
	return f.first == SIZE_MAX ? ATTN_OK :
	    attn_npy_later_fault(in->q_later, f.first, err);
}

void
load_settle(unsigned want)
{
	if (rest.in != NULL &&
	    attn_split_pairs(want) != rest.sh.pairs)
		load_rest();
}

void
load_rest(void)
{
	size_t n;

	/* a scattered Q's rows from rank 0, where every process comes */
	if (rest.in != NULL && rest.in->q_scattered)
		load_later->bcast(rest.data, rest.sh.B * rest.sh.T *
		    rest.heads * rest.d_k);
	/* read where they lie, every row is there */
	else if (rest.data != NULL)
		for (n = 0; n < rest.sh.B * rest.heads; n++)
			fill_rows(&rest, n, 0, rest.sh.T);
	memset(&rest, 0, sizeof rest);
}

/*
 * A bundle and --proj must agree: embeddings go with a layer and Q, K and
 * V with none, and only one of them may bring the layer.
 */
static enum attn_status
check_layer_source(const char *proj, const char *name,
    const struct inputs *in, struct attn_error *err)
{
	if (proj != NULL && in->layer_name != NULL)
		return attn_error_set(err, ATTN_ERR_USAGE, NULL, 0, 0,
		    "the bundle has a layer (\"proj\"), and --proj gives "
		    "another");
	if (proj != NULL && !in->embeddings)
		return attn_error_set(err, ATTN_ERR_DATA, name, 0, 0,
		    "with --proj the bundle holds embeddings (\"X\", or "
		    "\"XQ\" and \"XKV\"), not Q, K and V");
	if (proj == NULL && in->embeddings && in->layer_name == NULL)
		return attn_error_set(err, ATTN_ERR_DATA, name, 0, 0,
		    "the bundle holds embeddings (%s) but no layer: add "
		    "\"proj\" to it, or give --proj LAYER",
		    in->self ? "X" : "XQ and XKV");
	return ATTN_OK;
}

/* The one operand: a BUNDLE, or with --proj (proj set) the embeddings
 * X. */
static enum attn_status
load_bundle(const char *path, const char *proj, size_t threads,
    struct inputs *in, struct attn_error *err)
{
	const char *name = display_name(path);
	struct attn_bundle b;
	enum attn_status status;
	struct slurp f;
	size_t i;

	if ((status = slurp_file(path, &f, err)) != ATTN_OK)
		return status;
	if (!attn_is_bundle(f.buf, f.len) && proj != NULL) {
		/* --proj LAYER X: self-attention from embeddings */
		in->name[IN_Q] = in->name[IN_K] = name;
		in->embeddings = in->self = 1;
		status = attn_read_array_threads(name, f.buf, f.len,
		    ATTN_FMT_AUTO, ATTN_READ_FINITE, threads, &in->arr[IN_Q],
		    err);
		slurp_release(&f);
		if (status == ATTN_OK)
			labels_move(&in->query, &in->arr[IN_Q].row_labels);
		return status;
	}
	if (!attn_is_bundle(f.buf, f.len)) {
		slurp_release(&f);
		return attn_error_set(err, ATTN_ERR_DATA, name, 0, 0,
		    "one operand must be a JSON BUNDLE object "
		    "{\"Q\": .., \"K\": .., \"V\": ..}; "
		    "give Q K V as three files, or --self X");
	}
	status = attn_read_bundle(name, f.buf, f.len, ATTN_READ_FINITE, &b,
	    err);
	slurp_release(&f);
	if (status != ATTN_OK)
		return status;
	in->arr[IN_Q] = b.q;
	in->arr[IN_K] = b.k;
	in->arr[IN_V] = b.v;
	in->arr[IN_MASK] = b.mask;
	in->arr[IN_BIAS] = b.bias;
	for (i = 0; i < IN_COUNT; i++)
		if (in->arr[i].ndim != 0)
			in->name[i] = name;
	labels_move(&in->query, &b.query_labels);
	labels_move(&in->key, &b.key_labels);
	in->embeddings = b.embeddings;
	in->self = b.embeddings && b.k.ndim == 0;
	in->layer = b.proj;
	if (b.proj.w_q.ndim != 0)
		in->layer_name = name;
	if (in->self)
		in->name[IN_K] = name;
	return check_layer_source(proj, name, in, err);
}

/* --proj LAYER (when the bundle did not bring one) into in->layer. */
static enum attn_status
load_layer(const char *path, struct inputs *in, struct attn_error *err)
{
	const char *name = display_name(path);
	enum attn_status status;
	struct slurp f;

	if ((status = slurp_file(path, &f, err)) != ATTN_OK)
		return status;
	status = attn_read_layer(name, f.buf, f.len, &in->layer, err);
	slurp_release(&f);
	if (status == ATTN_OK)
		in->layer_name = name;
	return status;
}

/* --descale-q, -k, -v (n 0, 1, 2) X|FILE: one number for every batch and
 * KV head, or a file of them, B x G (attn_run checks the shape and the
 * values). */
static enum attn_status
load_descale(const char *arg, size_t n, size_t threads, struct inputs *in,
    struct attn_error *err)
{
	static const char *const option[3] = { "--descale-q", "--descale-k",
	    "--descale-v" };
	struct attn_matrix *m[3] = { &in->in.descale_q, &in->in.descale_k,
	    &in->in.descale_v };
	struct attn_array *a = &in->arr[IN_DESCALE_Q + n];
	enum attn_status status;
	char shape[64];
	double x;

	if (attn_parse_number(arg, strlen(arg), &x) == 0) {
		if ((in->descale[n] = malloc(sizeof *in->descale[n])) == NULL)
			return attn_error_set(err, ATTN_ERR_NOMEM, NULL, 0, 0,
			    "out of memory");
		*in->descale[n] = x;
		m[n]->rows = m[n]->cols = m[n]->stride = 1;
		m[n]->data = in->descale[n];
		return ATTN_OK;
	}
	in->name[IN_DESCALE_Q + n] = display_name(arg);
	if ((status = load_array(arg, option[n], ATTN_READ_FINITE, threads, a,
	    err)) != ATTN_OK)
		return status;
	if (a->ndim > 2) {
		attn_dims_text(shape, sizeof shape, a->shape, a->ndim);
		return attn_error_set(err, ATTN_ERR_DATA,
		    in->name[IN_DESCALE_Q + n], 0, 0, "the descale factors "
		    "are %s: give one a batch and KV head, B x G", shape);
	}
	*m[n] = attn_array_matrix(a);
	return ATTN_OK;
}

/* An input of numbers per head, at most 2-D (attn_run checks its shape
 * against the run's): --sinks FILE, one logit per head, a row or a
 * column; --alibi-slopes FILE, H slopes or B x H.  Input `role` of in,
 * read with flags; `what` names it and `want` says what to give. */
static enum attn_status
load_per_head(const char *path, const char *option, unsigned flags,
    int role, const char *what, const char *want, size_t threads,
    struct inputs *in, struct attn_matrix *m, struct attn_error *err)
{
	struct attn_array *a = &in->arr[role];
	enum attn_status status;
	char shape[64];

	in->name[role] = display_name(path);
	if ((status = load_array(path, option, ATTN_READ_FINITE | flags,
	    threads, a, err)) != ATTN_OK)
		return status;
	if (a->ndim > 2) {
		attn_dims_text(shape, sizeof shape, a->shape, a->ndim);
		return attn_error_set(err, ATTN_ERR_DATA, in->name[role], 0, 0,
		    "the %s are %s: %s", what, shape, want);
	}
	*m = attn_array_matrix(a);
	return ATTN_OK;
}

/* Q, K and V (the first n of them: --self reads only Q): all 2-D (or
 * 1-D), or all 3-D with the same B. */
static enum attn_status
batches_of(struct inputs *in, size_t n, size_t *batches,
    struct attn_error *err)
{
	char s0[64], s1[64];
	size_t i, b[3];

	for (i = 0; i < n; i++) {
		const struct attn_array *a = &in->arr[i];

		if (a->ndim > 3) {
			attn_dims_text(s0, sizeof s0, a->shape, a->ndim);
			return attn_error_set(err, ATTN_ERR_DATA, in->name[i], 0, 0,
			    "%s is %zu-D (%s): embeddings are 2-D, or a 3-D "
			    "stack of them (4-D is for Q, K and V, laid out as "
			    "--layout says)", inputs_role(in, i), a->ndim, s0);
		}
		b[i] = a->ndim == 3 ? a->shape[0] : 0;
	}
	for (i = 1; i < n; i++)
		if (b[i] != b[0]) {
			attn_dims_text(s0, sizeof s0, in->arr[0].shape,
			    in->arr[0].ndim);
			attn_dims_text(s1, sizeof s1, in->arr[i].shape,
			    in->arr[i].ndim);
			return attn_error_set(err, ATTN_ERR_DATA, NULL, 0, 0,
			    "batch mismatch: %s is %s but %s is %s: %s must "
			    "all be 2-D, or all 3-D stacks of the same number "
			    "of matrices", inputs_role(in, 0), s0, inputs_role(in, i),
			    s1, in->embeddings ? "XQ and XKV" : "Q, K and V");
		}
	*batches = b[0] != 0 ? b[0] : 1;
	return ATTN_OK;
}

/* A 3-D dO holds a block per batch. */
static enum attn_status
check_grad_batches(const struct inputs *in, struct attn_error *err)
{
	const struct attn_array *a = &in->arr[IN_DO];
	char got[64], q[64];

	if (a->ndim <= 2 || (a->ndim == 3 && a->shape[0] == in->in.batches))
		return ATTN_OK;
	attn_dims_text(got, sizeof got, a->shape, a->ndim);
	attn_dims_text(q, sizeof q, in->arr[IN_Q].shape,
	    in->arr[IN_Q].ndim);
	return attn_error_set(err, ATTN_ERR_DATA, in->name[IN_DO], 0, 0,
	    "shape mismatch: dO is %s but %s is %s: dO, the gradient of the "
	    "output, holds a block per batch of %s (B x T x H*d_v)", got,
	    inputs_role(in, IN_Q), q, inputs_role(in, IN_Q));
}

/*
 * --dropout-mask FILE, read as every FILE option is (load_array), then
 * made 1 where a weight is kept and 0 where it is dropped: an array of
 * 0s and 1s alone holds booleans (1 or true keeps); any other is
 * FlashAttention-2's S_dmask, whose negative entries are the dropped
 * ones (attention_ref's dropout_mask = S_dmask >= 0; attn(1)).
 */
static enum attn_status
load_dropout(const char *path, size_t threads, struct inputs *in,
    struct attn_error *err)
{
	struct attn_array *a = &in->arr[IN_DROPOUT];
	enum attn_status status;
	size_t n = 1, i;
	int booleans = 1;

	in->name[IN_DROPOUT] = display_name(path);
	if ((status = load_array(path, "--dropout-mask", ATTN_READ_BOOL |
	    ATTN_READ_DROPOUT, threads, a, err)) != ATTN_OK)
		return status;
	for (i = 0; i < a->ndim; i++)
		n *= a->shape[i];
	for (i = 0; i < n && booleans; i++)
		booleans = a->data[i] == 0.0 || a->data[i] == 1.0;
	for (i = 0; i < n && !booleans; i++)
		a->data[i] = a->data[i] >= 0.0 ? 1.0 : 0.0;
	return ATTN_OK;
}

/*
 * A 4-D dropout mask longer than T or S, and no shorter, is most likely
 * FlashAttention-2's S_dmask as it returns it, T and S rounded up to
 * whole blocks of its tiles: say how to cut it.
 */
static enum attn_status
dropout_padded(const struct inputs *in, struct attn_error *err)
{
	const struct attn_array *a = &in->arr[IN_DROPOUT];
	const size_t B = in->in.batches, T = in->in.q.rows / B,
	    S = in->in.k.rows / B;
	char got[64];

	if (a->ndim != 4 || a->shape[2] < T || a->shape[3] < S ||
	    (a->shape[2] == T && a->shape[3] == S))
		return ATTN_OK;
	attn_dims_text(got, sizeof got, a->shape, a->ndim);
	return attn_error_set(err, ATTN_ERR_DATA, in->name[IN_DROPOUT], 0, 0,
	    "shape mismatch: the dropout mask is %s but T x S = %zux%zu: "
	    "FlashAttention-2 returns S_dmask padded to whole tiles; cut it "
	    "to S_dmask[:, :, :%zu, :%zu]", got, T, S, T, S);
}

/*
 * A mask or bias, broadcast (layout_broadcast), is T x S, B x T x S or
 * B x H x T x S, or 2-D blocks of those stacked: say which blocks it
 * has, or name both shapes and the rule attn applies.  A 3-D or 4-D one
 * that does not broadcast is told by attn_array_broadcast, so what fails
 * here is 1-D or 2-D.
 */
static enum attn_status
blocks_of(const struct inputs *in, size_t i, size_t heads, size_t *blocks,
    struct attn_error *err)
{
	const struct attn_array *a = &in->arr[i];
	const struct attn_matrix q = in->in.q, k = in->in.k;
	const size_t B = in->in.batches, T = q.rows / B, S = k.rows / B;
	struct attn_matrix m = attn_array_matrix(a);
	char got[64], stacks[128];

	/* As attn_array_broadcast leaves it.  2-D: one block (a row, or T
	 * rows), or B*T or B*H*T rows stacked as attn's csv writes them;
	 * 3-D: B blocks; 4-D: B x H.  The library's rule for the blocks,
	 * and which dim is which where the array has them. */
	*blocks = a->ndim == 3 ? a->shape[0] : a->ndim == 4 ?
	    a->shape[0] * a->shape[1] : m.rows == 1 ? 1 : T == 0 ? 0 :
	    m.rows / T;
	if (attn_input_blocks_fit(&m, *blocks, B, heads, T, S) &&
	    (a->ndim <= 2 || a->shape[0] == B) &&
	    (a->ndim <= 3 || a->shape[1] == heads))
		return ATTN_OK;
	attn_dims_text(got, sizeof got, a->shape, a->ndim);
	stacks[0] = '\0';
	if (B > 1 && heads > 1)
		snprintf(stacks, sizeof stacks, ", or B = %zu or B*H = %zu of "
		    "them stacked", B, B * heads);
	else if (B > 1 || heads > 1)
		snprintf(stacks, sizeof stacks, ", or %s = %zu of them stacked",
		    B > 1 ? "B" : "H", B * heads);
	return attn_error_set(err, ATTN_ERR_DATA, in->name[i], 0, 0,
	    "shape mismatch: %s is %s but T x S = %zux%zu: a 2-D %s is T x S, "
	    "1 x S or T x 1 (each dim 1 or the scores' own)%s; 3-D is "
	    "B x T x S (H x T x S with 4-D inputs), 4-D B x H x T x S",
	    inputs_role(in, i), got, T, S, inputs_role(in, i), stacks);
}

static enum attn_status
load_all(struct options *o, struct inputs *in, struct attn_error *err)
{
	const size_t j = o->cfg.threads;	/* 0: a thread a CPU */
	enum attn_status status;
	int side = 0;		/* read side by side */
	size_t i;

	memset(in, 0, sizeof *in);
	in->caches = paged_caches(o);
	if (o->self != NULL) {
		in->name[IN_Q] = display_name(o->self);
		if ((status = load_array(o->self, "--self", ATTN_READ_FINITE,
		    j, &in->arr[IN_Q], err)) != ATTN_OK)
			return status;
		in->name[IN_K] = in->name[IN_V] = in->name[IN_Q];
		labels_move(&in->query, &in->arr[IN_Q].row_labels);
	} else if (o->softmax) {
		/* SCORES [V]: the logits as Q, and K made the identity */
		in->logits = 1;
		for (i = 0; i < o->noperands; i++) {
			const size_t at = i == 0 ? IN_Q : IN_V;

			in->name[at] = display_name(o->operands[i]);
			if ((status = load_array(o->operands[i], NULL,
			    ATTN_READ_FINITE, j, &in->arr[at], err)) !=
			    ATTN_OK)
				return status;
		}
		labels_move(&in->query, &in->arr[IN_Q].row_labels);
		if ((status = logits_keys(o, in, err)) != ATTN_OK)
			return status;
	} else if (o->noperands == 1) {
		if ((status = load_bundle(o->operands[0], o->proj, j, in,
		    err)) != ATTN_OK)
			return status;
	} else {
		/* Q K V, or with --proj LAYER the embeddings XQ XKV
		 * (cross-attention) */
		in->embeddings = o->proj != NULL;
		side = load_side_by_side(o, in, j);
		for (i = 0; !side && i < (in->embeddings ? 2u : 3u); i++) {
			in->name[i] = display_name(o->operands[i]);
			if ((status = load_array_later(o->operands[i], NULL,
			    operand_flags(in, i), j, &in->arr[i], i == IN_Q &&
			    q_later_wanted(o) ? in : NULL, err)) !=
			    ATTN_OK)
				return status;
		}
		labels_move(&in->query, &in->arr[IN_Q].row_labels);
		labels_move(&in->key, &in->arr[IN_K].row_labels);
	}

	/* --mask and --bias, unless the bundle brought them. */
	if (!side && (o->mask != NULL || o->bias != NULL)) {
		const char *path[2] = { o->mask, o->bias };
		const char *option[2] = { "--mask", "--bias" };
		const unsigned flags[2] = { ATTN_READ_BOOL, ATTN_READ_BIAS };

		for (i = 0; i < 2; i++) {
			struct attn_array *a = &in->arr[IN_MASK + i];

			if (path[i] == NULL)
				continue;
			if (a->ndim != 0)
				return attn_error_set(err, ATTN_ERR_USAGE, NULL, 0,
				    0, "the bundle has a %s, and --%s gives "
				    "another", inputs_role(in, IN_MASK + i),
				    inputs_role(in, IN_MASK + i));
			in->name[IN_MASK + i] = display_name(path[i]);
			if ((status = load_array(path[i], option[i], flags[i],
			    j, a, err)) != ATTN_OK)
				return status;
		}
	}
	if ((status = rules_mask_invert(o, in->arr[IN_MASK].ndim != 0, err)) !=
	    ATTN_OK)
		return status;
	if (!side && o->grad != NULL) {
		in->name[IN_DO] = display_name(o->grad);
		if ((status = load_array(o->grad, "--grad", ATTN_READ_FINITE,
		    j, &in->arr[IN_DO], err)) != ATTN_OK)
			return status;
	}
	if (o->proj != NULL && in->layer_name == NULL &&
	    (status = load_layer(o->proj, in, err)) != ATTN_OK)
		return status;
	if (o->sinks != NULL && (status = load_per_head(o->sinks, "--sinks",
	    ATTN_READ_SINKS, IN_SINKS, "sinks", "give one sink logit per "
	    "head, in a row or a column", j, in, &in->in.sinks, err)) !=
	    ATTN_OK)
		return status;
	for (i = 0; i < 3; i++)
		if (o->descale[i] != NULL && (status = load_descale(
		    o->descale[i], i, j, in, err)) != ATTN_OK)
			return status;
	/* --alibi-slopes turned ALiBi on (options_set.c) */
	if (o->alibi_slopes != NULL && (status = load_per_head(o->alibi_slopes,
	    "--alibi-slopes", ATTN_READ_SLOPES, IN_SLOPES, "ALiBi slopes",
	    "give one slope per head (H), or one per batch and head (B x H)",
	    j, in, &in->in.alibi_slopes, err)) != ATTN_OK)
		return status;
	/* the tables of paged caches: pages named, whole numbers */
	for (i = 0; i < 4; i++) {
		const char *path[4] = { o->block_table, o->kv_indptr,
		    o->kv_indices, o->kv_last_page_len };
		static const char *const option[4] = { "--block-table",
		    "--kv-indptr", "--kv-indices", "--kv-last-page-len" };
		struct attn_matrix m;

		if (path[i] != NULL && (status = load_per_head(path[i],
		    option[i], ATTN_READ_INT, IN_BLOCK_TABLE + (int)i,
		    i == 0 ? "block table's pages" : "page numbers", i == 0 ?
		    "give B x max_blocks pages" : "give one list", j, in, &m,
		    err)) != ATTN_OK)
			return status;
	}
	if (o->dropout_mask != NULL && (status = load_dropout(o->dropout_mask,
	    j, in, err)) != ATTN_OK)
		return status;
	in->self = in->self || o->self != NULL;
	/* Every input read: a warning may explain a shape error to come. */
	warn_notices(in);
	/* Packed sequences: their offsets, and Q, K and V total x H x D
	 * folded; 4-D Q, K and V: the heads and layout come from their
	 * shapes (embeddings are not laid out in heads). */
	if ((status = varlen_load(o, in, err)) != ATTN_OK ||
	    (status = layout_fold(o, in, in->embeddings ? 0 : in->self ? 1 : 3,
	    err)) != ATTN_OK || (status = rules_heads(o, err)) != ATTN_OK)
		return status;

	/* (paged caches hold pages, not batches) */
	if ((status = batches_of(in, in->self ||
	    in->caches == CACHES_PAGED ? 1 : in->embeddings ? 2 : 3,
	    &in->in.batches, err)) != ATTN_OK)
		return status;
	in->in.q = attn_array_matrix(&in->arr[IN_Q]);
	in->in.proj = attn_layer_proj(&in->layer);
	if (in->self) {
		in->in.k = in->in.v = in->in.q;
	} else if (in->embeddings) {
		/* XKV; v is not read, but it is K's rows for the mask */
		in->in.k = in->in.v = attn_array_matrix(&in->arr[IN_K]);
	} else {
		in->in.k = attn_array_matrix(&in->arr[IN_K]);
		in->in.v = attn_array_matrix(&in->arr[IN_V]);
	}
	if (o->grad != NULL) {
		if ((status = check_grad_batches(in, err)) != ATTN_OK)
			return status;
		in->in.d_out = attn_array_matrix(&in->arr[IN_DO]);
	}
	if (in->caches != CACHES_NONE && (status = paged_gather(in, err)) !=
	    ATTN_OK)
		return status;
	if (in->in.k.rows != in->in.v.rows)
		return ATTN_OK;	/* attn_run names both shapes */
	if ((status = varlen_valid_lens(o, in, err)) != ATTN_OK)
		return status;
	/* The mask, the bias and the dropout mask: broadcast, and their
	 * blocks counted. */
	for (i = 0; i < 3; i++) {
		const size_t at = i == 0 ? IN_MASK : i == 1 ? IN_BIAS :
		    IN_DROPOUT;
		struct attn_matrix *m = i == 0 ? &in->in.mask : i == 1 ?
		    &in->in.bias : &in->in.dropout_mask;
		size_t *blocks = i == 0 ? &in->in.mask_blocks : i == 1 ?
		    &in->in.bias_blocks : &in->in.dropout_blocks;

		if (in->arr[at].ndim == 0)
			continue;
		if (at == IN_DROPOUT &&
		    (status = dropout_padded(in, err)) != ATTN_OK)
			return status;
		if ((status = layout_broadcast(in, at, o->cfg.heads, err)) !=
		    ATTN_OK || (status = blocks_of(in, at, o->cfg.heads, blocks,
		    err)) != ATTN_OK)
			return status;
		*m = attn_array_matrix(&in->arr[at]);
	}
	return ATTN_OK;
}

enum attn_status
load_inputs(struct options *o, struct inputs *in, struct attn_error *err)
{
	enum attn_status status = load_all(o, in, err);
	struct options run;
	struct attn_matrix q;
	size_t first;

	/* Q read later: its rows once every input is read, for the stages
	 * the run computes, as run.c offers them once the inputs are read;
	 * else, its header alone read, a fault of Q's is attn's first */
	if (status == ATTN_OK && load_later != NULL) {
		run = *o;
		options_offer(&run, attn_stages_available(&o->cfg, &in->in),
		    in->in.proj.w_q.data != NULL);
		if ((status = load_q_rows(&run, in, err)) == ATTN_OK)
			in->in.q.data = in->arr[IN_Q].data;
	} else if (status != ATTN_OK && in->q_later != NULL &&
	    in->arr[IN_Q].data == NULL) {
		q = attn_array_matrix(&in->arr[IN_Q]);
		if ((first = first_fault(in->q_later, q.rows * q.cols)) !=
		    SIZE_MAX)
			status = attn_npy_later_fault(in->q_later, first, err);
	}
	return status;
}
