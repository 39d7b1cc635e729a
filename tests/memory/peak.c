/*
 * peak.c - an LD_PRELOAD allocator counter for tests/memory/run.sh: at
 * exit it writes "attn-heap-peak N" to standard error, N the most bytes
 * the program had allocated at once, each chunk counted as
 * malloc_usable_size + 8 (glibc's header), and a realloc as a copy (the
 * old chunk still there when the new one is made), which is the most it
 * can cost.  Not thread-safe; attn allocates from one thread.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <malloc.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static size_t now, peak;
static void *(*real_malloc)(size_t);
static void *(*real_calloc)(size_t, size_t);
static void *(*real_realloc)(void *, size_t);
static void (*real_free)(void *);

/* dlsym may calloc before real_calloc is known: serve it from here. */
static char early[4096];
static size_t early_used;

static int
is_early(const void *p)
{
	return (const char *)p >= early && (const char *)p < early + sizeof early;
}

static void
init(void)
{
	if (real_malloc != NULL)
		return;
	real_calloc = dlsym(RTLD_NEXT, "calloc");
	real_malloc = dlsym(RTLD_NEXT, "malloc");
	real_realloc = dlsym(RTLD_NEXT, "realloc");
	real_free = dlsym(RTLD_NEXT, "free");
}

static size_t
size_of(void *p)
{
	return p != NULL && !is_early(p) ? malloc_usable_size(p) + 8 : 0;
}

static void
count(size_t n)
{
	now += n;
	if (now > peak)
		peak = now;
}

void *
malloc(size_t n)
{
	void *p;

	init();
	p = real_malloc(n);
	count(size_of(p));
	return p;
}

void *
calloc(size_t a, size_t b)
{
	void *p;

	if (real_calloc == NULL) {
		size_t n = (a * b + 15) & ~(size_t)15;

		if (early_used + n > sizeof early)
			return NULL;
		p = early + early_used;
		early_used += n;
		return p;
	}
	p = real_calloc(a, b);
	count(size_of(p));
	return p;
}

void *
realloc(void *p, size_t n)
{
	size_t old = size_of(p);
	void *q;

	init();
	if (is_early(p)) {
		size_t most = (size_t)(early + sizeof early - (char *)p);

		if ((q = real_malloc(n)) != NULL)
			memcpy(q, p, n < most ? n : most);
		count(size_of(q));
		return q;
	}
	if ((q = real_realloc(p, n)) != NULL) {
		count(size_of(q));
		now -= old;
	}
	return q;
}

void
free(void *p)
{
	init();
	if (p == NULL || is_early(p))
		return;
	now -= size_of(p);
	real_free(p);
}

__attribute__((destructor)) static void
report(void)
{
	char line[64];
	int n = snprintf(line, sizeof line, "attn-heap-peak %zu\n", peak);

	if (n > 0)
		(void)!write(2, line, (size_t)n);
}
