/*
 * zip_load.c - libzip, opened (dlopen) by the first .npz archive a run
 * reads or writes, not linked: a run that touches none never maps it,
 * nor the libcrypto, libbz2 and libz it brings, whose loading and
 * relocation took 12% of the CPU time of a whole run at n = 512 (CSV in
 * and out: 43 ms against 37 of the same attn with libzip left out, 30
 * pairs under farm-bench; issue 23's start-up).  Its soname is the one
 * the build linked against (ATTN_ZIP_SONAME, from the Makefile); its
 * functions are looked up with the types zip.h gives them
 * (zip_load.h), all of them at once, so that a reader and a writer
 * find the same library or none.
 */
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "zip_load.h"

#ifndef ATTN_ZIP_SONAME
#error "ATTN_ZIP_SONAME: the soname of libzip, as the Makefile defines it"
#endif

struct attn_zip_functions attn_zf;

static pthread_once_t zip_once = PTHREAD_ONCE_INIT;
static int zip_loaded;
static char zip_why[160];	/* why it could not be, when it was not */

static void
zip_load(void)
{
	void *lib = dlopen(ATTN_ZIP_SONAME, RTLD_NOW | RTLD_LOCAL), *sym;
	const char *e;

	if (lib == NULL) {
		e = dlerror();
		snprintf(zip_why, sizeof zip_why, "%s", e ? e : "dlopen failed");
		return;
	}
#define ZIP_LOOKUP(f) \
	if ((sym = dlsym(lib, #f)) == NULL) { \
		snprintf(zip_why, sizeof zip_why, "%s has no %s", \
		    ATTN_ZIP_SONAME, #f); \
		return; \
	} \
	memcpy(&attn_zf.f, &sym, sizeof sym);
	ATTN_ZIP_FUNCTIONS(ZIP_LOOKUP)
#undef ZIP_LOOKUP
	zip_loaded = 1;	/* the library stays open for the process's life */
}

enum attn_status
attn_zip_load(const char *file, const char *doing, struct attn_error *err)
{
	if (pthread_once(&zip_once, zip_load) == 0 && zip_loaded)
		return ATTN_OK;
	return attn_error_set(err, ATTN_ERR_NOMEM, file, 0, 0, "%s a .npz "
	    "archive needs libzip, which could not be loaded: %s", doing,
	    zip_why);
}
