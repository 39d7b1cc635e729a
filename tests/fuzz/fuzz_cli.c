/*
 * fuzz_cli.c - libFuzzer harness for the whole program: options, inputs,
 * computation and output, run in-process through attn's main().
 *
 * The CLI sources are compiled with -Dmain=attn_main and linked in.  main
 * leaves only by returning, so each input is one run: the harness builds
 * argv and the input files, calls attn_main, and checks what attn(1)
 * promises of any run.
 *
 * Input format (see fuzz_cli_table.h):
 *
 *   first line   option bytes: byte b adds fuzz_cli_words[b % N] to argv
 *                (at most FUZZ_CLI_MAX_WORDS bytes are read)
 *   the rest     up to six segments separated by "\n%%\n": files 0-4, which
 *                the words name as @0j (file 0 as DIR/f0.json) and so on,
 *                then standard input
 *
 * Files live in DIR, a directory inside one temporary directory per
 * process (under FUZZ_TMPDIR, else /dev/shm, else TMPDIR, else /tmp),
 * emptied before each run and removed at exit (after a crash, by the next
 * harness to start).  Standard input is a pipe holding segment 5.
 * Standard output and standard error become fopencookie streams that
 * count and capture what is written: attn closes stdout itself, and the
 * cookie's close hook tells the harness so.  getopt's hidden state (a
 * half-read option cluster) is reset by a call with optind = 0, since
 * options_parse sets optind = 1, which glibc does not take as a full
 * reset.  The signal handlers -o installs are put back after each run,
 * and the memory account (cli/memory.c) is emptied before it.
 * ATTN_MAX_MEMORY is 16 MiB, so no argv makes a large T x S.
 *
 * Checked after each run (a failure aborts, and libFuzzer keeps the input):
 *
 *   - the exit status is one attn(1) lists, and not 70 (internal error);
 *   - a failed run prints nothing on stdout, and exactly one error line
 *     starting "attn: " on stderr (warnings aside), then, for 64 alone,
 *     one line pointing to the help ("Try 'attn --help'.", or gen's or
 *     the workbench's), and nothing else
 *     aside); a successful run prints no error line;
 *   - a failed run leaves the directory as it found it: no file created,
 *     changed or removed (so -o FILE survives); no run leaves an
 *     ".attn-" temporary file behind;
 *   - with "!full", a run that wrote to stdout does not exit 0.
 *
 * FUZZ_CLI_VERBOSE=1 in the environment prints each run's argv, status
 * and stderr: run the harness on one input to see what it did.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

#include "fuzz_cli_table.h"

int attn_main(int argc, char **argv);
/* cli/memory.c: forget what the last run charged (one run a process, in
 * attn itself). */
void memory_reset(void);
int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define FUZZ_MAX_INPUT 4096
#define MAX_ARGS (2 * FUZZ_CLI_MAX_WORDS + 2)
#define PATH_LEN 512
#define MAX_FILES 64
#define ERR_CAP 8192

static char top[PATH_LEN];	/* the harness's own directory */
static char dir[PATH_LEN];	/* top/d, where the files are */
static int verbose;
static FILE *real_stderr;	/* for verbose and invariant messages */

static void
die(const char *what)
{
	fprintf(real_stderr != NULL ? real_stderr : stderr,
	    "fuzz_cli invariant broken: %s\n", what);
	abort();
}

/* ---------------------------------------------------------------- streams */

/* What attn wrote to one stream. */
struct capture {
	size_t bytes;		/* how many it wrote in all */
	size_t attempted;	/* how many it tried to write */
	char text[ERR_CAP];	/* the first ERR_CAP - 1 of them */
	size_t kept;
	int closed;		/* attn called fclose on it */
	int full;		/* writes fail with ENOSPC */
};

static struct capture out_cap, err_cap;

static ssize_t
cap_write(void *cookie, const char *buf, size_t size)
{
	struct capture *c = cookie;
	size_t n;

	c->attempted += size;
	if (c->full) {
		errno = ENOSPC;
		return -1;
	}
	c->bytes += size;
	n = size < ERR_CAP - 1 - c->kept ? size : ERR_CAP - 1 - c->kept;
	memcpy(c->text + c->kept, buf, n);
	c->kept += n;
	c->text[c->kept] = '\0';
	return (ssize_t)size;
}

