#!/bin/sh
# build.sh - the Makefile takes CC, CXX and AR from the environment and
# adds a command line's LDLIBS to the libraries attn needs (libstdc++
# among them, for lib/charconv.cc, and zlib), without libzip.  Checked on what
# `make -n` would run in a scratch build directory, so nothing is built.
set -u

top=$(cd "$(dirname "$0")/.." && pwd)
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
trap 'exit 130' INT TERM
fail=0

no() {
	echo "FAIL build: $*"
	fail=1
}

CC=attn-test-cc CXX=attn-test-cxx AR=attn-test-ar make -C "$top" --no-print-directory -n \
    BUILD="$tmp/b" all >"$tmp/env.log" 2>&1
grep -q '^attn-test-cc .* -c -o ' "$tmp/env.log" ||
    no "CC from the environment does not compile"
grep -q '^attn-test-cxx .* -c -o .*charconv\.o lib/charconv\.cc' \
    "$tmp/env.log" || no "CXX from the environment does not compile"
grep -q '^attn-test-ar rcs ' "$tmp/env.log" ||
    no "AR from the environment does not archive"
grep -q '^attn-test-cc .* -o '"$tmp"'/b/attn ' "$tmp/env.log" ||
    no "CC from the environment does not link"

make -C "$top" --no-print-directory -n BUILD="$tmp/b" \
    LDLIBS=-lattn-test-extra all >"$tmp/ldlibs.log" 2>&1
# make -n shows a recipe's continued lines as they are written: join them.
link=$(sed -e :a -e '/\\$/N; s/\\\n//; ta' "$tmp/ldlibs.log" |
    grep -- " -o $tmp/b/attn ")
# zlib is linked as any library is; libzip is not, but loaded by the
# first .npz read (lib/zip_load.c), so that a run that reads none does
# not load it and libcrypto at its start (debian/rules shows
# dpkg-shlibdeps a program that links it, so that the packages' shlibs
# name it all the same).
for lib in -lattn-test-extra $(pkg-config --libs libcjson zlib) \
    -lstdc++ -lm -lunistring; do
	case " $link " in
	*" $lib "*) ;;
	*) no "with LDLIBS=-lattn-test-extra the link lacks $lib: $link" ;;
	esac
done
case " $link " in
*" -lzip "*) no "the link has -lzip, which the first .npz loads: $link" ;;
esac

# Every package a target installs is one install-deps.sh knows how to
# find (else it counts as missing on every run, and each make runs
# apt-get, which fails offline): the lists as make holds them.
pkgs=$(make -C "$top" --no-print-directory -pn BUILD="$tmp/b" 2>/dev/null |
    sed -n 's/^[A-Z_]*_PKGS *:*= *//p' | tr ' ' '\n' | grep -v '^\$' |
    sort -u)
[ -n "$pkgs" ] || no "make -p lists no *_PKGS"
for pkg in $pkgs; do
	grep -qF "	$pkg)" "$top/tests/install-deps.sh" ||
	    no "tests/install-deps.sh cannot tell whether $pkg is installed"
done

[ $fail -eq 0 ] || exit 1
echo "build: CC, CXX and AR from the environment, LDLIBS added, no" \
    "libzip linked, every package found: 5 passed"
