/*
 * main.c - attn-mpi: attn's command line (cli/command.c) run by every
 * process of an MPI job, each computing a share of the kernel's tasks
 * (attn_split in attn_private.h), as attn(1) says in "Beyond one
 * machine: attn-mpi".
 *
 * Every process runs attn's whole command line up to the kernel; hooks
 * of cli/run.c (run_hooks) and slurp.c (slurp_hook) make it one job:
 *
 *   reading  a .npy or .npz is read by every process, anything else by
 *            rank 0 alone, which broadcasts its bytes (share_read); Q,
 *            where the kernel alone reads it, only for the rows this
 *            process computes, once every input is read: from a .npy by
 *            each process, else by rank 0 alone, which sends each
 *            process its rows (load_later, cli/load.h).
 *   compute  the stages in attn_run's place: each process computes its
 *            share into stages of the whole size, zero outside it, and
 *            after the kernel an MPI_Reduce with MPI_BOR over their bits
 *            makes them whole on rank 0: each element is one process's,
 *            the others' zero (or the same bits on all, as the passes
 *            before the kernel make them), so no number is summed twice
 *            and the bytes are attn's.  The rows of another process's
 *            share are never touched in the others, so they cost no
 *            memory there.
 *   whole    rank 0 alone then checks and writes; the others go on to
 *            the output's meeting at once, and end with status 0, so
 *            that the job's is rank 0's.
 *   output   before the output is written: only rank 0 writes it, once
 *            every process has come this far.
 *
 * The processes meet at a few points (sync_point: before the kernel,
 * after it, before the output, at the end), each one MPI_Allreduce of
 * the same shape, so that a process that failed anywhere (bad input,
 * memory refused) meets the others wherever they wait: all then learn
 * the lowest rank that failed, whose exit code and message line are
 * broadcast, and end.  Rank 0 writes that line, "attn: rank N: ...", or
 * when it failed itself its own line, which is attn's: bad input that
 * every process sees is reported once, as attn reports it.  A kernel
 * that failed (an overflow) makes every process compute whole instead,
 * so that the fault reported is the first one attn finds.  The other
 * ranks' standard output goes to /dev/null and their messages to a
 * temporary file, read back for that line.  A rank killed by SIGTERM,
 * SIGINT or SIGHUP from outside the job says so in one line before it
 * dies; the launcher then ends the others, and rank 0, ended so with no
 * line said, says why in one (a rank killed by SIGKILL, or crashed).
 */
#define _XOPEN_SOURCE 700	/* SA_SIGINFO */
#include <fcntl.h>
#include <limits.h>
#include <mpi.h>
#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "attn.h"
#include "attn_io.h"
#include "attn_private.h"
#include "command.h"
#include "load.h"
#include "memory.h"
#include "output.h"
#include "run.h"
#include "slurp.h"

static int rank, ranks;
/* A fault was shared, or every process has passed the output's point:
 * no more meetings. */
static volatile sig_atomic_t finished;
/* Some process's kernel failed: compute whole. */
static int compute_whole;
/* Where this process's messages go: stderr on rank 0, else a temporary
 * file; and the job's stderr, for the signal line. */
static int job_stderr = STDERR_FILENO;

enum phase { PHASE_READ = 1, PHASE_ROWS, PHASE_COMPUTE, PHASE_MERGE,
	PHASE_OUTPUT, PHASE_END };
enum fault { FAULT_NONE, FAULT_KERNEL, FAULT_RANK };

/* The first line of this process's messages, "attn: " left out, into
 * buf. */
static void
first_line(char *buf, size_t size, int code)
{
	ssize_t n;
	char *nl;

	fflush(stderr);
	n = pread(STDERR_FILENO, buf, size - 1, 0);
	buf[n > 0 ? n : 0] = '\0';
	if ((nl = strchr(buf, '\n')) != NULL)
		*nl = '\0';
	if (strncmp(buf, "attn: ", 6) == 0)
		memmove(buf, buf + 6, strlen(buf + 6) + 1);
	if (buf[0] == '\0')
		snprintf(buf, size, "failed with exit status %d", code);
}

/* Rank k failed with exit code `code`: every process learns its code and
 * line, rank 0 writes the line (its own is written already), and all
 * end with that code. */
static _Noreturn void
end_shared(int k, int code)
{
	struct {
		int code;
		char line[1024];
	} m;

	memset(&m, 0, sizeof m);
	if (rank == k) {
		m.code = code;
		if (k != 0)
			first_line(m.line, sizeof m.line, code);
	}
	MPI_Bcast(&m, (int)sizeof m, MPI_BYTE, k, MPI_COMM_WORLD);
	finished = 1;
	if (rank == 0 && k != 0) {
		fprintf(stderr, "attn: rank %d: %s\n", k, m.line);
		fflush(stderr);
	}
	MPI_Finalize();
	exit(m.code);
}