static int
cap_close(void *cookie)
{
	((struct capture *)cookie)->closed = 1;
	return 0;
}

static FILE *
cap_open(struct capture *c, int full)
{
	cookie_io_functions_t io = { NULL, cap_write, NULL, cap_close };
	FILE *fp;

	memset(c, 0, sizeof *c);
	c->full = full;
	if ((fp = fopencookie(c, "w", io)) == NULL)
		die("fopencookie failed");
	return fp;
}

/* ---------------------------------------------------------------- files */

static void
cleanup_dir(void)
{
	DIR *d;
	struct dirent *e;
	char path[PATH_LEN + 256];

	if (dir[0] == '\0' || (d = opendir(dir)) == NULL)
		return;
	while ((e = readdir(d)) != NULL) {
		if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
			continue;
		snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
		if (unlink(path) != 0 && errno == EISDIR)
			rmdir(path);
	}
	closedir(d);
}

static void
remove_dir(void)
{
	cleanup_dir();
	if (dir[0] != '\0')
		rmdir(dir);
	if (top[0] != '\0')
		rmdir(top);
}

/* Remove directory d, its files and the files of its subdirectories: all
 * the depth the harness and attn ever create. */
static void
remove_tree(const char *d, int depth)
{
	DIR *dp;
	struct dirent *e;
	char path[PATH_LEN + 256];

	if ((dp = opendir(d)) == NULL)
		return;
	while ((e = readdir(dp)) != NULL) {
		if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
			continue;
		snprintf(path, sizeof path, "%s/%s", d, e->d_name);
		if (unlink(path) != 0 && errno == EISDIR && depth > 0)
			remove_tree(path, depth - 1);
	}
	closedir(dp);
	rmdir(d);
}

/*
 * A harness that crashed (abort skips atexit) leaves its directory
 * behind.  The directory's name holds the pid that made it: remove those
 * of processes that no longer exist.
 */
static void
remove_stale(const char *base)
{
	DIR *dp;
	struct dirent *e;
	char path[PATH_LEN + 256];
	long pid;
	char *end;

	if ((dp = opendir(base)) == NULL)
		return;
	while ((e = readdir(dp)) != NULL) {
		if (strncmp(e->d_name, "attn-fuzz-cli-", 14) != 0)
			continue;
		pid = strtol(e->d_name + 14, &end, 10);
		if (end == e->d_name + 14 || *end != '.' || pid <= 0 ||
		    kill((pid_t)pid, 0) == 0 || errno != ESRCH)
			continue;
		snprintf(path, sizeof path, "%s/%s", base, e->d_name);
		remove_tree(path, 2);
	}
	closedir(dp);
}

/* Whether directory d holds an ".attn-" file. */
static int
has_attn_tmp(const char *d)
{
	DIR *dp;
	struct dirent *e;
	int found = 0;

	if ((dp = opendir(d)) == NULL)
		return 0;
	while ((e = readdir(dp)) != NULL)
		found |= strncmp(e->d_name, ".attn-", 6) == 0;
	closedir(dp);
	return found;
}

static void
write_file(const char *path, const uint8_t *p, size_t n)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);

	if (fd < 0)
		die("cannot create an input file");
	while (n > 0) {
		ssize_t w = write(fd, p, n);

		if (w <= 0)
			die("cannot write an input file");
		p += w;
		n -= (size_t)w;
	}
	close(fd);
}

/* One directory entry as it was: its name, size and first bytes. */
struct snap_file {
	char name[256];
	off_t size;
	char head[FUZZ_MAX_INPUT];
	size_t headlen;
	int is_dir;
};

struct snapshot {
	struct snap_file f[MAX_FILES];
	size_t n;
};

static struct snapshot before, after;

