/*
 * use_libattn.c - a program that uses libattn as its users would: attn.h
 * and attn_io.h, arrays read from text, attn_compute on the worked
 * example (Q = [1, 0], keys [1, 0] and [0, 1], V = 10 I), the output
 * printed to 3 decimals: "6.698 3.302".  tests/install.sh builds it against `make install`'s
 * files and tests/deb.sh against libattn-dev's, both with pkg-config
 * alone.
 */
#include <stdio.h>
#include <string.h>
#include <attn.h>
#include <attn_io.h>

int
main(void)
{
	const char *q = "1,0\n", *k = "1,0\n0,1\n", *v = "[[10,0],[0,10]]";
	struct attn_array a[3];
	struct attn_matrix m[3];
	struct attn_config cfg;
	struct attn_stages st;
	struct attn_error err;
	int i;

	if (attn_read_array("q.csv", q, strlen(q), ATTN_FMT_AUTO,
	    ATTN_READ_FINITE, &a[0], &err) != ATTN_OK ||
	    attn_read_array("k.csv", k, strlen(k), ATTN_FMT_AUTO,
	    ATTN_READ_FINITE, &a[1], &err) != ATTN_OK ||
	    attn_read_array("v.json", v, strlen(v), ATTN_FMT_AUTO,
	    ATTN_READ_FINITE, &a[2], &err) != ATTN_OK)
		return 1;
	for (i = 0; i < 3; i++)
		m[i] = attn_array_matrix(&a[i]);
	attn_config_init(&cfg);
	if (attn_compute(&cfg, &m[0], &m[1], &m[2], &st, &err) != ATTN_OK)
		return 1;
	printf("%.3f %.3f\n", *attn_at(&st.stage[ATTN_STAGE_OUTPUT], 0, 0),
	    *attn_at(&st.stage[ATTN_STAGE_OUTPUT], 0, 1));
	attn_stages_free(&st);
	for (i = 0; i < 3; i++)
		attn_array_free(&a[i]);
	return 0;
}
