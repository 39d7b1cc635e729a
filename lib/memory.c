/*
 * memory.c - the memory account: what libattn allocates is charged where
 * it is allocated, and refused there when it would pass the limit.
 *
 * Every allocation of the library but attn_alloc_array's goes through
 * the functions below, and cJSON's through hooks that charge the same
 * account (read_json.c), so a run that would not fit fails with
 * ATTN_ERR_NOMEM and a message that names the limit, before malloc is
 * asked, rather than being killed by the kernel or its cgroup.  An
 * allocation is charged what malloc takes for it, its header and
 * rounding included (attn_mem_cost), so that the account follows the
 * heap and not only the bytes asked for.
 *
 * The account in force is the calling thread's (attn_memory_use), so
 * that no call needs one more argument and cJSON's hooks, which take
 * none, find it too; the threads of attn_pool_run take their caller's.
 * Its count is atomic, since those threads may allocate at once.  A
 * free gives back what the allocation was charged, computed from the
 * size the caller passes: every free of the library knows the size of
 * what it frees (a matrix's rows and columns, an array's shape, a
 * growing buffer's capacity).
 */
#define _DEFAULT_SOURCE		/* madvise, MADV_HUGEPAGE */
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "internal.h"

struct attn_memory {
	size_t limit;
	const char *what;
	atomic_size_t held;
};

/* The account of this thread, and whether its last charge was refused
 * (for the message of the caller that then fails). */
static _Thread_local struct attn_memory *current;
static _Thread_local int refused;

struct attn_memory *
attn_memory_new(size_t limit, const char *what)
{
	struct attn_memory *m = malloc(sizeof *m);

	if (m == NULL)
		return NULL;
	m->limit = limit;
	m->what = what;
	atomic_init(&m->held, 0);
	return m;
}

void
attn_memory_free(struct attn_memory *m)
{
	if (current == m)
		current = NULL;
	free(m);
}

struct attn_memory *
attn_memory_use(struct attn_memory *m)
{
	struct attn_memory *old = current;

	current = m;
	refused = 0;
	return old;
}

struct attn_memory *
attn_memory_current(void)
{
	return current;
}

size_t
attn_memory_held(const struct attn_memory *m)
{
	return atomic_load(&((struct attn_memory *)m)->held);
}

size_t
attn_memory_limit(const struct attn_memory *m)
{
	return m->limit;
}

const char *
attn_memory_what(const struct attn_memory *m)
{
	return m->what;
}

/* Add bytes to m's count unless it would pass the limit: 0, or -1. */
static int
take(struct attn_memory *m, size_t bytes)
{
	size_t old = atomic_load(&m->held);

	do {
		if (bytes > m->limit || old > m->limit - bytes)
			return -1;
	} while (!atomic_compare_exchange_weak(&m->held, &old, old + bytes));
	return 0;
}

/* Take bytes off m's count, never below 0: what a caller gives back
 * that it did not charge (labels it made itself and freed with
 * attn_labels_free) must not wrap the count. */
static void
give(struct attn_memory *m, size_t bytes)
{
	size_t old = atomic_load(&m->held);

	while (!atomic_compare_exchange_weak(&m->held, &old,
	    old > bytes ? old - bytes : 0))
		;
}

int
attn_memory_charge(struct attn_memory *m, size_t bytes)
{
	return take(m, bytes);
}

void
attn_memory_release(struct attn_memory *m, size_t bytes)
{
	give(m, bytes);
}

/* ---------------------------------------------------------------- allocation */

size_t
attn_mem_cost(size_t bytes)
{
	/* glibc's chunks on 64-bit: the size and an 8-byte header, rounded
	 * up to 16, at least 32; other mallocs take no more. */
	if (bytes > SIZE_MAX - 32)
		return SIZE_MAX;
	bytes = (bytes + 8 + 15) & ~(size_t)15;
	return bytes < 32 ? 32 : bytes;
}

int
attn_mem_take(size_t cost)
{
	if (current == NULL)
		return 0;
	if (take(current, cost) != 0) {
		refused = 1;
		return -1;
	}
	return 0;
}

void
attn_mem_give(size_t cost)
{
	if (current != NULL)
		give(current, cost);
}

int
attn_mem_refused(void)
{
	return refused;
}

/* Whether the account refused, forgetting it: the refusal is told. */
static int
told_refused(void)
{
	int r = refused && current != NULL;

	refused = 0;
	return r;
}

