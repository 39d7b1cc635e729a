#!/bin/sh
# deb.sh ATTN - the Debian packages, built, linted, installed and used.
#
# First the Makefile's lists of packages (BUILD_PKGS, TEST_PKGS, which
# make deb-test passes) and debian/control's Build-Depends are compared:
# a package the build needs and Build-Depends lacks fails here, not in
# a clean chroot.  Then dpkg-buildpackage -us -uc -b builds attn,
# libattn0 and libattn-dev (debian/) in a copy of the tree that holds no
# .git (the files git tracks or would add; outside git, all but build/),
# running the quick suites as it does; lintian finds no error and no
# warning (debian/*.lintian-overrides
# say why for the ones that do not apply); attn and libattn0 depend on
# libzip, which neither links; then, from the installed
# packages: attn --explain on the worked example prints what ATTN (the
# build make check tested) prints, attn --version and the .pc file say
# the tree's version, the completions work (tests/completion.sh),
# libattn0 holds libattn.so.0 and its symbols file, and a C program builds
# against libattn-dev with pkg-config alone, loading libattn0's
# libattn.so.0, and with pkg-config --static against libattn.a, and
# computes (tests/use_libattn.sh).
#
# DEB_INSTALL=dpkg (CI, as root on a fresh machine) installs the
# packages with dpkg -i and purges them afterwards; otherwise they are
# unpacked with dpkg-deb -x into a scratch root, and this machine's
# packages stay as they were.
set -u

ref=$1
case $ref in /*) ;; *) ref=$(pwd)/$ref ;; esac
top=$(cd "$(dirname "$0")/.." && pwd -P)
work=$(mktemp -d) || exit 1
installed=
cleanup() {
	[ -z "$installed" ] ||
	    dpkg --purge attn-mpi attn python3-attn libattn-dev libattn0 \
	    >/dev/null
	rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
fail() {
	echo "FAIL deb: $*"
	exit 1
}
# The package is built as Debian builds it, not with this make's jobs
# and variables (WERROR, BUILD, SAN).
unset MAKEFLAGS MFLAGS MAKELEVEL

# The Makefile's packages and debian/control's Build-Depends, which a
# build in a chroot holding Build-Depends alone relies on, say the same:
# each of BUILD_PKGS (what `make` builds with) is a build dependency, or
# one of build-essential's, which Debian never lists; each build
# dependency is in BUILD_PKGS, or in TEST_PKGS when only the package's
# tests need it (<!nocheck>), or in MPI_PKGS when only attn-mpi does
# (<!nompi>), but debhelper-compat, which dh alone reads.  The Makefile
# passes the three lists (make deb-test).
[ -n "${BUILD_PKGS:-}" ] && [ -n "${TEST_PKGS:-}" ] &&
    [ -n "${MPI_PKGS:-}" ] ||
    fail "BUILD_PKGS, TEST_PKGS or MPI_PKGS unset: run make deb-test"
# The names of a Depends field on stdin, one a line, each alternative on
# its own, "NAME test" for one that <!nocheck> restricts to the tests,
# "NAME mpi" for one that <!nompi> restricts to attn-mpi.
dep_names() {
	tr ',|' '\n\n' | sed -n -e 's/^[[:space:]]*\([a-z0-9][a-z0-9.+-]*\).*<!nocheck>.*/\1 test/p' \
	    -e 't' -e 's/^[[:space:]]*\([a-z0-9][a-z0-9.+-]*\).*<!nompi>.*/\1 mpi/p' \
	    -e 't' -e 's/^[[:space:]]*\([a-z0-9][a-z0-9.+-]*\).*/\1 build/p'
}
awk '/^[^ \t#]/ { f = sub(/^Build-Depends:/, "") } f' "$top/debian/control" |
    dep_names >"$work/build-depends"
[ -s "$work/build-depends" ] || fail "no Build-Depends in debian/control"
dpkg-query -W -f '${Depends}' build-essential >"$work/essential" ||
    fail "dpkg-query: build-essential is not installed"
{ cut -d' ' -f1 "$work/build-depends"; dep_names <"$work/essential" |
    cut -d' ' -f1; } >"$work/known"
