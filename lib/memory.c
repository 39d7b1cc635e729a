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
#define _GNU_SOURCE		/* madvise, MADV_HUGEPAGE, mremap */
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "internal.h"

/* A huge page, and the least block given one (below, "Huge pages"). */
#define HUGE_PAGE ((size_t)2 << 20)
#define BLOCK_HUGE ((size_t)256 << 10)

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
	/* A mapped block: its mapping (attn_block_size).  glibc's chunks on
	 * 64-bit: the size and an 8-byte header, rounded up to 16, at least
	 * 32; other mallocs take no more. */
	if (bytes >= BLOCK_HUGE)
		return attn_block_size(bytes);
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
 * Huge pages.  Under a hypervisor a page fault is dear, and a run
 * touches each page of its arrays first in a copy, a parse or a memset,
 * so that at large sizes the faults of 4 KiB pages are a good part of
 * its CPU time.  So a block of BLOCK_HUGE bytes or more is a mapping of
 * its own, 2 MiB-aligned and a whole number of 2 MiB long, advised
 * MADV_HUGEPAGE before its first touch (transparent_hugepage "madvise",
 * Debian's default; elsewhere the advice changes nothing), and a smaller
 * one comes from malloc.  BLOCK_HUGE is 256 KiB, the size of an array at
 * n = 512, d = 64: a larger threshold leaves such a run without mapped
 * blocks and slower, for a smaller peak RSS, and from n = 2048 the two
 * are alike (bench/README.md).  A mapped block grows by mremap, in place
 * or by moving its pages into a larger mapping (no copy), and shrinks
 * below BLOCK_HUGE into malloc, so that a block's size says what it
 * takes (attn_block_size).  The mappings are listed, so that
 * attn_block_free needs no size.  A mapping that fails (an address-space
 * limit) leaves the block to malloc: huge pages are a saving, never a
 * condition.
 */
static pthread_mutex_t maps_lock = PTHREAD_MUTEX_INITIALIZER;
static struct mapping {
	char *p;
	size_t len;
} *maps;
static size_t maps_n, maps_cap;

static size_t
huge_len(size_t bytes)
{
	return (bytes + HUGE_PAGE - 1) & ~(HUGE_PAGE - 1);
}

size_t
attn_block_size(size_t bytes)
{
	if (bytes >= BLOCK_HUGE && bytes <= SIZE_MAX - HUGE_PAGE)
		return huge_len(bytes);
	return bytes;
}

/* Block p taken off the list: the length of its mapping, or 0 when
 * malloc made it.  A block leaves the list before its addresses are
 * unmapped or moved, and joins it after they are mapped, so that a
 * mapping another thread makes meanwhile at the same address is never
 * taken for it. */
static size_t
map_take(const void *p)
{
	size_t i, len = 0;

	pthread_mutex_lock(&maps_lock);
	for (i = 0; i < maps_n; i++)
		if (maps[i].p == p) {
			len = maps[i].len;
			maps[i] = maps[--maps_n];
			break;
		}
	pthread_mutex_unlock(&maps_lock);
	return len;
}

/* Mapping p of len bytes listed; -1 when the list cannot grow (never
 * after a map_take, whose place stays). */
static int
map_add(char *p, size_t len)
{
	int rc = 0;

	pthread_mutex_lock(&maps_lock);
	if (maps_n == maps_cap) {
		size_t ncap = maps_cap != 0 ? 2 * maps_cap : 16;
		struct mapping *m = realloc(maps, ncap * sizeof *m);

		if (m == NULL) {
			rc = -1;
			goto out;
		}
		maps = m;
		maps_cap = ncap;
	}
	maps[maps_n++] = (struct mapping){ p, len };
out:
	pthread_mutex_unlock(&maps_lock);
	return rc;
}

/* A fresh 2 MiB-aligned mapping of len bytes (a multiple of 2 MiB),
 * advised, not listed; NULL when there is none. */
static char *
map_fresh(size_t len)
{
	char *p, *lo;

	/* Linux aligns a mapping of whole huge pages (from 6.7); else one
	 * 2 MiB longer is cut down to the aligned part. */
	p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE |
	    MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return NULL;
	lo = p;
	if (((uintptr_t)p & (HUGE_PAGE - 1)) != 0) {
		munmap(p, len);
		if (len > SIZE_MAX - HUGE_PAGE)
			return NULL;
		p = mmap(NULL, len + HUGE_PAGE, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (p == MAP_FAILED)
			return NULL;
		lo = (char *)(((uintptr_t)p + HUGE_PAGE - 1) &
		    ~(uintptr_t)(HUGE_PAGE - 1));
		if (lo > p)
			munmap(p, (size_t)(lo - p));
		munmap(lo + len, (size_t)(p + HUGE_PAGE - lo));
	}
#ifdef MADV_HUGEPAGE
	(void)madvise(lo, len, MADV_HUGEPAGE);
#endif
	return lo;
}

/*
 * Spare mappings.  A process of many small runs (the library's session:
 * the Python module's calls) frees its arrays at the end of each run and
 * asks for arrays of the same sizes in the next, paying each time for
 * fresh pages: malloc gives the top of its heap back after a run, and a
 * mapped block's first touch clears a whole huge page; at small sizes
 * those faults cost more than the run's arithmetic.  So, once
 * attn_block_spares(1) says so, a block of SPARE_LEAST bytes or more is
 * a mapping too (below BLOCK_HUGE, of whole pages, not advised, charged
 * as malloc's chunk would be: a page at most less than it takes), the
 * mappings freed are kept (at most SPARE_MOST of them, SPARE_BYTES in
 * all, each at most SPARE_LEN), and one of exactly the length asked is
 * taken again, zeroed where zeros are asked (only the bytes asked).  A
 * fresh mapping of BLOCK_HUGE or more gives every spare back first.
 * Spares held while a run allocates raise its peak past what its account
 * charged, by SPARE_BYTES at most, so attn's one run (tests/memory)
 * keeps none.
 */
#define SPARE_LEAST ((size_t)64 << 10)
#define SPARE_MOST 64
#define SPARE_LEN ((size_t)8 << 20)
#define SPARE_BYTES ((size_t)16 << 20)
static struct mapping spares[SPARE_MOST];
static size_t spares_n, spares_bytes;
static atomic_int spares_on;

/* A spare of len bytes taken off the spares, or NULL when there is
 * none; with none and all, every spare is unmapped (len 0: none is
 * taken). */
static char *
spare_take(size_t len, int all)
{
	char *p = NULL;
	size_t i;

	pthread_mutex_lock(&maps_lock);
	for (i = 0; i < spares_n && p == NULL; i++)
		if (spares[i].len == len) {
			p = spares[i].p;
			spares_bytes -= len;
			spares[i] = spares[--spares_n];
		}
	if (p == NULL && all) {
		for (i = 0; i < spares_n; i++)
			munmap(spares[i].p, spares[i].len);
		spares_n = spares_bytes = 0;
	}
	pthread_mutex_unlock(&maps_lock);
	return p;
}

/* Mapping p of len bytes kept as a spare: 1, or 0 when there is no
 * room (the caller unmaps it). */
static int
spare_keep(char *p, size_t len)
{
	int kept = 0;

	pthread_mutex_lock(&maps_lock);
	if (spares_on && spares_n < SPARE_MOST && len <= SPARE_LEN &&
	    len <= SPARE_BYTES - spares_bytes) {
		spares[spares_n++] = (struct mapping){ p, len };
		spares_bytes += len;
		kept = 1;
	}
	pthread_mutex_unlock(&maps_lock);
	return kept;
}

void
attn_block_spares(int on)
{
	spares_on = on;
	if (!on)
		(void)spare_take(0, 1);
}

/* Whether a block of bytes is a mapping: from BLOCK_HUGE, and with
 * spares kept from SPARE_LEAST. */
static int
mapped(size_t bytes)
{
	return bytes >= BLOCK_HUGE || (bytes >= SPARE_LEAST && spares_on);
}

/* A listed mapping for a block of bytes (mapped), zeroed when zero; NULL
 * when there is none. */
static void *
map_block(size_t bytes, int zero)
{
	const size_t page = (size_t)sysconf(_SC_PAGESIZE);
	const int huge = bytes >= BLOCK_HUGE;
	const size_t len = huge ? huge_len(bytes) :
	    (bytes + page - 1) & ~(page - 1);
	char *p = spare_take(len, huge);

	if (p != NULL && zero)
		memset(p, 0, bytes);
	if (p == NULL && huge)
		p = map_fresh(len);	/* zeros already */
	else if (p == NULL && (p = mmap(NULL, len, PROT_READ | PROT_WRITE,
	    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0)) == MAP_FAILED)
		p = NULL;
	if (p != NULL && map_add(p, len) != 0) {
		munmap(p, len);
		p = NULL;
	}
	return p;
}

/* Mapping p of len bytes grown to nlen: in place where the addresses
 * after it are free, else its pages moved to the start of a fresh
 * mapping.  NULL, p untouched, when neither can be had. */
static char *
map_grow(char *p, size_t len, size_t nlen)
{
	char *q;

	(void)spare_take(0, 1);	/* the spares given back first */
	q = mremap(p, len, nlen, 0);

	if (q != MAP_FAILED)
		return q;
	if ((q = map_fresh(nlen)) == NULL)
		return NULL;
	if (mremap(p, len, len, MREMAP_MAYMOVE | MREMAP_FIXED, q) ==
	    MAP_FAILED) {
		munmap(q, nlen);
		return NULL;
	}
	return q;
}

void *
attn_block_alloc(size_t bytes)
{
	void *p;

	if (mapped(bytes) && (p = map_block(bytes, 0)) != NULL)
		return p;
	return malloc(bytes != 0 ? bytes : 1);
}

void *
attn_block_zalloc(size_t bytes)
{
	void *p;

	/* A fresh mapping is zeros already, and its pages stay untouched
	 * until they are written; a spare is zeroed as far as asked. */
	if (mapped(bytes) && (p = map_block(bytes, 1)) != NULL)
		return p;
	return calloc(bytes != 0 ? bytes : 1, 1);
}

void *
attn_block_realloc(void *p, size_t old, size_t bytes)
{
	size_t len, nlen;
	char *q;

	if (p == NULL)
		return attn_block_alloc(bytes);
	if ((len = map_take(p)) == 0 && bytes < BLOCK_HUGE)
		return realloc(p, bytes != 0 ? bytes : 1);
	if (len != 0 && bytes >= BLOCK_HUGE && bytes <= SIZE_MAX - HUGE_PAGE) {
		q = p;
		if ((nlen = huge_len(bytes)) < len)
			munmap(q + nlen, len - nlen);
		else if (nlen > len && (q = map_grow(p, len, nlen)) == NULL)
			nlen = len;	/* p kept as it was */
		if (map_add(q != NULL ? q : p, nlen) != 0)
			abort();	/* the place map_take left */
		return q;
	}
	if (len != 0 && map_add(p, len) != 0)
		abort();
	/* Across BLOCK_HUGE: into the other kind, copying. */
	if ((q = attn_block_alloc(bytes)) == NULL)
		return NULL;
	memcpy(q, p, old < bytes ? old : bytes);
	attn_block_free(p);
	return q;
}

void
attn_block_free(void *p)
{
	size_t len;

	if (p == NULL)
		return;
	if ((len = map_take(p)) == 0)
		free(p);
	else if (!spare_keep(p, len))
		munmap(p, len);
}

/*
 * attn_alloc_array's blocks, which their callers free with free(), come
 * from malloc: a large one is advised where its 2 MiB-aligned interior
 * lies, as glibc maps it fresh and untouched.
 */
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

/* A block of bytes from alloc, charged to the account first. */
static void *
charged(size_t bytes, void *(*alloc)(size_t))
{
	void *p;

	if (attn_mem_take(attn_mem_cost(bytes)) != 0)
		return NULL;
	if ((p = alloc(bytes)) == NULL)
		attn_mem_give(attn_mem_cost(bytes));
	return p;
}

void *
attn_mem_alloc(size_t bytes)
{
	return charged(bytes, attn_block_alloc);
}

void *
attn_mem_zalloc(size_t bytes)
{
	return charged(bytes, attn_block_zalloc);
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
		if ((q = attn_block_realloc(p, old, bytes)) == NULL)
			q = p;
		attn_mem_give(attn_mem_cost(old));
		if (current != NULL)
			atomic_fetch_add(&current->held, attn_mem_cost(bytes));
		return q;
	}
	/* While realloc copies, the old block and the new are both held. */
	if (attn_mem_take(attn_mem_cost(bytes)) != 0)
		return NULL;
	if ((q = attn_block_realloc(p, old, bytes)) == NULL) {
		attn_mem_give(attn_mem_cost(bytes));
		return NULL;
	}
	attn_mem_give(attn_mem_cost(old));
	return q;
}

void
attn_mem_free(void *p, size_t bytes)
{
	if (p == NULL)
		return;
	attn_block_free(p);
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
