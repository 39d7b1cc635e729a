#!/bin/sh
# install-deps.sh PKG... - install the Debian packages among PKG that this
# machine lacks, with one `apt-get update` first.  A package counts as
# present when what attn uses from it is found: pkg-config modules for the
# -dev packages, the command for tools, the locale sources for locales,
# an import by Debian's own interpreter for Python modules, the shared
# library for a library package.
# As root it installs them with apt-get; as anyone else it prints the
# apt-get command to run and fails.
set -eu

missing=
for pkg in "$@"; do
	case $pkg in
	pkg-config) command -v pkg-config >/dev/null 2>&1 ;;
	g++) command -v g++ >/dev/null 2>&1 ;;
	libcjson-dev) pkg-config --exists libcjson 2>/dev/null ;;
	check) pkg-config --exists check 2>/dev/null ;;
	libzip-dev) pkg-config --exists libzip 2>/dev/null ;;
	zlib1g-dev) pkg-config --exists zlib 2>/dev/null ;;
	# no .pc file: the header and the library, as the build uses them
	libunistring-dev) printf '#include <uniwidth.h>\nint main(void) '\
'{ return u8_width((const unsigned char *)"", 0, "UTF-8"); }\n' |
	    ${CC:-cc} -x c -o /dev/null - -lunistring >/dev/null 2>&1 ;;
	# ncursesw (the wide-character build) where pkg-config knows it
	libncurses-dev) pkg-config --exists ncursesw 2>/dev/null ||
	    pkg-config --exists ncurses 2>/dev/null ;;
	groff-base) command -v groff >/dev/null 2>&1 ;;
	man-db) command -v man >/dev/null 2>&1 ;;
	jq) command -v jq >/dev/null 2>&1 ;;
	tmux) command -v tmux >/dev/null 2>&1 ;;
	python3) command -v python3 >/dev/null 2>&1 ;;
	libxml2-utils) command -v xmllint >/dev/null 2>&1 ;;
	librsvg2-bin) command -v rsvg-convert >/dev/null 2>&1 ;;
	chromium) command -v chromium >/dev/null 2>&1 ;;
	zsh) command -v zsh >/dev/null 2>&1 ;;
	valgrind) command -v valgrind >/dev/null 2>&1 ;;
	openmpi-bin) command -v mpirun >/dev/null 2>&1 ;;
	libopenmpi-dev) command -v mpicc >/dev/null 2>&1 ;;
	clang) command -v clang >/dev/null 2>&1 ;;
	libclang-rt-dev) ls /usr/lib/llvm-*/lib/clang/*/lib/linux/libclang_rt.fuzzer-*.a \
	    >/dev/null 2>&1 ;;
	locales) command -v localedef >/dev/null 2>&1 &&
	    [ -e /usr/share/i18n/locales/de_DE ] ;;
	python3-numpy) /usr/bin/python3 -c 'import numpy' >/dev/null 2>&1 ;;
	python3-torch) /usr/bin/python3 -c 'import torch' >/dev/null 2>&1 ;;
	python3-pytest) /usr/bin/python3 -c 'import pytest' >/dev/null 2>&1 ;;
	# what dpkg-checkbuilddeps asks of a package build besides debian/control's
	build-essential) dpkg-query -W -f '${Status}' build-essential 2>/dev/null |
	    grep -q ' installed$' ;;
	debhelper) command -v dh >/dev/null 2>&1 ;;
	dpkg-dev) command -v dpkg-buildpackage >/dev/null 2>&1 ;;
	lintian) command -v lintian >/dev/null 2>&1 ;;
	libopenblas0-pthread) ls /usr/lib/*/openblas-pthread/libblas.so.3 \
	    >/dev/null 2>&1 ;;
	*) false ;;
	esac || missing="$missing $pkg"
done
[ -z "$missing" ] && exit 0

if ! command -v apt-get >/dev/null 2>&1; then
	echo "attn: missing packages:$missing (no apt-get here; install" \
	    "the equivalents with your package manager)" >&2
	exit 1
fi
# Never sudo: a build that asks for a password, or gains root behind the
# user's back, is worse than one that says what to run.
if [ "$(id -u)" -ne 0 ]; then
	echo "attn: missing packages:$missing; install them as root, then" \
	    "run make again:" >&2
	echo "  apt-get update &&" \
	    "apt-get install -y --no-install-recommends$missing" >&2
	exit 1
fi
echo "installing:$missing"
export DEBIAN_FRONTEND=noninteractive
apt-get update -q
# shellcheck disable=SC2086
apt-get install -y -q --no-install-recommends $missing