static void
snapshot(struct snapshot *s)
{
	DIR *d;
	struct dirent *e;
	char path[PATH_LEN + 256];
	struct stat sb;

	s->n = 0;
	if ((d = opendir(dir)) == NULL)
		die("cannot open the temporary directory");
	while ((e = readdir(d)) != NULL && s->n < MAX_FILES) {
		struct snap_file *f = &s->f[s->n];
		int fd;
		ssize_t r;

		if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
			continue;
		snprintf(f->name, sizeof f->name, "%s", e->d_name);
		snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
		if (lstat(path, &sb) != 0)
			continue;
		f->size = sb.st_size;
		f->is_dir = S_ISDIR(sb.st_mode);
		f->headlen = 0;
		if (!f->is_dir && (fd = open(path, O_RDONLY)) >= 0) {
			r = read(fd, f->head, sizeof f->head);
			f->headlen = r > 0 ? (size_t)r : 0;
			close(fd);
		}
		s->n++;
	}
	closedir(d);
}

static const struct snap_file *
snap_find(const struct snapshot *s, const char *name)
{
	size_t i;

	for (i = 0; i < s->n; i++)
		if (strcmp(s->f[i].name, name) == 0)
			return &s->f[i];
	return NULL;
}

/* ---------------------------------------------------------------- argv */

struct run {
	const uint8_t *seg[FUZZ_CLI_NSEG];
	size_t seglen[FUZZ_CLI_NSEG];
	unsigned written[FUZZ_CLI_NSEG];	/* bit per extension */
	char *argv[MAX_ARGS + 1];
	char words[MAX_ARGS][PATH_LEN];
	int argc;
	int full;
};

static const char exts[] = "jctxynzl";
static const char *const ext_name[] = { ".json", ".csv", ".tsv", ".txt",
	".npy", "", ".npz", ".jsonl" };

/* Split the input into option bytes and segments. */
static size_t
split_input(struct run *r, const uint8_t *data, size_t size,
    const uint8_t **opts)
{
	const uint8_t *p = data, *end = data + size, *nl, *sep;
	const size_t seplen = sizeof FUZZ_CLI_SEP - 1;
	size_t nopts, i;

	nl = memchr(p, '\n', size);
	nopts = nl != NULL ? (size_t)(nl - p) : size;
	*opts = p;
	if (nopts > FUZZ_CLI_MAX_WORDS)
		nopts = FUZZ_CLI_MAX_WORDS;
	for (i = 0; i < FUZZ_CLI_NSEG; i++) {
		r->seg[i] = (const uint8_t *)"";
		r->seglen[i] = 0;
	}
	if (nl == NULL)
		return nopts;
	p = nl + 1;
	for (i = 0; i < FUZZ_CLI_NSEG && p <= end; i++) {
		sep = memmem(p, (size_t)(end - p), FUZZ_CLI_SEP, seplen);
		if (sep == NULL || i == FUZZ_CLI_NSEG - 1)
			sep = end;
		r->seg[i] = p;
		r->seglen[i] = (size_t)(sep - p);
		if (sep == end)
			break;
		p = sep + seplen;
	}
	return nopts;
}

/* Expand the placeholder in word w (from its '@' on) into out. */
static void
expand(struct run *r, const char *w, char *out)
{
	const char *at = strchr(w, '@');
	int pre;

	if (at == NULL) {
		snprintf(out, PATH_LEN, "%s", w);
		return;
	}
	pre = (int)(at - w);
	if (at[1] >= '0' && at[1] <= '4' && at[2] != '\0' &&
	    strchr(exts, at[2]) != NULL) {
		size_t i = (size_t)(at[1] - '0');
		size_t e = (size_t)(strchr(exts, at[2]) - exts);

		snprintf(out, PATH_LEN, "%.*s%s/f%zu%s", pre, w, dir, i,
		    ext_name[e]);
		if (!(r->written[i] & (1u << e))) {
			write_file(out + pre, r->seg[i], r->seglen[i]);
			r->written[i] |= 1u << e;
		}
		return;
	}
	switch (at[1]) {
	case 'o':
		snprintf(out, PATH_LEN, "%.*s%s/out.csv", pre, w, dir);
		break;
	case 'O':
		snprintf(out, PATH_LEN, "%.*s%s/out.npz", pre, w, dir);
		break;
	case 'm':
		snprintf(out, PATH_LEN, "%.*s%s/no/such/out.csv", pre, w, dir);
		break;
	case 'D':
		snprintf(out, PATH_LEN, "%.*s%s", pre, w, dir);
		break;
	case 'M':
		snprintf(out, PATH_LEN, "%.*s%s/missing.json", pre, w, dir);
		break;
	default:
		die("bad placeholder in fuzz_cli_table.h");
	}
}