/*
 * Meet the other processes at phase with this one's fault (and exit
 * code, for FAULT_RANK).  Ends the process when some process failed;
 * returns FAULT_KERNEL when some kernel failed, else FAULT_NONE.
 */
static enum fault
sync_point(enum phase phase, enum fault fault, int code)
{
	int v[4], w[4];

	v[0] = fault == FAULT_RANK ? ranks - rank : 0;	/* the lowest */
	v[1] = fault == FAULT_KERNEL;
	v[2] = fault == FAULT_RANK ? INT_MIN : (int)phase;
	v[3] = fault == FAULT_RANK ? INT_MIN : -(int)phase;
	MPI_Allreduce(v, w, 4, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
	if (w[0] > 0)
		end_shared(ranks - w[0], code);
	if (w[2] != -w[3]) {
		fprintf(stderr, "attn: rank %d: internal error: the processes "
		    "met at different points (%d and %d)\n", rank, -w[3],
		    w[2]);
		MPI_Abort(MPI_COMM_WORLD, 70);
	}
	return w[1] ? FAULT_KERNEL : FAULT_NONE;
}

/* m's elements on rank 0 made the bitwise or of every process's. */
static void
or_to_rank0(struct attn_matrix *m)
{
	const size_t most = (size_t)1 << 26;	/* elements an MPI call */
	size_t i, n, k;

	if (m->data == NULL || m->rows == 0 || m->cols == 0)
		return;
	/* the stacks are contiguous, row after row */
	n = m->stride == m->cols ? m->rows * m->cols : m->cols;
	for (i = 0; i < (m->stride == m->cols ? 1 : m->rows); i++)
		for (k = 0; k < n; k += most)
			MPI_Reduce(rank == 0 ? MPI_IN_PLACE : m->data +
			    i * m->stride + k, m->data + i * m->stride + k,
			    (int)(n - k < most ? n - k : most), MPI_UINT64_T,
			    MPI_BOR, 0, MPI_COMM_WORLD);
}

static enum attn_status
merge(void *arg, enum attn_status st, struct attn_stages *out,
    struct attn_matrix *sums, struct attn_error *err)
{
	size_t s;

	(void)arg;
	if (sync_point(PHASE_MERGE, st == ATTN_OK ? FAULT_NONE :
	    FAULT_KERNEL, 0) != FAULT_NONE) {
		compute_whole = 1;
		return attn_error_set(err, ATTN_ERR_INTERNAL, NULL, 0, 0,
		    "a share failed");
	}
	for (s = 0; s < ATTN_STAGE_COUNT; s++)
		or_to_rank0(&out->stage[s]);
	or_to_rank0(sums);
	return ATTN_OK;
}

static enum attn_status
compute(const struct attn_config *cfg, const struct attn_inputs *in,
    unsigned want, enum attn_precision prec, struct attn_stages *out,
    struct attn_error *err)
{
	struct attn_split split;
	enum attn_status st;

	sync_point(PHASE_COMPUTE, FAULT_NONE, 0);
	load_settle(want);
	split.rank = (size_t)rank;
	split.ranks = (size_t)ranks;
	split.merge = merge;
	split.arg = NULL;
	st = attn_run_split(cfg, in, want, prec, &split, out, err);
	if (st == ATTN_OK || !compute_whole)
		return st;
	/* a kernel failed: the fault attn reports is the first of the
	 * whole run's, with every row of Q */
	compute_whole = 0;
	load_rest();
	return attn_run_split(cfg, in, want, prec, NULL, out, err);
}

static enum attn_status
output(int *write, struct attn_error *err)
{
	(void)err;
	sync_point(PHASE_OUTPUT, FAULT_NONE, 0);
	finished = 1;
	*write = rank == 0;
	return ATTN_OK;
}

/* Rank 0 holds the stages whole; the others their shares. */
static int
holds_whole(void)
{
	return rank == 0;
}

static const struct run_hooks hooks = { compute, output, holds_whole };

/* ---------------------------------------------------------------- reading */

/*
 * Every input attn reads comes through share_read, in the same order in
 * every process (slurp.h).  A .npy or .npz file is read by every process
 * from its own disk or the shared one, as attn reads it; anything else
 * (text, standard input, a pipe) is read once, by rank 0, and its bytes
 * broadcast, so that standard input, which mpirun gives to rank 0 alone,
 * and a pipe, which can be read once, are the same input everywhere;
 * with slurp_alone (Q's), rank 0 reads it and the others do not, and
 * load.c shares what they need.
 * After each read the processes agree that all of them have it; when one
 * has not, it fails as attn would, and the others wait for its line at
 * the end (sync_point).  Each read begins with a meeting, where a process
 * that failed since the last one (parsing what it read) is waiting at
 * the end; within a read every process makes the same calls, whatever
 * its own read did.
 */
enum { READ_BROADCAST, READ_EACH, READ_ALONE };

/* A regular file that begins as NumPy's do: a .npy, or a .npz, a zip
 * archive (attn_is_zip).  Anything else is not opened here: opening a
 * FIFO would wait for its writer, and closing it would lose what the
 * writer wrote. */
static int
numpy_file(const char *path)
{
	char head[6];
	struct stat sb;
	ssize_t n;
	int fd;

	if (strcmp(path, "-") == 0 || stat(path, &sb) != 0 ||
	    !S_ISREG(sb.st_mode) || (fd = open(path, O_RDONLY)) < 0)
		return 0;
	n = pread(fd, head, sizeof head, 0);
	close(fd);
	return n > 0 && (attn_is_npy(head, (size_t)n) ||
	    attn_is_zip(head, (size_t)n));
}

/* Whether every process has ok; when not, a process that has it gives
 * in back and waits for the failed one's line, which ends the job. */
static int
all_read(int ok, struct slurp *in)
{
	int all;

	MPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
	if (all || !ok)
		return all;
	slurp_release(in);
	sync_point(PHASE_END, FAULT_NONE, 0);
	fputs("attn: internal error: a process failed to read and did not "
	    "say so\n", stderr);
	MPI_Abort(MPI_COMM_WORLD, 70);
	return 0;
}

/*
 * A .npy that slurp mapped may stay mapped until the process ends
 * (slurp_keep), for its reader to read float64 data in C order where it
 * lies: load.c does so for Q, so that the processes of one machine
 * share the page cache's one copy of it instead of each holding its
 * own.  The file stays open and its SIGBUS caught, so that a file cut
 * short meanwhile is still told (signals.h).
 */
static void
keep_mapped(struct slurp *in)
{
	in->keepable = in->span != 0 && attn_is_npy(in->buf, in->len);
}

/* n bytes at p broadcast from rank 0, in pieces an int counts. */
static void
broadcast_bytes(char *p, size_t n)
{
	const size_t most = (size_t)1 << 30;
	size_t k;

	for (k = 0; k < n; k += most)
		MPI_Bcast(p + k, (int)(n - k < most ? n - k : most), MPI_BYTE,
		    0, MPI_COMM_WORLD);
}

/* A buffer for the len bytes of name that rank 0 read, charged as a
 * read of them would be. */
static enum attn_status
receiver(const char *name, size_t len, struct slurp *in,
    struct attn_error *err)
{
	size_t ncap = len + 2;
	enum attn_status st;

	if ((st = memory_read_begin(&in->mr, name, err)) != ATTN_OK)
		return st;
	if (len > SIZE_MAX - 2)
		st = attn_error_set(err, ATTN_ERR_NOMEM, name, 0, 0,
		    "out of memory");
	else if ((st = memory_read_grow(&in->mr, 0, len + 2, &ncap, err)) ==
	    ATTN_OK && (in->buf = malloc(len + 1)) == NULL)
		st = attn_error_set(err, ATTN_ERR_NOMEM, name, 0, 0,
		    "out of memory reading %zu bytes", len);
	if (st != ATTN_OK)
		memory_read_release(&in->mr);
	return st;
}

static enum attn_status
share_read(const char *path, struct slurp *in, struct attn_error *err)
{
	enum attn_status st = ATTN_OK;
	uint64_t head[3];	/* how read; rank 0's status; its bytes */
	size_t len;

	sync_point(PHASE_READ, FAULT_NONE, 0);
	if (rank == 0) {
		head[0] = numpy_file(path) ? READ_EACH : slurp_alone ?
		    READ_ALONE : READ_BROADCAST;
		if (head[0] != READ_EACH)
			st = slurp_read(path, in, err);
		head[1] = (uint64_t)st;
		head[2] = st == ATTN_OK && head[0] == READ_BROADCAST ?
		    in->len : 0;
	}
	MPI_Bcast(head, 3, MPI_UINT64_T, 0, MPI_COMM_WORLD);
	if (head[0] == READ_EACH) {
		in->lazy = 1;	/* Q's rows are read by those that need them */
		st = slurp_read(path, in, err);
		if (!all_read(st == ATTN_OK, in))
			return st;
		keep_mapped(in);
		return ATTN_OK;
	}
	if (head[1] != ATTN_OK) {
		/* rank 0 says why; the others wait for its line */
		if (rank == 0)
			return st;
		sync_point(PHASE_END, FAULT_NONE, 0);
		return attn_error_set(err, ATTN_ERR_INTERNAL, NULL, 0, 0,
		    "rank 0 failed to read and did not say so");
	}
	if (head[0] == READ_ALONE) {
		/* rank 0's alone: the others get its dims (load.h) */
		in->alone = rank == 0 ? 1 : -1;
		return ATTN_OK;
	}
	len = (size_t)head[2];
	if (rank != 0)
		st = receiver(strcmp(path, "-") == 0 ? STDIN_NAME : path, len,
		    in, err);
	if (!all_read(st == ATTN_OK, in))
		return st;
	broadcast_bytes(in->buf, len);
	if (rank != 0) {
		in->buf[len] = '\0';
		in->len = len;
		memory_read_end(&in->mr);
	}
	return ATTN_OK;
}

/* ---------------------------------------------------------------- Q's rows */

/* The least of every process's first element of Q not finite, once all
 * have read their inputs (load.h). */
static size_t
q_least(size_t first)
{
	uint64_t mine = first == SIZE_MAX ? UINT64_MAX : (uint64_t)first, all;

	sync_point(PHASE_ROWS, FAULT_NONE, 0);
	MPI_Allreduce(&mine, &all, 1, MPI_UINT64_T, MPI_MIN, MPI_COMM_WORLD);
	return all == UINT64_MAX ? SIZE_MAX : (size_t)all;
}

/* Rank 0's dims of the Q it read alone, given to every process once all
 * have come this far. */
static enum attn_status
q_dims(struct attn_array *a, struct attn_error *err)
{
	uint64_t d[1 + ATTN_MAX_DIMS];
	size_t k;

	(void)err;
	sync_point(PHASE_READ, FAULT_NONE, 0);
	d[0] = a->ndim;
	for (k = 0; k < ATTN_MAX_DIMS; k++)
		d[1 + k] = a->shape[k];
	MPI_Bcast(d, 1 + ATTN_MAX_DIMS, MPI_UINT64_T, 0, MPI_COMM_WORLD);
	if (rank != 0) {
		memset(a, 0, sizeof *a);
		a->ndim = (size_t)d[0];
		for (k = 0; k < ATTN_MAX_DIMS; k++)
			a->shape[k] = (size_t)d[1 + k];
	}
	return ATTN_OK;
}

/* n doubles, their bits, in pieces an int counts. */
#define PIECE ((size_t)1 << 26)

static void
q_send(const double *p, size_t n, size_t to)
{
	size_t k;

	for (k = 0; k < n; k += PIECE)
		MPI_Send(p + k, (int)(n - k < PIECE ? n - k : PIECE),
		    MPI_UINT64_T, (int)to, 0, MPI_COMM_WORLD);
}

static void
q_recv(double *p, size_t n)
{
	size_t k;

	for (k = 0; k < n; k += PIECE)
		MPI_Recv(p + k, (int)(n - k < PIECE ? n - k : PIECE),
		    MPI_UINT64_T, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
}

/* n doubles broadcast from rank 0, their bits. */
static void
q_bcast(double *p, size_t n)
{
	broadcast_bytes((char *)p, n * sizeof *p);
}

static struct load_later later = { 0, 1, q_least, q_dims, q_send, q_recv,
	q_bcast };

/* ---------------------------------------------------------------- signals */

static const int fatal_signals[] = { SIGTERM, SIGINT, SIGHUP };
static char signal_line[3][96];
/* The launcher ends the job before its processes met on a fault: a
 * process died where no handler runs (SIGKILL, a crash), whose death
 * mpirun -q reports with no word, or mpirun itself was stopped. */
static const char launcher_line[] = "attn: rank 0: ended by mpirun before "
    "the processes finished: another process died without a message "
    "(SIGKILL or a crash), or mpirun was stopped; mpirun without -q "
    "names it\n";

/*
 * Where a process killed from outside tells rank 0 that it said why, so
 * that rank 0, ended by the launcher next, does not add its line: a
 * datagram socket of rank 0's in Linux's abstract namespace, named by
 * the user and the launcher's pid, which leaves nothing in any file
 * system and is gone with rank 0 however it ends.  A process on another
 * machine, or killed before rank 0 made it, is not heard, and rank 0
 * then writes its line too.
 */
static struct sockaddr_un said_addr;
static socklen_t said_len;	/* 0: no name */
static int said_fd = -1;	/* rank 0's socket */

static void
said_init(void)
{
	int n = snprintf(said_addr.sun_path + 1, sizeof said_addr.sun_path - 1,
	    "attn-mpi.%ld.%ld", (long)getuid(), (long)getppid());

	said_addr.sun_family = AF_UNIX;
	if (n < 0 || (size_t)n >= sizeof said_addr.sun_path - 1)
		return;
	said_len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 +
	    (size_t)n);
	if (rank == 0 && ((said_fd = socket(AF_UNIX, SOCK_DGRAM |
	    SOCK_CLOEXEC | SOCK_NONBLOCK, 0)) < 0 || bind(said_fd,
	    (const struct sockaddr *)&said_addr, said_len) != 0)) {
		if (said_fd >= 0)
			close(said_fd);
		said_fd = -1;
	}
}

/* In a signal handler: a process but rank 0 says it said why. */
static void
said_tell(void)
{
	int fd;

	if (rank == 0 || said_len == 0 ||
	    (fd = socket(AF_UNIX, SOCK_DGRAM, 0)) < 0)
		return;
	(void)sendto(fd, "k", 1, MSG_DONTWAIT,
	    (const struct sockaddr *)&said_addr, said_len);
	close(fd);
}

/* In a signal handler: whether a process told rank 0 so. */
static int
said_heard(void)
{
	char c;

	return said_fd >= 0 && recv(said_fd, &c, 1, MSG_DONTWAIT) == 1;
}

/* A signal from outside the job: one line, then the signal's own death.
 * From the launcher (this process's parent), rank 0 alone says why, once
 * no fault of the job's own has been shared (the launcher also ends
 * processes that are ending on one) and no process of this machine was
 * killed from outside. */
static void
on_signal(int sig, siginfo_t *si, void *ctx)
{
	const char *line = NULL;
	ssize_t w = 0;
	size_t k;

	(void)ctx;
	for (k = 0; k < 3; k++)
		if (fatal_signals[k] == sig && si->si_pid != getppid()) {
			line = signal_line[k];
			said_tell();
		} else if (fatal_signals[k] == sig && rank == 0) {
			line = finished || said_heard() ? NULL : launcher_line;
		}
	/* a line that cannot be written leaves the death to say it */
	if (line != NULL)
		w = write(job_stderr, line, strlen(line));
	(void)w;
	signal(sig, SIG_DFL);
	raise(sig);
}

static void
signals_init(void)
{
	static const char *const names[] = { "SIGTERM", "SIGINT", "SIGHUP" };
	struct sigaction sa, old;
	size_t k;

	said_init();
	memset(&sa, 0, sizeof sa);
	sa.sa_sigaction = on_signal;
	sa.sa_flags = SA_SIGINFO;
	sigemptyset(&sa.sa_mask);
	for (k = 0; k < 3; k++) {
		snprintf(signal_line[k], sizeof signal_line[k],
		    "attn: rank %d: killed by signal %d (%s)\n", rank,
		    fatal_signals[k], names[k]);
		/* one ignored when the job started stays ignored */
		if (sigaction(fatal_signals[k], NULL, &old) == 0 &&
		    old.sa_handler != SIG_IGN)
			sigaction(fatal_signals[k], &sa, NULL);
	}
}

/* Ranks but 0: standard output to /dev/null, messages to a temporary
 * file (first_line reads it). */
static int
quiet(void)
{
	FILE *msgs = tmpfile();
	int null = open("/dev/null", O_WRONLY);

	if (msgs == NULL || null < 0 || (job_stderr = dup(STDERR_FILENO)) < 0 ||
	    dup2(null, STDOUT_FILENO) < 0 ||
	    dup2(fileno(msgs), STDERR_FILENO) < 0) {
		perror("attn: standard output and error of a rank");
		return -1;
	}
	close(null);
	return 0;
}

int
main(int argc, char **argv)
{
	int code;

	if (MPI_Init(&argc, &argv) != MPI_SUCCESS) {
		fputs("attn: MPI_Init failed\n", stderr);
		return 70;
	}
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &ranks);
	code = rank != 0 && quiet() != 0 ? 70 : 0;
	signals_init();
	run_hooks = &hooks;
	slurp_hook = share_read;
	later.rank = (size_t)rank;
	later.ranks = (size_t)ranks;
	load_later = &later;
	output_stdout_known = 0;
	if (code == 0)
		code = command_main(argc, argv);
	if (!finished)
		sync_point(PHASE_END, code == 0 || code == 1 ? FAULT_NONE :
		    FAULT_RANK, code);
	MPI_Finalize();
	return code;
}