/*
 * A large block is backed by huge pages where the kernel has them for
 * the asking (transparent_hugepage "madvise", Debian's default): glibc
 * maps such a block fresh and untouched, so the advice comes before its
 * first page is touched.  A run touches each of its arrays' pages first
 * in a copy or a memset; with 4 KiB pages each touch is a fault, and
 * under a hypervisor the faults were a third of the CPU time of a whole
 * run at 1 x 8 x 4096 x 128 (.npy in and out: 2.54 CPU-s against 1.74
 * with huge pages, the same bytes).  Only the 2 MiB-aligned interior is
 * advised; the advice is a hint, and its failure changes nothing.
 */
#define HUGE_PAGE ((uintptr_t)2 << 20)

void
attn_mem_advise_huge(void *p, size_t bytes)
{
	uintptr_t lo = ((uintptr_t)p + HUGE_PAGE - 1) & ~(HUGE_PAGE - 1);
	uintptr_t hi = ((uintptr_t)p + bytes) & ~(HUGE_PAGE - 1);

#ifdef MADV_HUGEPAGE
	if (p != NULL && bytes >= 2 * HUGE_PAGE && hi > lo)
		(void)madvise((void *)lo, hi - lo, MADV_HUGEPAGE);
#else
	(void)lo, (void)hi;
#endif
}

void *
attn_mem_alloc(size_t bytes)
{
	void *p;

	if (attn_mem_take(attn_mem_cost(bytes)) != 0)
		return NULL;
	if ((p = malloc(bytes != 0 ? bytes : 1)) == NULL)
		attn_mem_give(attn_mem_cost(bytes));
	attn_mem_advise_huge(p, bytes);
	return p;
}

void *
attn_mem_zalloc(size_t bytes)
{
	void *p = attn_mem_alloc(bytes);

	if (p != NULL)
		memset(p, 0, bytes);
	return p;
}

void *
attn_mem_array(size_t n, size_t size)
{
	if (size != 0 && n > SIZE_MAX / size)
		return NULL;
	return attn_mem_alloc(n * size);
}

void *
attn_mem_realloc(void *p, size_t old, size_t bytes)
{
	void *q;

	if (p == NULL)
		return attn_mem_alloc(bytes);
	if (bytes <= old) {
		/* A block that cannot shrink is kept, counted as if it had. */
		if ((q = realloc(p, bytes != 0 ? bytes : 1)) == NULL)
			q = p;
		attn_mem_give(attn_mem_cost(old));
		if (current != NULL)
			atomic_fetch_add(&current->held, attn_mem_cost(bytes));
		return q;
	}
	/* While realloc copies, the old block and the new are both held. */
	if (attn_mem_take(attn_mem_cost(bytes)) != 0)
		return NULL;
	if ((q = realloc(p, bytes)) == NULL) {
		attn_mem_give(attn_mem_cost(bytes));
		return NULL;
	}
	attn_mem_advise_huge(q, bytes);
	attn_mem_give(attn_mem_cost(old));
	return q;
}

void
attn_mem_free(void *p, size_t bytes)
{
	if (p == NULL)
		return;
	free(p);
	attn_mem_give(attn_mem_cost(bytes));
}

/* Doubling keeps every reader linear however its input is shaped. */
void *
attn_grow_array(void *p, size_t *cap, size_t need, size_t elsize)
{
	size_t ncap = *cap != 0 ? *cap : 16, bytes;
	void *np;

	while (ncap < need) {
		if (ncap > SIZE_MAX / 2)
			return NULL;
		ncap *= 2;
	}
	if (elsize != 0 && ncap > SIZE_MAX / elsize)
		return NULL;
	bytes = ncap * elsize;
	if ((np = attn_mem_realloc(p, *cap * elsize, bytes)) == NULL)
		return NULL;
	*cap = ncap;
	return np;
}

char *
attn_str_ndup(const char *s, size_t len)
{
	char *p = len < SIZE_MAX ? attn_mem_alloc(len + 1) : NULL;

	if (p == NULL)
		return NULL;
	memcpy(p, s, len);
	p[len] = '\0';
	return p;
}

/* ---------------------------------------------------------------- errors */

enum attn_status
attn_error_nomem(struct attn_error *err, const char *file, const char *doing)
{
	if (told_refused())
		return attn_error_set(err, ATTN_ERR_NOMEM, file, 0, 0,
		    "%s would take more memory than %s (%zu bytes) allows",
		    doing, current->what, current->limit);
	return attn_error_set(err, ATTN_ERR_NOMEM, file, 0, 0,
	    "out of memory %s", doing);
}

enum attn_status
attn_error_input_nomem(struct attn_error *err, const char *file,
    const char *doing)
{
	if (told_refused())
		return attn_error_set(err, ATTN_ERR_NOMEM, file, 0, 0,
		    "input too large: reading and parsing it takes more than "
		    "%s (%zu bytes)", current->what, current->limit);
	return attn_error_set(err, ATTN_ERR_NOMEM, file, 0, 0,
	    "out of memory %s", doing);
}