for pkg in $BUILD_PKGS; do
	grep -qxF "$pkg" "$work/known" ||
	    fail "$pkg is in the Makefile's BUILD_PKGS, not in debian/control's Build-Depends"
done
while read -r pkg use; do
	[ "$pkg" = debhelper-compat ] && continue
	case " $BUILD_PKGS " in *" $pkg "*) continue ;; esac
	[ "$use" = build ] &&
	    fail "$pkg is in debian/control's Build-Depends, not in the Makefile's BUILD_PKGS"
	if [ "$use" = mpi ]; then
		case " $MPI_PKGS " in *" $pkg "*) continue ;; esac
		fail "$pkg is in debian/control's Build-Depends <!nompi>, not in the Makefile's MPI_PKGS"
	fi
	case " $TEST_PKGS " in *" $pkg "*) continue ;; esac
	fail "$pkg is in debian/control's Build-Depends <!nocheck>, in neither BUILD_PKGS nor TEST_PKGS of the Makefile"
done <"$work/build-depends"
echo "deb: the Makefile's BUILD_PKGS and debian/control's Build-Depends agree"

version=$(sh "$top/tools/version.sh") || exit 1
src=$work/attn-$version
mkdir "$src"
if root=$(git -C "$top" rev-parse --show-toplevel 2>/dev/null) &&
    [ "$(cd "$root" && pwd -P)" = "$top" ]; then
	git -C "$top" ls-files --cached --others --exclude-standard |
	    while IFS= read -r f; do
		[ -e "$top/$f" ] || [ -L "$top/$f" ] && printf '%s\n' "$f"
	done >"$work/files"
	tar -C "$top" --no-recursion -T "$work/files" -cf - |
	    tar -C "$src" -xf -
else
	tar -C "$top" --exclude=./build --exclude=./.git -cf - . |
	    tar -C "$src" -xf -
fi
# The build says the tree's version, not the copy's (which is no checkout).
printf '%s\n' "$version" >"$src/VERSION"
[ ! -e "$src/.git" ] || fail "the copy holds .git"

(cd "$src" && dpkg-checkbuilddeps) >"$work/deps.log" 2>&1 ||
    { cat "$work/deps.log"; fail "build dependencies missing"; }
(cd "$src" && dpkg-buildpackage -us -uc -b -Jauto) >"$work/build.log" 2>&1 ||
    { tail -n 60 "$work/build.log"; fail "dpkg-buildpackage failed"; }
grep -E '^([0-9]+%: Checks|cli: |locale: )' "$work/build.log" |
    sed 's/^/package build: /'
# DEB_BUILD_OPTIONS=nocheck (CI, right after make check on the same
# tree) skips the package's own run of the suites.
case " ${DEB_BUILD_OPTIONS:-} " in
*" nocheck "*)
	echo "package build: its tests skipped (DEB_BUILD_OPTIONS=nocheck)" ;;
*)
	grep -q '^100%: Checks: ' "$work/build.log" ||
	    { tail -n 30 "$work/build.log"
	      fail "the unit suite did not pass"; } ;;
esac

changes=$(ls "$work"/attn_*_*.changes)
debs="$(ls "$work"/attn_*.deb) $(ls "$work"/libattn0_*.deb)
$(ls "$work"/libattn-dev_*.deb) $(ls "$work"/python3-attn_*_all.deb)
$(ls "$work"/attn-mpi_*.deb)"
lintian --fail-on error,warning "$changes" >"$work/lintian.log" 2>&1
status=$?
grep -v '^running with root privileges' "$work/lintian.log"
[ $status -eq 0 ] || fail "lintian: errors or warnings"
echo "lintian: no errors, no warnings"

# libzip is loaded by the first .npz read, not linked (lib/zip_load.c):
# attn and libattn0 depend on it all the same, by its shlibs (debian/rules
# shows dpkg-shlibdeps a program that links it).
for deb in "$work"/attn_*.deb "$work"/libattn0_*.deb; do
	dpkg-deb -f "$deb" Depends | grep -q 'libzip[0-9]* (>= ' ||
	    fail "$(basename "$deb") does not depend on libzip: $(dpkg-deb -f "$deb" Depends)"
