#!/bin/sh
# locale.sh CMD... - run CMD with LC_ALL set to a locale whose decimal
# point is a comma (de_DE.UTF-8), generating that locale first if this
# machine lacks it.  attn's output must not change.
set -eu

loc=de_DE.UTF-8
if ! locale -a 2>/dev/null | grep -qi '^de_DE\.utf-\{0,1\}8$'; then
	localedef -i de_DE -f UTF-8 "$loc" >/dev/null 2>&1 || {
		echo "locale.sh: cannot generate $loc (run as root with the" \
		    "locales package)" >&2
		exit 1
	}
fi
ATTN_TEST_LOCALE=$loc
export ATTN_TEST_LOCALE
exec "$@"
