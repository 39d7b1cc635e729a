/*
 * signals.h - every signal attn handles, and why: while an input file is
 * mapped, a SIGBUS inside it (the file shrank under attn) becomes the
 * line a failed read gives and exit 74; while output is written, SIGINT,
 * SIGTERM and SIGHUP remove the temporary files before attn dies, and
 * SIGXFSZ is ignored so that a file size limit is a write error attn
 * reports and cleans up after.
 */
#ifndef ATTN_SIGNALS_H
#define ATTN_SIGNALS_H

#include <signal.h>
#include <stddef.h>

/* The len bytes at start are the file name (fd kept open, so that a
 * shrunk file can be told from an I/O error) mapped: a SIGBUS inside them
 * writes "attn: NAME: read error: ..." and exits 74.  Returns the slot
 * that signals_bus_release(slot) gives back (SIGBUS's disposition with
 * the last), or -1 when 16 mappings are held already and the file must
 * be read instead.  Any thread may call them. */
int signals_bus_catch(const char *start, size_t len, int fd,
    const char *name);
void signals_bus_release(int slot);

/* An output opens: the cleanup handlers and SIGXFSZ's go in with the
 * first, and its temporary file tmp (NULL: none; the name must live
 * until signals_unpend) joins those a signal removes. */
void signals_watch(char *tmp);

/* tmp (NULL: none) is no longer one to remove: renamed, or removed. */
void signals_unpend(const char *tmp);

/* An output closes: the dispositions are put back with the last. */
void signals_unwatch(void);

/* Hold off the cleanup signals while the temporary files are renamed
 * (the mask before in *old), so that one arriving then finds all of
 * them renamed, not some; signals_release puts *old back, when a
 * pending one kills attn. */
void signals_hold(sigset_t *old);
void signals_release(const sigset_t *old);

#endif