done

if [ "${DEB_INSTALL:-}" = dpkg ]; then
	dpkg-query -W -f '${Status}\n' attn libattn0 libattn-dev python3-attn \
	    attn-mpi 2>/dev/null |
	    grep -q ' installed$' &&
	    fail "attn, libattn0, libattn-dev, python3-attn or attn-mpi is" \
	        "installed already: not touching it"
	# shellcheck disable=SC2086
	dpkg -i $debs >"$work/dpkg.log" 2>&1 ||
	    { cat "$work/dpkg.log"; installed=1; fail "dpkg -i failed"; }
	installed=1
	dest=
	pcpath=
	pcdefine=
	libdir=/usr/lib/$(dpkg-architecture -qDEB_HOST_MULTIARCH)
else
	dest=$work/root
	for deb in $debs; do
		dpkg-deb -x "$deb" "$dest" || fail "dpkg-deb -x $deb failed"
	done
	multiarch=$(dpkg-architecture -qDEB_HOST_MULTIARCH)
	pcpath=$dest/usr/lib/$multiarch/pkgconfig
	pcdefine=--define-variable=prefix=$dest/usr
	libdir=$dest/usr/lib/$multiarch
fi
attn=$dest/usr/bin/attn

# The program, as the package installed it.
(cd "$top" && "$attn" --explain data/examples/apple-cheese.json) \
    >"$work/explain" 2>&1 || { cat "$work/explain"; fail "attn --explain"; }
(cd "$top" && "$ref" --explain data/examples/apple-cheese.json) \
    >"$work/explain.ref" 2>&1 || fail "$ref --explain"
cmp -s "$work/explain.ref" "$work/explain" ||
    { diff -u "$work/explain.ref" "$work/explain" | head -20;
      fail "the installed attn --explain differs from $ref's"; }
got=$("$attn" --version)
[ "$got" = "attn $version" ] ||
    fail "attn --version says '$got', not 'attn $version'"
for page in man1/attn.1 man1/attn-gen.1 man1/attn-workbench.1 \
    man7/attn-kernels.7 man7/attn-tutorial.7; do
	[ -f "$dest/usr/share/man/$page.gz" ] || fail "no man page $page"
done
sh "$top/tests/completion.sh" "$attn" \
    "$dest/usr/share/bash-completion/completions/attn" \
    "$dest/usr/share/zsh/vendor-completions/_attn" >"$work/completion.log" ||
    { cat "$work/completion.log"; fail "the installed completions"; }

# libattn-dev: the program of tests/install.sh, with pkg-config alone.
pc() {
	# shellcheck disable=SC2086
	PKG_CONFIG_PATH=$pcpath pkg-config $pcdefine "$@"
}
got=$(pc --modversion attn) || fail "pkg-config does not find attn"
[ "$got" = "$version" ] ||
    fail "the .pc file's version is '$got', not '$version'"
# libattn0: the shared library alone, with the symbols file dpkg-shlibdeps
# reads for a program that links it.
libdeb=$(ls "$work"/libattn0_*.deb)
dpkg-deb -c "$libdeb" >"$work/libattn0.list" ||
    fail "dpkg-deb -c $libdeb failed"
grep -q '/libattn\.so\.0$' "$work/libattn0.list" ||
    fail "libattn0 does not hold libattn.so.0"
grep -q '\.a$\|\.h$\|/libattn\.so\( ->.*\)\?$' "$work/libattn0.list" &&
    fail "libattn0 holds libattn-dev's files"
dpkg-deb -I "$libdeb" symbols | grep -q '^libattn\.so\.0 libattn0 ' ||
    fail "libattn0 has no symbols file for libattn.so.0"
# shellcheck disable=SC2086
PKG_CONFIG_PATH=$pcpath sh "$top/tests/use_libattn.sh" "$libdir" $pcdefine ||
    fail "the program of tests/use_libattn.c against libattn-dev"

