/*
 * peak.c - an LD_PRELOAD allocator counter for tests/memory/run.sh: at
 * exit it writes "attn-heap-peak N" to standard error, N the most bytes
 * the program had allocated at once, each chunk counted as
 * malloc_usable_size + 8 (glibc's header), and a realloc as a copy (the
 * old chunk still there when the new one is made), which is the most it
 * can cost.  The writable anonymous mappings attn makes itself
 * (attn_block_alloc's, for blocks from 256 KiB) are counted too, by
 * their length, as mapped, grown, moved and unmapped.  Not thread-safe;
 * attn allocates from one thread.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <malloc.h>
#include <stdio.h>
#include <stdarg.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
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

/* ---------------------------------------------------------------- mappings */

static void *(*real_mmap)(void *, size_t, int, int, int, off_t);
static int (*real_munmap)(void *, size_t);
static void *(*real_mremap)(void *, size_t, size_t, int, ...);

/* The counted mappings, as [lo, hi) ranges. */
static struct range {
	uintptr_t lo, hi;
} ranges[4096];
static size_t nranges;

static void
init_maps(void)
{
	if (real_mmap != NULL)
		return;
	real_mmap = dlsym(RTLD_NEXT, "mmap");
	real_munmap = dlsym(RTLD_NEXT, "munmap");
	real_mremap = dlsym(RTLD_NEXT, "mremap");
}

static void
add_range(uintptr_t lo, uintptr_t hi)
{
	if (nranges < sizeof ranges / sizeof ranges[0])
		ranges[nranges++] = (struct range){ lo, hi };
	count(hi - lo);
}

/* Forget [lo, hi) of the counted mappings. */
static void
cut_range(uintptr_t lo, uintptr_t hi)
{
	size_t i, n = nranges;

	for (i = 0; i < n; i++) {
		struct range r = ranges[i];
		uintptr_t a = lo > r.lo ? lo : r.lo, b = hi < r.hi ? hi : r.hi;

		if (a >= b)
			continue;
		now -= b - a;
		ranges[i].hi = a;	/* the part before the cut */
		if (b < r.hi)		/* and the part after it */
			add_range(b, r.hi), now -= r.hi - b;
	}
	for (i = 0; i < nranges; i++)
		if (ranges[i].lo >= ranges[i].hi)
			ranges[i--] = ranges[--nranges];
}

void *
mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
	void *p;

	init_maps();
	p = real_mmap(addr, len, prot, flags, fd, off);
	if (p != MAP_FAILED && (flags & MAP_ANONYMOUS) &&
	    (prot & PROT_WRITE)) {
		cut_range((uintptr_t)p, (uintptr_t)p + len);
		add_range((uintptr_t)p, (uintptr_t)p + len);
	}
	return p;
}

int
munmap(void *p, size_t len)
{
	init_maps();
	cut_range((uintptr_t)p, (uintptr_t)p + len);
	return real_munmap(p, len);
}

void *
mremap(void *p, size_t len, size_t nlen, int flags, ...)
{
	void *to = NULL, *q;
	size_t i;
	int counted = 0;
	va_list ap;

	init_maps();
	if (flags & MREMAP_FIXED) {
		va_start(ap, flags);
		to = va_arg(ap, void *);
		va_end(ap);
	}
	for (i = 0; i < nranges; i++)
		if (ranges[i].lo <= (uintptr_t)p && (uintptr_t)p < ranges[i].hi)
			counted = 1;
	q = (flags & MREMAP_FIXED) ? real_mremap(p, len, nlen, flags, to) :
	    real_mremap(p, len, nlen, flags);
	if (q != MAP_FAILED && counted) {
		cut_range((uintptr_t)p, (uintptr_t)p + len);
		cut_range((uintptr_t)q, (uintptr_t)q + nlen);
		add_range((uintptr_t)q, (uintptr_t)q + nlen);
	}
	return q;
}

__attribute__((destructor)) static void
report(void)
{
	char line[64];
	int n = snprintf(line, sizeof line, "attn-heap-peak %zu\n", peak);

	if (n > 0)
		(void)!write(2, line, (size_t)n);
}