static void
add_word(struct run *r, const char *w)
{
	if (r->argc >= MAX_ARGS)
		return;
	expand(r, w, r->words[r->argc]);
	r->argv[r->argc] = r->words[r->argc];
	r->argc++;
}

static void
build_argv(struct run *r, const uint8_t *opts, size_t nopts)
{
	size_t i;

	r->argc = 0;
	add_word(r, "attn");
	for (i = 0; i < nopts; i++) {
		const struct fuzz_word *fw =
		    &fuzz_cli_words[opts[i] % FUZZ_CLI_NWORDS];

		if (strcmp(fw->a, "!full") == 0) {
			r->full = 1;
			continue;
		}
		add_word(r, fw->a);
		if (fw->b != NULL)
			add_word(r, fw->b);
	}
	r->argv[r->argc] = NULL;
}

/* Standard input: a pipe holding segment 5 (at most FUZZ_MAX_INPUT bytes, which
 * fits in a pipe's buffer), closed for writing. */
static void
set_stdin(const struct run *r)
{
	int fds[2];

	if (pipe(fds) != 0)
		die("pipe failed");
	if (r->seglen[5] > 0 &&
	    write(fds[1], r->seg[5], r->seglen[5]) != (ssize_t)r->seglen[5])
		die("cannot fill the stdin pipe");
	close(fds[1]);
	if (dup2(fds[0], STDIN_FILENO) < 0)
		die("dup2 failed");
	close(fds[0]);
}

/* ---------------------------------------------------------------- checks */

static int
starts(const char *s, const char *prefix)
{
	return strncmp(s, prefix, strlen(prefix)) == 0;
}

/* Check stderr: count the error lines ("attn: " but not a warning), the
 * lines pointing to a command's help, and the lines that start
 * otherwise. */
static void
stderr_lines(const struct capture *c, size_t *errors, size_t *tries,
    size_t *others, int *first_is_attn)
{
	const char *p = c->text, *nl;

	*errors = *tries = *others = 0;
	*first_is_attn = starts(p, "attn: ");
	while (*p != '\0') {
		if (starts(p, "attn: warning: "))
			;
		else if (starts(p, "attn: "))
			(*errors)++;
		else if (starts(p, "Try 'attn --help'.\n") ||
		    starts(p, "Try 'attn gen --help'.\n") ||
		    starts(p, "Try 'attn workbench --help'.\n"))
			(*tries)++;
		else
			(*others)++;
		if ((nl = strchr(p, '\n')) == NULL)
			break;
		p = nl + 1;
	}
}

static void
check_run(const struct run *r, int rc)
{
	size_t errors, tries, others, i;
	int first_is_attn;

	switch (rc) {
	case 0: case 1: case 64: case 65: case 66: case 71: case 73: case 74:
		break;
	case 70:
		die("exit 70: an internal error is a bug");
		break;
	default:
		die("an exit status attn(1) does not list");
	}
	/* The captured text is cut at ERR_CAP; judge only what fits. */
	stderr_lines(&err_cap, &errors, &tries, &others, &first_is_attn);
	if (rc != 0 && rc != 1) {
		if (out_cap.bytes != 0)
			die("a failed run wrote to stdout");
		if (!first_is_attn)
			die("a failed run's stderr does not start 'attn: '");
		if (errors != 1)
			die("a failed run printed other than one error line");
		if (others != 0)
			die("a failed run printed lines not starting 'attn: '");
		if (tries != (rc == 64))
			die("a usage error is not followed by one line pointing "
			    "to the help, or another error is");
	} else if (err_cap.bytes < ERR_CAP &&
	    (errors != 0 || tries != 0 || others != 0)) {
		die("a successful run printed an error line");
	}
	if (r->full && out_cap.attempted > 0 && rc == 0)
		die("writing to a full stdout exited 0");

	/* -o DIR makes attn's temporary file in DIR's parent, top. */
	if (has_attn_tmp(dir) || has_attn_tmp(top))
		die("a temporary .attn- file was left behind");
	snapshot(&after);
	if (rc == 0 || rc == 1)
		return;
	for (i = 0; i < before.n; i++) {
		const struct snap_file *a = snap_find(&after, before.f[i].name);

		if (a == NULL)
			die("a failed run removed a file");
		if (a->size != before.f[i].size ||
		    a->headlen != before.f[i].headlen ||
		    memcmp(a->head, before.f[i].head, a->headlen) != 0)
			die("a failed run changed a file");
	}
	if (after.n != before.n)
		die("a failed run created a file");
}

