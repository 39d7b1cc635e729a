#!/bin/sh
# locale.sh CMD... - run CMD with LC_ALL set to a locale whose decimal
# point is a comma (de_DE.UTF-8), generating that locale first if this
# machine lacks it.  attn's output must not change.  make -j runs this for
# several suites at once, so the generation holds a lock (flock(1), from
# util-linux) and looks again once it has it.
set -eu

loc=de_DE.UTF-8
have_locale() {
	locale -a 2>/dev/null | grep -qi '^de_DE\.utf-\{0,1\}8$'
}
generate() {
	have_locale || localedef -i de_DE -f UTF-8 "$loc" >/dev/null 2>&1
}
if ! have_locale; then
	if command -v flock >/dev/null 2>&1; then
		lock=${TMPDIR:-/tmp}/attn-localedef.lock
		( flock 9 && generate ) 9>"$lock" || failed=1
	else
		generate || failed=1
	fi
	if [ "${failed:-0}" = 1 ]; then
		echo "locale.sh: cannot generate $loc (run as root with the" \
		    "locales package)" >&2
		exit 1
	fi
fi
ATTN_TEST_LOCALE=$loc
export ATTN_TEST_LOCALE
exec "$@"
