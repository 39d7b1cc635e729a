#!/bin/sh
# version.sh [--committed] - the version attn says: attn --version, the
# pkg-config file, the name of make dist's tarball.  VERSION names the
# release; it is the one place the number is written.  In a git checkout
# of attn itself a build also says which commit it is, as git describe
# says it:
#
#   0.1.0              the commit tagged v0.1.0
#   0.1.0-5-g0a76977   five commits after that tag
#   0.1.0-g0a76977     no tag v0.1.0 yet: a commit on the way to 0.1.0
#   ...-dirty          with changes not committed (not with --committed,
#                      which describes the last commit: what make dist packs)
#
# make dist writes this text into the tarball's VERSION, so that a build
# of the tarball, outside git, says what the checkout said.  A tarball
# unpacked inside some other repository (a distribution's packaging, say)
# is no checkout of attn: git is asked only when the top of its work tree
# is this directory.
set -eu

dirty=--dirty
[ "${1:-}" = --committed ] && dirty=
top=$(cd "$(dirname "$0")/.." && pwd -P)
version=$(cat "$top/VERSION")
case $version in
"" | *[!0-9A-Za-z.+~-]*)
	echo "version.sh: $top/VERSION is not one line of a version" >&2
	exit 1 ;;
esac
# Asking git must not take its index lock: make -j runs this many times.
GIT_OPTIONAL_LOCKS=0
export GIT_OPTIONAL_LOCKS
if command -v git >/dev/null 2>&1 &&
    root=$(git -C "$top" rev-parse --show-toplevel 2>/dev/null) &&
    [ "$(cd "$root" && pwd -P)" = "$top" ]; then
	# shellcheck disable=SC2086
	if d=$(git -C "$top" describe --tags --match "v$version" $dirty \
	    2>/dev/null); then
		version=${d#v}
	elif h=$(git -C "$top" describe --always $dirty 2>/dev/null); then
		version=$version-g$h
	fi
fi
printf '%s\n' "$version"
