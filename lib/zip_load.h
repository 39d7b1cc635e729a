/*
 * zip_load.h - libzip's functions as lib/read_npz.c calls them, through
 * pointers that lib/zip_load.c fills the first time an archive is read:
 * a program that reads no .npz never loads libzip, nor the libraries it
 * links (libcrypto among them), whose loading took most of the CPU time of
 * attn's start (bench/README.md).  Each zip_ name below is the pointer of
 * the same name, so that read_npz.c reads as libzip's own code does;
 * attn_zip_load must have succeeded before any of them is called.
 */
#ifndef ATTN_ZIP_LOAD_H
#define ATTN_ZIP_LOAD_H

#include <zip.h>

#include "attn.h"

struct attn_zip {
	void (*error_init)(zip_error_t *);
	void (*error_fini)(zip_error_t *);
	int (*error_code_zip)(const zip_error_t *);
	const char *(*error_strerror)(zip_error_t *);
	zip_source_t *(*source_buffer_create)(const void *, zip_uint64_t, int,
	    zip_error_t *);
	void (*source_free)(zip_source_t *);
	zip_t *(*open_from_source)(zip_source_t *, int, zip_error_t *);
	void (*discard)(zip_t *);
	zip_int64_t (*get_num_entries)(zip_t *, zip_flags_t);
	const char *(*get_name)(zip_t *, zip_uint64_t, zip_flags_t);
	zip_error_t *(*get_error)(zip_t *);
	void (*stat_init)(zip_stat_t *);
	int (*stat_index)(zip_t *, zip_uint64_t, zip_flags_t, zip_stat_t *);
	zip_file_t *(*fopen_index)(zip_t *, zip_uint64_t, zip_flags_t);
	zip_int64_t (*fread)(zip_file_t *, void *, zip_uint64_t);
	zip_error_t *(*file_get_error)(zip_file_t *);
	int (*fclose)(zip_file_t *);
};

/* The functions, filled by attn_zip_load. */
extern struct attn_zip attn_zip_fns;

/* Load libzip once a process (any thread may ask): 0, or -1 with an
 * error naming file, the archive that needed it, when the library or
 * one of its functions cannot be loaded (ATTN_ERR_NOINPUT: the archive
 * cannot be read here). */
int attn_zip_load(const char *file, struct attn_error *err);

#define zip_error_init (attn_zip_fns.error_init)
#define zip_error_fini (attn_zip_fns.error_fini)
#define zip_error_code_zip (attn_zip_fns.error_code_zip)
#define zip_error_strerror (attn_zip_fns.error_strerror)
#define zip_source_buffer_create (attn_zip_fns.source_buffer_create)
#define zip_source_free (attn_zip_fns.source_free)
#define zip_open_from_source (attn_zip_fns.open_from_source)
#define zip_discard (attn_zip_fns.discard)
#define zip_get_num_entries (attn_zip_fns.get_num_entries)
#define zip_get_name (attn_zip_fns.get_name)
#define zip_get_error (attn_zip_fns.get_error)
#define zip_stat_init (attn_zip_fns.stat_init)
#define zip_stat_index (attn_zip_fns.stat_index)
#define zip_fopen_index (attn_zip_fns.fopen_index)
#define zip_fread (attn_zip_fns.fread)
#define zip_file_get_error (attn_zip_fns.file_get_error)
#define zip_fclose (attn_zip_fns.fclose)

#endif
