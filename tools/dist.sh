#!/bin/sh
# dist.sh [DIR] - make dist: DIR/attn-VERSION.tar.gz (DIR defaults to .)
# of the last commit, the same bytes whoever makes it from that commit,
# wherever, whenever: git archive's files (the tracked ones, as
# committed), VERSION holding what tools/version.sh says of the commit
# (so that a build of the tarball, outside git, says it too), names
# sorted, every mtime the commit's date (or SOURCE_DATE_EPOCH, when set),
# owner and group 0, modes 644 or 755, and gzip without a name or a time.
# Prints the tarball's path.
set -eu

top=$(cd "$(dirname "$0")/.." && pwd -P)
out=${1:-.}
root=$(git -C "$top" rev-parse --show-toplevel 2>/dev/null) &&
    [ "$(cd "$root" && pwd -P)" = "$top" ] || {
	echo "dist: $top is not a git checkout of attn: the tarball is" \
	    "made from one" >&2
	exit 1
}
version=$(sh "$top/tools/version.sh" --committed)
name=attn-$version
epoch=${SOURCE_DATE_EPOCH:-$(git -C "$top" log -1 --format=%ct HEAD)}
if [ -n "$(GIT_OPTIONAL_LOCKS=0 git -C "$top" status --porcelain \
    --untracked-files=no)" ]; then
	echo "dist: changes not committed are not in $name.tar.gz" >&2
fi

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
trap 'exit 130' INT TERM
git -C "$top" archive --format=tar --prefix="$name/" HEAD | tar -x -C "$tmp"
printf '%s\n' "$version" >"$tmp/$name/VERSION"
mkdir -p "$out"
(cd "$tmp" && LC_ALL=C tar --sort=name --format=gnu --mtime="@$epoch" \
    --owner=0 --group=0 --numeric-owner --mode=u+rw,go-w,a+rX \
    -cf - "$name") | gzip -n -9 >"$tmp/tar.gz"
mv "$tmp/tar.gz" "$out/$name.tar.gz"
echo "$out/$name.tar.gz"
