/*
 * zip_load.h - libzip and zlib, opened on first use (zip_load.c), for
 * lib/ alone: the functions of libzip that the .npz reader (read_npz.c)
 * calls, each a field of attn_zf, filled once by attn_zip_load; and
 * zlib's CRC-32, which the writer (write_npz.c) takes, in attn_zlib,
 * filled once by attn_zlib_load.  The only header of lib/ that includes
 * zip.h and zlib.h, so that their types stay out of internal.h.
 */
#ifndef ATTN_ZIP_LOAD_H
#define ATTN_ZIP_LOAD_H

#include <zip.h>
#include <zlib.h>

#include "internal.h"

/* The functions of libzip that attn calls. */
#define ATTN_ZIP_FUNCTIONS(X) \
	X(zip_discard) X(zip_error_code_zip) X(zip_error_fini) \
	X(zip_error_init) X(zip_error_strerror) X(zip_fclose) \
	X(zip_file_get_error) X(zip_fopen_index) X(zip_fread) \
	X(zip_get_error) X(zip_get_name) X(zip_get_num_entries) \
	X(zip_open_from_source) X(zip_source_buffer_create) \
	X(zip_source_free) X(zip_stat_index) X(zip_stat_init)

/* Each function as zip.h types it; valid once attn_zip_load succeeded. */
struct attn_zip_functions {
#define ATTN_ZIP_FIELD(f) __typeof__(f) *f;
	ATTN_ZIP_FUNCTIONS(ATTN_ZIP_FIELD)
};

extern struct attn_zip_functions attn_zf;

/*
 * Open libzip (the first call; once a process, on any thread) and fill
 * attn_zf: ATTN_OK, or ATTN_ERR_NOMEM (exit 71, a system error) naming
 * the file and saying why: "DOING a .npz archive needs libzip, which
 * could not be loaded: WHY" (doing: "reading", "writing").
 */
enum attn_status attn_zip_load(const char *file, const char *doing,
    struct attn_error *err);

/* zlib's functions that attn calls, and their fields, likewise. */
#define ATTN_ZLIB_FUNCTIONS(X) X(crc32_z)

struct attn_zlib_functions {
	ATTN_ZLIB_FUNCTIONS(ATTN_ZIP_FIELD)
};

extern struct attn_zlib_functions attn_zlib;

/* Open zlib as attn_zip_load opens libzip: "DOING a .npz archive needs
 * zlib, which could not be loaded: WHY". */
enum attn_status attn_zlib_load(const char *file, const char *doing,
    struct attn_error *err);

#endif
