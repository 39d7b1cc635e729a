# lib.sh - what the scripts in tests/visual/ share; each sets name (its
# name in messages) and sources this with the binary as $1.
#
#   visual_start TOOL...  $bin (absolute), $here (this directory), $top
#                         (the repository, made the working directory),
#                         $work (a temporary directory removed at exit,
#                         after $cleanup runs, if set); fails when a TOOL
#                         is missing, naming it
#   ok; bad MESSAGE       count a check that passed or failed
#   visual_end            "NAME: N passed, N failed"; the exit status

bin=$1
case $bin in /*) ;; *) bin=$(pwd)/$bin ;; esac
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
pass=0
fail=0
cleanup=:

visual_start() {
	for tool in "$@"; do
		if ! command -v "$tool" >/dev/null 2>&1; then
			echo "$name: $tool is missing (make test-deps installs it)"
			exit 1
		fi
	done
	work=$(mktemp -d) || exit 1
	trap 'eval "$cleanup"; rm -rf "$work"' EXIT
	trap 'exit 130' INT TERM
	cd "$top" || exit 1
}

ok() {
	pass=$((pass + 1))
}

bad() {
	fail=$((fail + 1))
	echo "FAIL $name: $1"
}

visual_end() {
	echo "$name: $pass passed, $fail failed"
	[ $fail -eq 0 ] && [ $pass -gt 0 ]
}
