#!/bin/sh
# install.sh - `make install` into a scratch DESTDIR puts the binary, the
# man page, libattn.a and attn.h where PREFIX says; a C program builds
# against the installed header and library alone and computes the worked
# example; `make uninstall` removes all four.
set -eu

top=$(cd "$(dirname "$0")/.." && pwd)
dest=$(mktemp -d)
trap 'rm -rf "$dest"' EXIT
trap 'exit 130' INT TERM
prefix=/opt/attn-test
files="bin/attn share/man/man1/attn.1 lib/libattn.a include/attn.h"

make -C "$top" --no-print-directory -s install DESTDIR="$dest" \
    PREFIX=$prefix >/dev/null
for f in $files; do
	[ -f "$dest$prefix/$f" ] || { echo "install: missing $prefix/$f"; exit 1; }
done

cat >"$dest/use.c" <<'PROG'
#include <stdio.h>
#include <string.h>
#include <attn.h>

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
PROG
${CC:-cc} -std=c11 -I"$dest$prefix/include" -o "$dest/use" "$dest/use.c" \
    "$dest$prefix/lib/libattn.a" $(pkg-config --libs libcjson) -lm -lpthread
got=$("$dest/use")
[ "$got" = "6.698 3.302" ] || { echo "install: program printed '$got'"; exit 1; }
"$dest$prefix/bin/attn" --version >/dev/null

make -C "$top" --no-print-directory -s uninstall DESTDIR="$dest" \
    PREFIX=$prefix >/dev/null
for f in $files; do
	[ ! -e "$dest$prefix/$f" ] || { echo "uninstall: left $prefix/$f"; exit 1; }
done
echo "install: 1 passed, 0 failed"
