#!/bin/sh
# boundary.sh LIBATTN - the one public boundary of libattn: every global
# symbol that LIBATTN (libattn.a) defines starts with attn_, cli/
# includes lib/attn.h, lib/attn_io.h and lib/attn_private.h and nothing
# else of lib/ (its own headers are cli/*.h, system headers come in <>),
# neither public header names a cJSON type or a kernel, or includes a
# header of lib/ but attn.h, and neither declares what attn's own program
# shares with the library (the thread pool, blocks, the memory account,
# the CPU count, escaping, random numbers): that is attn_private.h's,
# which make install does not ship.
set -u

lib=$1
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

[ $fail -eq 0 ] || exit 1
echo "boundary: $count global symbols, all attn_; cli/ includes only" \
    "attn.h, attn_io.h and attn_private.h of lib/; the public headers" \
    "hold the computation, readers and number text alone"
