/*
 * print_npz.c - NumPy .npz output (-f npz in attn(1)): every stage of the
 * list in one archive, as numpy.savez writes one, member NAME.npy a stage
 * by its name, in the order the list has them.  Each member's bytes are
 * those -f npy -s NAME writes (print_npy_stage), so that
 * numpy.load(FILE)[NAME] is that array, and attn --check FILE reads the
 * archive back by the same names.
 *
 * A stage at a time, its .npy header and numbers go into the archive
 * (attn_npz_member) as they lie, the stage's own memory where its
 * numbers are already in the file's order; the archive's bytes go into
 * the stream the printer is given, as any format's text does: the
 * output rules (-o's temporary file and rename, --svg's both-or-neither,
 * nothing written by a failed run) are the same.
 */
#include <stdio.h>

#include "attn.h"
#include "attn_io.h"
#include "print.h"

/* The archive's pieces, into the printer's stream (whose failure, of
 * memory or of the file, is reported when it is closed). */
static void
put_piece(void *fp, const void *bytes, size_t n)
{
	fwrite(bytes, 1, n, fp);
}

/* Stage s as a member of z. */
static enum attn_status
add_stage(const struct printer *p, enum attn_stage s, struct attn_npz *z)
{
	struct npy_stage a;
	enum attn_status status;

	if ((status = print_npy_stage(p, s, &a)) != ATTN_OK)
		return status;
	status = attn_npz_member(z, attn_stage_table[s].name, a.pieces,
	    a.npieces, p->err);
	print_npy_stage_free(&a);
	return status;
}

enum attn_status
print_npz(const struct printer *p)
{
	struct attn_npz z;
	enum attn_status status = ATTN_OK;
	size_t k;

	attn_npz_start(&z, put_piece, p->fp);
	for (k = 0; k < p->o->nstages && status == ATTN_OK; k++)
		status = add_stage(p, p->o->stages[k], &z);
	if (status == ATTN_OK)
		attn_npz_finish(&z);
	attn_npz_free(&z);
	return status;
}
