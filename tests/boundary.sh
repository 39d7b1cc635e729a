#!/bin/sh
# boundary.sh LIBATTN [LIBATTN_SO] - the one public boundary of libattn:
# LIBATTN_SO (libattn.so.0, its soname) exports the functions and tables
# that lib/attn.h and lib/attn_io.h declare, every one of them and
# nothing else, as lib/libattn.map lists them; every global
# symbol that LIBATTN (libattn.a) defines starts with attn_, cli/
# includes lib/attn.h, lib/attn_io.h and lib/attn_private.h and nothing
# else of lib/ (its own headers are cli/*.h, system headers come in <>),
# neither public header names a cJSON type or a kernel, or includes a
# header of lib/ but attn.h, and neither declares what attn's own program
# shares with the library (the thread pool, blocks, the memory account,
# the CPU count, escaping, random numbers): that is attn_private.h's,
# which make install does not ship.  lib/attn_session.h, attn's command
# line as a library call, is public too: its functions are exported, and
# cli/session.c, which defines them, alone of cli/ includes it.
set -u

lib=$1
so=${2:-}
top=$(cd "$(dirname "$0")/.." && pwd)
fail=0

# nm -g --defined-only: "ADDRESS TYPE NAME" for each global a member
# defines (member names and blank lines have fewer fields).  What a
# sanitizer build adds for its own use (__odr_asan.NAME) is not ours.
syms=$(nm -g --defined-only "$lib" | awk 'NF == 3 &&
    $3 !~ /^__(odr_asan|asan_|ubsan_|sancov_)/') ||
    { echo "boundary: nm failed"; exit 1; }
bad=$(printf '%s\n' "$syms" | awk '$3 !~ /^attn_/ { print $3 }')
count=$(printf '%s\n' "$syms" | grep -c .)
if [ -n "$bad" ]; then
	echo "FAIL boundary: libattn.a defines globals without the attn_" \
	    "prefix (make them static, or name them attn_...):"
	printf '%s\n' "$bad" | sed 's/^/    /'
	fail=1
fi
if [ "$count" -eq 0 ]; then
	echo "FAIL boundary: nm found no global symbol in $lib"
	fail=1
fi

# Every quoted #include of cli/ names attn.h, attn_io.h, attn_private.h
# or a header of cli/ itself.
inc='s/^[[:space:]]*#[[:space:]]*include[[:space:]]*"\([^"]*\)".*/\1/p'
for f in "$top"/cli/*.c "$top"/cli/*.h; do
	sed -n "$inc" "$f" | while read -r h; do
		if [ "$h" != attn.h ] && [ "$h" != attn_io.h ] &&
		    [ "$h" != attn_private.h ] &&
		    { [ "$h" != attn_session.h ] ||
		    [ "${f##*/}" != session.c ]; } &&
		    [ ! -f "$top/cli/$h" ] || [ "$h" != "${h##*/}" ]; then
			echo "FAIL boundary: cli/${f##*/} includes \"$h\":" \
			    "cli/ may include only attn.h, attn_io.h and" \
			    "attn_private.h of lib/"
		fi
	done
done | { grep . && exit 1; exit 0; } || fail=1

# The public headers: no cJSON, no internal header, and no choice of
# kernel: the library computes with one in double precision (attn(1),
# Order of operations), and the reference kernel is the tests' oracle
# (tests/unit/kernel_ref.c), which they run through lib/internal.h.
for h in attn.h attn_io.h; do
	if grep -nE 'cJSON([ _*]|\.h)' "$top/lib/$h"; then
		echo "FAIL boundary: lib/$h names cJSON"
		fail=1
	fi
	if grep -nE 'attn_kernel|ATTN_KERNEL' "$top/lib/$h"; then
		echo "FAIL boundary: lib/$h offers a choice of kernel:" \
		    "the library has one; an oracle lives under tests/"
		fail=1
	fi
	sed -n "$inc" "$top/lib/$h" | grep -v '^attn\.h$' |
	    sed "s|^|FAIL boundary: lib/$h includes |" | grep . && fail=1
	if grep -nE '\<(attn_pool_|attn_block_|attn_memory_|attn_cpu_count|attn_text_|attn_random_|attn_suggest)[a-z_]*\(' \
	    "$top/lib/$h"; then
		echo "FAIL boundary: lib/$h declares the CLI's plumbing:" \
		    "it goes in lib/attn_private.h, which make install" \
		    "does not ship"
		fail=1
	fi
done

# The shared library's exports against the public declarations: a name
# declared at the start of a line in a header is a static inline
# function's definition (attn_at), which nothing exports.
if [ -n "$so" ]; then
	declared=$(cat "$top/lib/attn_io.h" "$top/lib/attn_session.h" |
	    ${CC:-cc} -E -P -I"$top/lib" -x c - |
	    tr '\n' ' ' | grep -oE '\<attn_[a-z0-9_]+ *[([]' |
	    sed 's/ *[([]$//' | sort -u) ||
	    { echo "FAIL boundary: cc -E of the public headers failed"; exit 1; }
	inline=$(cat "$top/lib/attn.h" "$top/lib/attn_io.h" \
	    "$top/lib/attn_session.h" |
	    sed -n 's/^\(attn_[a-z0-9_]*\)(.*/\1/p' | sort -u)
	want=$(printf '%s\n' "$declared" | grep -vxF "$inline" | sort -u)
	exported=$(nm -D --defined-only "$so" | awk 'NF == 3 && $2 != "A" {
	    sub(/@.*/, "", $3); print $3 }' | sort -u) ||
	    { echo "FAIL boundary: nm -D $so failed"; exit 1; }
	extra=$(printf '%s\n' "$exported" | grep -vxF "$want")
	missing=$(printf '%s\n' "$want" | grep -vxF "$exported")
	if [ -n "$extra" ]; then
		echo "FAIL boundary: ${so##*/} exports what no public header" \
		    "declares (lib/libattn.map lists only the public API):"
		printf '%s\n' "$extra" | sed 's/^/    /'
		fail=1
	fi
	if [ -n "$missing" ]; then
		echo "FAIL boundary: ${so##*/} does not export what the public" \
		    "headers declare (add it to lib/libattn.map):"
		printf '%s\n' "$missing" | sed 's/^/    /'
		fail=1
	fi
	soname=$(objdump -p "$so" | awk '$1 == "SONAME" { print $2 }')
	if [ "$soname" != libattn.so.0 ]; then
		echo "FAIL boundary: ${so##*/}'s soname is '$soname'," \
		    "not libattn.so.0"
		fail=1
	fi
	nexported=$(printf '%s\n' "$exported" | grep -c .)
fi

[ $fail -eq 0 ] || exit 1
echo "boundary: $count global symbols, all attn_; cli/ includes only" \
    "attn.h, attn_io.h and attn_private.h of lib/; the public headers" \
    "hold the computation, readers and number text alone${so:+;
${so##*/} exports their $nexported functions and tables alone}"
