#!/bin/sh
# run.sh ATTN - the CLI tests.  Each directory tests/cli/NAME/ is a case:
#
#   cmd      a shell script; `attn` in it runs the binary under test
#   stdin    optional: standard input of cmd (else /dev/null)
#   stdout   expected standard output (absent: empty)
#   stderr   expected standard error (absent: empty)
#   status   expected exit status of cmd (absent: 0)
#   nowrapper optional: skipped under $ATTN_TEST_WRAPPER (see below)
#   statuses optional: the exit status of each run of attn in cmd, one
#            a line, in the order they ran (absent: every run exits with
#            the case's status)
#
# `attn` in cmd is a script that runs the binary and writes down its exit
# status, so that a case cannot lose it: not in a pipe (attn ... | sed,
# where the shell sees only sed's), a list (attn ...; attn ...), a
# function or a command substitution.
#
# plus any input files.  A case runs in a fresh copy of its directory, with
# ../data pointing at the repository's data/, so `-o` cannot touch the
# tree.  Output is compared byte for byte under LC_ALL=C, or under
# $ATTN_TEST_LOCALE when tests/locale.sh set it: the expected text is the
# same, since attn's output must not depend on the locale.
# $ATTN_TEST_WRAPPER, when set, is a command put before the binary in
# each case's first run (not counting attn gen): make check-valgrind
# sets it to valgrind, whose errors change the status.
# $ATTN_TEST_SHARD=K/N runs every Nth case from the Kth (1 <= K <= N), so
# that N runs side by side make the whole suite (make check-valgrind).
set -u

bin=$1
case $bin in /*) ;; *) bin=$(pwd)/$bin ;; esac
top=$(cd "$(dirname "$0")/../.." && pwd)
work=$(mktemp -d) || exit 1
trap 'rm -rf "$work"' EXIT
trap 'exit 130' INT TERM
mkdir "$work/bin"
# The binary; each run appends its status to $work/statuses.  Under
# $ATTN_TEST_WRAPPER (e.g. valgrind), when set, goes a case's first run
# that is not `attn gen` (which makes a case's inputs), and only that
# one: valgrind costs much CPU a process before attn starts, and
# the suite runs attn some 1200 times, many of them the same paths with
# one option changed; so every case is seen by valgrind once, in CI's
# time, and all of each case's runs by ASan and UBSan in make check.
# mkdir is the test-and-set, for cases that run attn in the background.
cat >"$work/bin/attn" <<EOF
#!/bin/sh
wrapper=
if [ "\${1:-}" != gen ] && mkdir "$work/wrapped" 2>/dev/null; then
	wrapper='${ATTN_TEST_WRAPPER:-}'
fi
\$wrapper "$bin" "\$@"
s=\$?
echo \$s >>"$work/statuses"
exit \$s
EOF
chmod +x "$work/bin/attn"
ln -s "$top/data" "$work/data"
LC_ALL=${ATTN_TEST_LOCALE:-C}
export LC_ALL
PATH=$work/bin:$PATH
export PATH

shard=${ATTN_TEST_SHARD:-1/1}
part=${shard%/*}
parts=${shard#*/}
case $part/$parts in
*[!0-9/]* | /* | */ | */*/*) echo "cli: ATTN_TEST_SHARD=$shard is not K/N"; exit 1 ;;
esac
[ "$part" -ge 1 ] && [ "$part" -le "$parts" ] ||
    { echo "cli: ATTN_TEST_SHARD=$shard: K must be 1 to N"; exit 1; }

pass=0
fail=0
n=0
for dir in "$top"/tests/cli/*/; do
	name=$(basename "$dir")
	[ -f "$dir/cmd" ] || continue
	n=$((n + 1))
	[ $(((n - 1) % parts + 1)) -eq "$part" ] || continue
	# A case with a file nowrapper (which says why) tests what a wrapper
	# changes (valgrind opens its log on the descriptor the case leaves
	# closed): it runs on the bare binary alone (and under ASan in make
	# check).
	if [ -n "${ATTN_TEST_WRAPPER:-}" ] && [ -f "$dir/nowrapper" ]; then
		echo "skip $name: not under a wrapper (nowrapper)"
		continue
	fi
	rm -rf "$work/case" "$work/statuses" "$work/wrapped"
	: >"$work/statuses"
	cp -R "$dir" "$work/case"
	in=/dev/null
	[ -f "$dir/stdin" ] && in=$dir/stdin
	(cd "$work/case" && sh ./cmd <"$in" >"$work/out" 2>"$work/err")
	status=$?
	want=0
	[ -f "$dir/status" ] && want=$(cat "$dir/status")
	ok=1
	for stream in out err; do
		exp=/dev/null
		[ "$stream" = out ] && [ -f "$dir/stdout" ] && exp=$dir/stdout
		[ "$stream" = err ] && [ -f "$dir/stderr" ] && exp=$dir/stderr
		if ! cmp -s "$exp" "$work/$stream"; then
			echo "FAIL $name: std$stream differs (LC_ALL=$LC_ALL):"
			diff -u "$exp" "$work/$stream" | sed 's/^/    /' | head -40
			ok=0
		fi
	done
	if [ "$status" != "$want" ]; then
		echo "FAIL $name: exit status $status, expected $want"
		ok=0
	fi
	# Every run of attn: as statuses lists them, else each with the
	# case's status.
	if [ -f "$dir/statuses" ]; then
		runs=$(cat "$dir/statuses")
	else
		runs=$(sed "s/.*/$want/" "$work/statuses")
	fi
	# A reader that stops early (head, sed 3q) closes the pipe while
	# attn may still write: attn then dies of SIGPIPE, or not, as the
	# scheduler pleases.  Cases read all of it (sed -n 1,3p).
	if grep -Eq '\| *(head|sed -n? *[0-9]+q)' "$dir/cmd"; then
		echo "FAIL $name: cmd pipes into a reader that stops early" \
		    "(SIGPIPE races); use sed -n 1,Np"
		ok=0
	fi
	if [ ! -s "$work/statuses" ]; then
		echo "FAIL $name: cmd never ran attn"
		ok=0
	elif [ "$(cat "$work/statuses")" != "$runs" ]; then
		echo "FAIL $name: the runs of attn exited" \
		    $(cat "$work/statuses") "where" $runs "were expected"
		ok=0
	fi
	if [ $ok -eq 1 ]; then
		pass=$((pass + 1))
	else
		fail=$((fail + 1))
	fi
done
echo "locale: $LC_ALL"
[ "$parts" -eq 1 ] || echo "cli: part $part of $parts"
echo "cli: $pass passed, $fail failed"
[ $fail -eq 0 ] && [ $pass -gt 0 ]