# python3-attn: pure Python, for every architecture, on libattn0.
pydeb=$(ls "$work"/python3-attn_*_all.deb)
dpkg-deb -f "$pydeb" Depends | tr ',' '\n' | sed 's/^ *//; s/ .*//' \
    >"$work/python3-attn.depends"
for pkg in libattn0 python3-numpy; do
	grep -qxF "$pkg" "$work/python3-attn.depends" ||
	    fail "python3-attn does not depend on $pkg"
done
pydir=$dest/usr/lib/python3/dist-packages
[ -f "$pydir/attn/__init__.py" ] && [ -f "$pydir/attn/flash.py" ] &&
    [ -f "$pydir/attn/torch.py" ] ||
    fail "python3-attn does not hold the module attn in $pydir"
# The module as installed: the library by its soname (no ATTN_LIBRARY),
# found where libattn0 put it, and attn's bytes.
(cd "$work" && "$attn" gen 5x4 --seed 3 -f npy -o x.npy &&
    "$attn" -f npz -s output,lse -o out.npz x.npy x.npy x.npy) \
    >"$work/python3-attn.log" 2>&1 ||
    { cat "$work/python3-attn.log"; fail "attn -f npz for python3-attn"; }
(cd "$work" && env -u ATTN_LIBRARY PYTHONPATH="$pydir" \
    LD_LIBRARY_PATH="$libdir" /usr/bin/python3 -c '
import sys
import numpy
import attn
pydir, libdir = sys.argv[1:]
assert attn.__file__.startswith(pydir + "/"), attn.__file__
x = numpy.load("x.npy")
got = attn.attention(x, x, x, stages="output,lse")
ref = numpy.load("out.npz")
for s in ("output", "lse"):
    assert got[s].tobytes() == ref[s].tobytes(), s
import os
maps = [line.split()[-1] for line in open("/proc/self/maps")
        if line.rstrip().endswith("/libattn.so.0")]
want = os.path.realpath(libdir + "/libattn.so.0")
assert maps and all(os.path.realpath(m) == want for m in maps), maps
' "$pydir" "$libdir") >>"$work/python3-attn.log" 2>&1 ||
    { cat "$work/python3-attn.log"; fail "the module of python3-attn"; }
# attn-mpi: on Open MPI's launcher and libraries (by its shlibs), its
# page, and, as installed, the bytes of attn on two processes.
mpideb=$(ls "$work"/attn-mpi_*.deb)
deps=$(dpkg-deb -f "$mpideb" Depends)
case ", $deps" in *", openmpi-bin"*) ;; *)
	fail "attn-mpi does not depend on openmpi-bin: $deps" ;; esac
case "$deps" in *libopenmpi*) ;; *)
	fail "attn-mpi does not depend on Open MPI's library: $deps" ;; esac
[ -f "$dest/usr/share/man/man1/attn-mpi.1.gz" ] ||
    fail "attn-mpi has no page attn-mpi(1)"
if [ "$(id -u)" -eq 0 ]; then
	export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
fi
(cd "$top" && env LD_LIBRARY_PATH="$libdir" mpirun -q --oversubscribe \
    -n 2 "$dest/usr/bin/attn-mpi" --explain data/examples/apple-cheese.json) \
    >"$work/explain.mpi" 2>&1 ||
    { cat "$work/explain.mpi"; fail "attn-mpi --explain on two processes"; }
cmp -s "$work/explain.ref" "$work/explain.mpi" ||
    { diff -u "$work/explain.ref" "$work/explain.mpi" | head -20;
      fail "the installed attn-mpi --explain differs from $ref's"; }

how=${DEB_INSTALL:+installed with dpkg -i}
echo "deb: $(cd "$work" && echo attn_*.deb libattn0_*.deb libattn-dev_*.deb python3-attn_*.deb attn-mpi_*.deb) built," \
    "lintian clean, ${how:-unpacked with dpkg-deb -x} and used:" \
    "1 passed, 0 failed"
