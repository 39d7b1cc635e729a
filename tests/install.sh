#!/bin/sh
# install.sh [BUILD] - `make install` into a scratch DESTDIR puts the
# binary, the man pages, libattn.a, libattn.so.0 (and its libattn.so
# link), attn.h, attn_io.h and the pkg-config file where PREFIX says, and
# not attn_private.h, copying the objects already built in BUILD
# (default build/) and tested, without compiling anything, even when the
# build asked for -Werror and the install does not; a C program builds
# with `pkg-config --cflags --libs attn` alone, against the shared
# library and against the static one, and computes the worked example
# (tests/use_libattn.sh); attn --version and the .pc file say
# tools/version.sh's version; attn help opens the installed pages; `make
# uninstall` removes all of it.  The Python module goes where Debian's
# python3 finds it under PREFIX (lib/python3.X/dist-packages; under /usr,
# lib/python3/dist-packages) and, imported from there, finds the
# installed library by its soname.
set -eu

top=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-build}
dest=$(mktemp -d)
trap 'rm -rf "$dest"' EXIT
trap 'exit 130' INT TERM
prefix=/opt/attn-test
files="bin/attn share/man/man1/attn.1 share/man/man1/attn-gen.1
share/man/man1/attn-workbench.1 share/man/man7/attn-kernels.7
share/man/man7/attn-tutorial.7 lib/libattn.a lib/libattn.so.0
lib/libattn.so include/attn.h
include/attn_io.h include/attn_session.h
lib/pkgconfig/libattn.pc lib/pkgconfig/attn.pc
share/bash-completion/completions/attn share/zsh/site-functions/_attn"

# What make check built and tested, before the install.
for f in attn libattn.a libattn.so.0 flags; do
	[ -f "$top/$build/$f" ] ||
	    { echo "install: no $build/$f: build first"; exit 1; }
	cp -p "$top/$build/$f" "$dest/before-$f"
done

# As a user would after make check: no WERROR (the command line's empty
# one wins over what MAKEFLAGS passes down from make check).
make -C "$top" --no-print-directory install WERROR= BUILD="$build" \
    DESTDIR="$dest" PREFIX=$prefix >"$dest/install.log" 2>&1 ||
    { cat "$dest/install.log"; echo "install: make install failed"; exit 1; }
pyver=$(/usr/bin/python3 -c 'import sys; print("%d.%d" % sys.version_info[:2])')
pydir=lib/python$pyver/dist-packages
files="$files $pydir/attn/__init__.py $pydir/attn/_native.py
$pydir/attn/_soname.py"
# attn-mpi and its page, where this build made it (Open MPI found).
if [ -x "$top/$build/attn-mpi" ]; then
	files="$files bin/attn-mpi share/man/man1/attn-mpi.1"
fi
for f in $files; do
	[ -f "$dest$prefix/$f" ] ||
	    { echo "install: missing $prefix/$f"; exit 1; }
done
# Imported from where make install put it, away from the source tree,
# the module computes through the library it finds by its soname.
if /usr/bin/python3 -c 'import numpy' 2>/dev/null; then
	got=$(cd "$dest" && env -u ATTN_LIBRARY \
	    LD_LIBRARY_PATH="$dest$prefix/lib" \
	    PYTHONPATH="$dest$prefix/$pydir" /usr/bin/python3 -c '
import attn, numpy
print(attn.__file__.startswith("'"$dest"'"),
      attn.attention([[1.0, 0]], [[1.0, 0]], [[2.0, 3]])["output"].tolist())
') || { echo "install: the installed module failed"; exit 1; }
	[ "$got" = "True [[2.0, 3.0]]" ] ||
	    { echo "install: the installed module gave '$got'"; exit 1; }
fi
# The header attn's program shares with the library is not the API.
[ ! -e "$dest$prefix/include/attn_private.h" ] ||
    { echo "install: make install shipped attn_private.h"; exit 1; }
for f in attn libattn.a libattn.so.0 flags; do
	if ! cmp -s "$dest/before-$f" "$top/$build/$f" ||
	    [ "$top/$build/$f" -nt "$dest/before-$f" ]; then
		echo "install: make install rebuilt $build/$f:"
		head -n 5 "$dest/install.log"
		exit 1
	fi
done
if grep -q -- ' -c -o ' "$dest/install.log"; then
	echo "install: make install compiled:"
	grep -- ' -c -o ' "$dest/install.log" | head -3
	exit 1
fi
cmp -s "$top/$build/attn" "$dest$prefix/bin/attn" &&
    cmp -s "$top/$build/libattn.a" "$dest$prefix/lib/libattn.a" &&
    cmp -s "$top/$build/libattn.so.0" "$dest$prefix/lib/libattn.so" ||
    { echo "install: the installed files are not the ones built"; exit 1; }

# What pkg-config says, with the prefix moved to where DESTDIR put it.
pc=$(PKG_CONFIG_PATH="$dest$prefix/lib/pkgconfig" pkg-config \
    --define-variable=prefix="$dest$prefix" --cflags --libs attn) ||
    { echo "install: pkg-config does not find attn"; exit 1; }
[ "$pc" = "$(PKG_CONFIG_PATH="$dest$prefix/lib/pkgconfig" pkg-config \
    --define-variable=prefix="$dest$prefix" --cflags --libs libattn)" ] ||
    { echo "install: pkg-config attn and libattn differ"; exit 1; }
PKG_CONFIG_PATH="$dest$prefix/lib/pkgconfig" sh "$top/tests/use_libattn.sh" \
    "$dest$prefix/lib" --define-variable=prefix="$dest$prefix" || exit 1
# One version: the program's, the .pc file's and tools/version.sh's.
version=$(sh "$top/tools/version.sh")
got=$("$dest$prefix/bin/attn" --version)
[ "$got" = "attn $version" ] ||
    { echo "install: attn --version says '$got', not 'attn $version'"; exit 1; }
got=$(PKG_CONFIG_PATH="$dest$prefix/lib/pkgconfig" pkg-config --modversion attn)
[ "$got" = "$version" ] ||
    { echo "install: the .pc file's version is '$got', not '$version'"; exit 1; }

# attn help TOPIC: man shows the page installed, found where MANPATH says.
for topic in tutorial:ATTN-TUTORIAL kernels:ATTN-KERNELS gen:ATTN-GEN \
    workbench:ATTN-WORKBENCH attn:ATTN; do
	got=$(MANPATH="$dest$prefix/share/man" MANPAGER=cat MANWIDTH=80 \
	    "$dest$prefix/bin/attn" help "${topic%%:*}" 2>&1 | sed -n 1p)
	case $got in
	"${topic#*:}("*) ;;
	*) echo "install: attn help ${topic%%:*} shows '$got'"; exit 1 ;;
	esac
done

make -C "$top" --no-print-directory -s uninstall DESTDIR="$dest" \
    PREFIX=$prefix >/dev/null
for f in $files; do
	[ ! -e "$dest$prefix/$f" ] && [ ! -L "$dest$prefix/$f" ] ||
	    { echo "uninstall: left $prefix/$f"; exit 1; }
done
echo "install: 1 passed, 0 failed"
