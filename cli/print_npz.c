/*
 * print_npz.c - NumPy .npz output, attn's own addition to SPEC's
 * formats: every stage of the list in one archive, as numpy.savez
 * writes one, member NAME.npy a stage by its name, in the order the
 * list has them.  Each member's bytes are those -f npy -s NAME writes
 * (print_npy_stage), so that numpy.load(FILE)[NAME] is that array, and
 * attn --check FILE reads the archive back by the same names.
 *
 * The members are made one stage at a time into buffers that libattn
 * charges to the memory limit (attn_npz_add), the numbers of one stage
 * at a time beside them; libattn then makes the archive with libzip
 * (attn_npz_write, which charges what libzip holds) and hands it over in
 * pieces, which go into the stream the printer is given, as any
 * format's text does: the output rules (-o's temporary file and rename,
 * --svg's both-or-neither, nothing written by a failed run) are the
 * same.
 */
#include <stdio.h>

#include "attn.h"
#include "attn_io.h"
#include "print.h"

/* attn_npz_write's pieces of the archive, into the printer's stream
 * (whose failure, memory, it reports when it is closed). */
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
	unsigned char *b;

	if ((status = print_npy_stage(p, s, &a)) != ATTN_OK)
		return status;
	b = attn_npz_add(z, attn_stage_table[s].name, print_npy_stage_len(&a),
	    p->err);
	if (b != NULL)
		print_npy_stage_bytes(&a, b);
	print_npy_stage_free(&a);
	return b != NULL ? ATTN_OK : ATTN_ERR_NOMEM;
}

enum attn_status
print_npz(const struct printer *p)
{
	struct attn_npz z = { 0 };
	enum attn_status status = ATTN_OK;
	size_t k;

	for (k = 0; k < p->o->nstages && status == ATTN_OK; k++)
		status = add_stage(p, p->o->stages[k], &z);
	if (status == ATTN_OK)
		status = attn_npz_write(&z, put_piece, p->fp, p->err);
	attn_npz_free(&z);
	return status;
}
