#!/bin/sh
# use_libattn.sh LIBDIR [PKG-CONFIG OPTION]... - tests/use_libattn.c
# built as a user builds it, with `pkg-config --cflags --libs attn` alone
# (PKG_CONFIG_PATH and the options, such as --define-variable=prefix=DIR,
# find the installed .pc file), twice: against the shared library, which
# the program must name (NEEDED libattn.so.0), take attn_compute from and
# load from LIBDIR; and with pkg-config --static against libattn.a, which
# leaves it no libattn to load.  Each prints the worked example's output.
# tests/install.sh runs it on make install's files, tests/deb.sh on the
# packages'.
set -u

libdir=$1
shift
top=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d) || exit 1
trap 'rm -rf "$work"' EXIT
trap 'exit 130' INT TERM
fail() {
	echo "FAIL use_libattn: $*"
	exit 1
}

# build NAME FLAGS...: cc of use_libattn.c into $work/NAME.
build() {
	name=$1
	shift
	${CC:-cc} -std=c11 -o "$work/$name" "$top/tests/use_libattn.c" "$@" \
	    >"$work/cc.log" 2>&1 ||
	    { head -n 20 "$work/cc.log"; fail "cc ... $*: failed"; }
}

# run NAME: the program prints the worked example's output.
run() {
	got=$(LD_LIBRARY_PATH=$libdir "$work/$1") ||
	    fail "the program linked $1 failed"
	[ "$got" = "6.698 3.302" ] ||
	    fail "the program linked $1 printed '$got', not '6.698 3.302'"
}

flags=$(pkg-config "$@" --cflags --libs attn) ||
    fail "pkg-config --cflags --libs attn failed"
# shellcheck disable=SC2086
build shared $flags
readelf -d "$work/shared" | grep -q 'NEEDED.*\[libattn\.so\.0\]' ||
    fail "the program linked with $flags does not name libattn.so.0"
nm -D --undefined-only "$work/shared" | grep -qw attn_compute ||
    fail "the program linked with $flags holds attn_compute itself"
loaded=$(LD_LIBRARY_PATH=$libdir ldd "$work/shared" |
    awk '$1 == "libattn.so.0" { print $3 }')
[ "$loaded" = "$libdir/libattn.so.0" ] ||
    fail "the program loads '$loaded', not $libdir/libattn.so.0"
run shared

# pkg-config --static gives what libattn.a needs besides; -l:libattn.a
# picks the archive where -lattn would find libattn.so first.
flags=$(pkg-config "$@" --static --cflags --libs attn) ||
    fail "pkg-config --static --cflags --libs attn failed"
# shellcheck disable=SC2086
build static $(printf '%s\n' $flags | sed 's/^-lattn$/-l:libattn.a/')
! readelf -d "$work/static" | grep -q 'NEEDED.*libattn' ||
    fail "the program linked with libattn.a still needs libattn.so"
run static
echo "use_libattn: linked with libattn.so.0 and with libattn.a through" \
    "pkg-config, both print 6.698 3.302"
