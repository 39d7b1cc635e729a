# harness.sh - what the test scripts that source it share
# (tests/bad/run.sh, tests/matrix/run.sh, tests/memory/run.sh,
# tests/progress.sh, tests/kernel/run.sh): ATTN as an absolute path in
# $bin, the script's directory in $here, a temporary directory $work
# removed at exit, LC_ALL=C, and the counting of verdicts.

bin=$1
case $bin in /*) ;; *) bin=$(pwd)/$bin ;; esac
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d) || exit 1
trap 'rm -rf "$work"' EXIT
trap 'exit 130' INT TERM
LC_ALL=C
export LC_ALL

pass=0
fail=0
skip=0

# Count a verdict: $1 is the case's name, $2 why it failed (or nothing).
verdict() {
	if [ -z "$2" ]; then
		pass=$((pass + 1))
	else
		fail=$((fail + 1))
		echo "FAIL $1: $2"
	fi
}

# Count a case that cannot run here: $1 its name, $2 why.
skip_case() {
	skip=$((skip + 1))
	echo "skip $1: $2"
}

# The summary line(s) for suite $1; fails when a case failed.
tally() {
	[ $skip -gt 0 ] && echo "$1: $skip skipped"
	echo "$1: $pass passed, $fail failed"
	[ $fail -eq 0 ]
}
