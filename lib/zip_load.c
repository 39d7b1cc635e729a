/*
 * zip_load.c - libzip loaded with dlopen the first time an archive is
 * read (lib/zip_load.h says why), by the name of the library the build
 * linked against (ATTN_LIBZIP, its soname, from the Makefile), so that
 * the functions found are those of the version zip.h declared.  The
 * Debian packages depend on that library by name, as a link would have
 * made them.
 */
#include <dlfcn.h>
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "internal.h"
#include "zip_load.h"

#ifndef ATTN_LIBZIP
#error "ATTN_LIBZIP, the soname of libzip, comes from the Makefile"
#endif

struct attn_zip attn_zip_fns;

#define FN(name) { "zip_" #name, offsetof(struct attn_zip, name) }

static const struct {
	const char *name;
	size_t at;	/* its pointer's place in struct attn_zip */
} fns[] = {
	FN(error_init), FN(error_fini), FN(error_code_zip),
	FN(error_strerror), FN(source_buffer_create), FN(source_free),
	FN(open_from_source), FN(discard), FN(get_num_entries), FN(get_name),
	FN(get_error), FN(stat_init), FN(stat_index), FN(fopen_index),
	FN(fread), FN(file_get_error), FN(fclose),
};

_Static_assert(sizeof fns / sizeof fns[0] * sizeof(void (*)(void)) ==
    sizeof(struct attn_zip), "a name for every function of attn_zip");

static pthread_once_t once = PTHREAD_ONCE_INIT;
static char failure[256];	/* why it did not load; "" when it did */

static void
load(void)
{
	void *lib, *sym;
	const char *why;
	size_t i;

	if ((lib = dlopen(ATTN_LIBZIP, RTLD_NOW | RTLD_LOCAL)) == NULL) {
		why = dlerror();
		snprintf(failure, sizeof failure, "%s", why ? why :
		    ATTN_LIBZIP " not found");
		return;
	}
	for (i = 0; i < sizeof fns / sizeof fns[0]; i++) {
		if ((sym = dlsym(lib, fns[i].name)) == NULL) {
			snprintf(failure, sizeof failure, "%s has no %s",
			    ATTN_LIBZIP, fns[i].name);
			return;
		}
		/* POSIX's way from dlsym's pointer to a function's */
		memcpy((char *)&attn_zip_fns + fns[i].at, &sym, sizeof sym);
	}
}

int
attn_zip_load(const char *file, struct attn_error *err)
{
	pthread_once(&once, load);
	if (failure[0] == '\0')
		return 0;
	attn_error_set(err, ATTN_ERR_NOINPUT, file, 0, 0,
	    "cannot read a .npz archive: libzip did not load (%s)", failure);
	return -1;
}
