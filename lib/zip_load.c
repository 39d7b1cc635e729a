/*
 * zip_load.c - libzip and zlib, opened (dlopen) by the first .npz archive
 * a run reads (libzip) or writes (zlib, for its CRC-32), not linked: a
 * run that touches none never maps them, nor the libcrypto and libbz2
 * that libzip brings, whose loading and relocation are a good part of the
 * CPU time of a small run (bench/README.md).  Their sonames are the ones
 * the build linked against (ATTN_ZIP_SONAME, ATTN_ZLIB_SONAME, from the
 * Makefile); their functions are looked up with the types zip.h and
 * zlib.h give them (zip_load.h), all of a library's at once, so that a
 * reader finds the whole library or none.
 */
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "zip_load.h"

#ifndef ATTN_ZIP_SONAME
#error "ATTN_ZIP_SONAME: the soname of libzip, as the Makefile defines it"
#endif
#ifndef ATTN_ZLIB_SONAME
#error "ATTN_ZLIB_SONAME: the soname of zlib, as the Makefile defines it"
#endif

struct attn_zip_functions attn_zf;
struct attn_zlib_functions attn_zlib;

/* A library opened once a process: whether it was, and why not. */
struct loaded {
	pthread_once_t once;
	int ok;
	char why[160];
};

static struct loaded zip_state = { PTHREAD_ONCE_INIT, 0, "" };
static struct loaded zlib_state = { PTHREAD_ONCE_INIT, 0, "" };

/* Library `soname`, or NULL with st->why said. */
static void *
open_lib(struct loaded *st, const char *soname)
{
	void *lib = dlopen(soname, RTLD_NOW | RTLD_LOCAL);
	const char *e;

	if (lib == NULL) {
		e = dlerror();
		snprintf(st->why, sizeof st->why, "%s",
		    e ? e : "dlopen failed");
	}
	return lib;
}

#define LOOKUP(soname, table, f) \
	if ((sym = dlsym(lib, #f)) == NULL) { \
		snprintf(st->why, sizeof st->why, "%s has no %s", soname, \
		    #f); \
		return; \
	} \
	memcpy(&(table).f, &sym, sizeof sym);

/* libzip's functions (zip) or zlib's, into their table; st->ok when
 * every one was found. */
static void
load_table(struct loaded *st, int zip)
{
	const char *soname = zip ? ATTN_ZIP_SONAME : ATTN_ZLIB_SONAME;
	void *lib = open_lib(st, soname), *sym;

	if (lib == NULL)
		return;
#define ZIP_LOOKUP(f) LOOKUP(soname, attn_zf, f)
#define ZLIB_LOOKUP(f) LOOKUP(soname, attn_zlib, f)
	if (zip) {
		ATTN_ZIP_FUNCTIONS(ZIP_LOOKUP)
	} else {
		ATTN_ZLIB_FUNCTIONS(ZLIB_LOOKUP)
	}
#undef ZIP_LOOKUP
#undef ZLIB_LOOKUP
	st->ok = 1;	/* open for the process's life */
}

static void
zip_load(void)
{
	load_table(&zip_state, 1);
}

static void
zlib_load(void)
{
	load_table(&zlib_state, 0);
}

/* The library of st, loaded by `load` once; or the error that says why
 * not. */
static enum attn_status
loaded(struct loaded *st, void (*load)(void), const char *lib,
    const char *file, const char *doing, struct attn_error *err)
{
	if (pthread_once(&st->once, load) == 0 && st->ok)
		return ATTN_OK;
	return attn_error_set(err, ATTN_ERR_NOMEM, file, 0, 0, "%s a .npz "
	    "archive needs %s, which could not be loaded: %s", doing, lib,
	    st->why);
}

enum attn_status
attn_zip_load(const char *file, const char *doing, struct attn_error *err)
{
	return loaded(&zip_state, zip_load, "libzip", file, doing, err);
}

enum attn_status
attn_zlib_load(const char *file, const char *doing, struct attn_error *err)
{
	return loaded(&zlib_state, zlib_load, "zlib", file, doing, err);
}
