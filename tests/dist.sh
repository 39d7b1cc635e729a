#!/bin/sh
# dist.sh - make dist's tarball (tools/dist.sh), made twice, the second
# time with another umask, time zone and directory: the same bytes.  It
# holds the files of the last commit under attn-VERSION/, sorted, owned
# by 0:0, every mtime the commit's date, VERSION saying what
# tools/version.sh says of the commit.  Unpacked where no checkout of
# attn is (inside an unrelated git repository, so that its git describe
# cannot leak in), it holds no file that its .gitignore calls generated,
# it builds with -Werror and passes the quick suites
# (DIST_SUITES: the documents' examples, which run the binary it built,
# and make install, which show that the tree works away from git; make
# check has run the others on the same files, which the list of names
# above proves), and attn --version says the tarball's version.
set -u

top=$(cd "$(dirname "$0")/.." && pwd -P)
suites=${DIST_SUITES:-doc-test install-test}
work=$(mktemp -d) || exit 1
chmod 755 "$work"	# bad-test runs attn as nobody too
trap 'rm -rf "$work"' EXIT
trap 'exit 130' INT TERM
fail() {
	echo "FAIL dist: $*"
	exit 1
}
# This make's jobs and variables (WERROR, BUILD, SAN) are not the
# tarball's build's.
unset MAKEFLAGS MFLAGS MAKELEVEL

one=$(sh "$top/tools/dist.sh" "$work/one" 2>/dev/null) ||
    fail "make dist failed"
two=$(umask 077 && TZ=Pacific/Kiritimati sh "$top/tools/dist.sh" \
    "$work/two" 2>/dev/null) || fail "make dist failed the second time"
sum1=$(sha256sum <"$one" | cut -d' ' -f1)
sum2=$(sha256sum <"$two" | cut -d' ' -f1)
[ "$sum1" = "$sum2" ] ||
    fail "two tarballs of one commit differ: $sum1, $sum2"
echo "dist: ${one##*/}, twice: sha256 $sum1"

version=$(sh "$top/tools/version.sh" --committed)
name=attn-$version
[ "${one##*/}" = "$name.tar.gz" ] || fail "named ${one##*/}, not $name.tar.gz"
epoch=${SOURCE_DATE_EPOCH:-$(git -C "$top" log -1 --format=%ct HEAD)}
when=$(TZ=UTC0 date -d "@$epoch" '+%Y-%m-%d %H:%M:%S')

# Names: the commit's files (and VERSION), in the order --sort=name
# gives, which is sorted within each directory.
LC_ALL=C tar -tzf "$one" >"$work/names" || fail "tar -t failed"
{ git -C "$top" ls-tree -r --name-only HEAD; echo VERSION; } |
    sed "s|^|$name/|" | LC_ALL=C sort -u >"$work/want"
grep -v '/$' "$work/names" | LC_ALL=C sort >"$work/got"
cmp -s "$work/want" "$work/got" ||
    { diff "$work/want" "$work/got" | head; fail "not the commit's files"; }
# Each directory comes before what it holds, and each directory's
# entries are sorted.
LC_ALL=C awk -v dir="$name/" '
    NR == 1 && $0 != dir { print "first " $0; exit 1 }
    { k = $0; sub(/\/$/, "", k); d = k; sub(/[^\/]+$/, "", d)
      if (d in last && last[d] >= k) { print "order " $0; exit 1 }
      last[d] = k }' "$work/names" >"$work/order" ||
    fail "entries out of order: $(cat "$work/order")"
TZ=UTC0 LC_ALL=C tar --numeric-owner --full-time -tvzf "$one" |
    awk -v when="$when" '$2 != "0/0" || $4 " " $5 != when' >"$work/odd"
[ ! -s "$work/odd" ] ||
    { head -3 "$work/odd"; fail "owner not 0/0 or mtime not $when"; }

mkdir "$work/other"
git init -q "$work/other" || fail "git init failed"
tar -xzf "$one" -C "$work/other" || fail "tar -x failed"
src=$work/other/$name
[ "$(cat "$src/VERSION")" = "$version" ] ||
    fail "VERSION in the tarball is '$(cat "$src/VERSION")', not $version"
[ ! -e "$src/.git" ] || fail "the tarball holds .git"
# No generated file: none of its names is one that the tarball's own
# .gitignore, the one list of what building, testing, packaging and
# Python leave in the tree, ignores (as bytecode tracked by mistake
# would be).  The user's own git excludes are not asked.
sed "s|^$name/||" "$work/got" | grep -vx VERSION >"$work/files"
(cd "$src" && git -c core.excludesFile=/dev/null check-ignore --no-index \
    --stdin) <"$work/files" >"$work/generated"
case $? in
0) fail "generated files in the tarball: $(tr '\n' ' ' <"$work/generated")" ;;
1) ;;
*) fail "git check-ignore failed" ;;
esac
# shellcheck disable=SC2086
make -C "$src" --no-print-directory -j"$(nproc)" WERROR=-Werror $suites \
    >"$work/make.log" 2>&1 ||
    { tail -n 40 "$work/make.log"; fail "make $suites failed outside git"; }
grep -E '^(time |skip |[a-z]+: [0-9]+ (passed|skipped)|[0-9]+%: Checks)' "$work/make.log" |
    sed 's/^/dist: /'
got=$("$src/build/attn" --version)
[ "$got" = "attn $version" ] ||
    fail "built outside git, attn --version says '$got', not 'attn $version'"
echo "dist: 1 passed, 0 failed"