/* ---------------------------------------------------------------- entry */

/* UBSan reports with a stack, also when a reproducer is run by hand. */
const char *__ubsan_default_options(void);

const char *
__ubsan_default_options(void)
{
	return "print_stacktrace=1";
}

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	const char *base = getenv("FUZZ_TMPDIR");
	struct stat sb;

	(void)argc;
	(void)argv;
	real_stderr = stderr;
	verbose = getenv("FUZZ_CLI_VERBOSE") != NULL;
	if (base == NULL && stat("/dev/shm", &sb) == 0 && S_ISDIR(sb.st_mode) &&
	    access("/dev/shm", W_OK) == 0)
		base = "/dev/shm";
	if (base == NULL)
		base = getenv("TMPDIR");
	if (base == NULL)
		base = "/tmp";
	remove_stale(base);
	snprintf(top, sizeof top, "%s/attn-fuzz-cli-%ld.XXXXXX", base,
	    (long)getpid());
	if (mkdtemp(top) == NULL)
		die("mkdtemp failed");
	snprintf(dir, sizeof dir, "%s/d", top);
	if (mkdir(dir, 0700) != 0)
		die("cannot make the work directory");
	atexit(remove_dir);
	/* Small enough that no argv makes a T x S that takes long. */
	setenv("ATTN_MAX_MEMORY", "16777216", 1);
	unsetenv("ATTN_THREADS");
	unsetenv("POSIXLY_CORRECT");
	setenv("NO_COLOR", "1", 1);
	return 0;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const int sigs[] = { SIGINT, SIGTERM, SIGHUP, SIGPIPE, SIGXFSZ };
	struct sigaction saved[sizeof sigs / sizeof sigs[0]];
	static struct run r;
	char *reset_argv[] = { (char *)"attn", NULL };
	const uint8_t *opts;
	FILE *saved_out, *saved_err;
	size_t nopts, i;
	int rc;

	if (size > FUZZ_MAX_INPUT)
		return 0;
	memset(&r, 0, sizeof r);
	cleanup_dir();
	nopts = split_input(&r, data, size, &opts);
	build_argv(&r, opts, nopts);
	set_stdin(&r);
	snapshot(&before);

	/* A fresh getopt, as in a new process. */
	optind = 0;
	opterr = 0;
	(void)getopt(1, reset_argv, "");

	for (i = 0; i < sizeof sigs / sizeof sigs[0]; i++)
		sigaction(sigs[i], NULL, &saved[i]);
	saved_out = stdout;
	saved_err = stderr;
	stdout = cap_open(&out_cap, r.full);
	stderr = cap_open(&err_cap, 0);

	if (verbose) {
		fprintf(real_stderr, "fuzz_cli: argv:");
		for (i = 0; i < (size_t)r.argc; i++)
			fprintf(real_stderr, " '%s'", r.words[i]);
		fprintf(real_stderr, "\nfuzz_cli: segments (bytes):");
		for (i = 0; i < FUZZ_CLI_NSEG; i++)
			fprintf(real_stderr, " %zu", r.seglen[i]);
		fprintf(real_stderr, "%s\n", r.full ? "; stdout is full" : "");
	}

	memory_reset();
	rc = attn_main(r.argc, r.argv);

	if (!out_cap.closed)
		fclose(stdout);
	fclose(stderr);
	stdout = saved_out;
	stderr = saved_err;
	for (i = 0; i < sizeof sigs / sizeof sigs[0]; i++)
		sigaction(sigs[i], &saved[i], NULL);

	if (verbose)
		fprintf(real_stderr, "fuzz_cli: exit %d, %zu bytes on stdout, "
		    "stderr:\n%s", rc, out_cap.bytes, err_cap.text);
	check_run(&r, rc);
	return 0;
}
