#!/bin/sh
# examples.sh ATTN FILE... - run the examples written in the man page and
# the README, so that the docs cannot drift from what attn does.
#
# An example is a line "$ attn ..." followed by the output it prints
# (standard output and standard error together), up to the end of the
# block: ".Ed" in mdoc (where \e is a backslash and \& is nothing), a
# line of ``` in Markdown, or the next "$ " line.  Commands run from the
# top of the repository under LC_ALL=C.
set -u

bin=$1
shift
case $bin in /*) ;; *) bin=$(pwd)/$bin ;; esac
top=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d) || exit 1
trap 'rm -rf "$work"' EXIT
trap 'exit 130' INT TERM
mkdir "$work/bin"
ln -s "$bin" "$work/bin/attn"
PATH=$work/bin:$PATH
LC_ALL=C
export PATH LC_ALL

pass=0
fail=0
for doc in "$@"; do
	# Split the document into work/N.cmd and work/N.out files.
	rm -f "$work"/*.cmd "$work"/*.out
	awk -v dir="$work" '
	function flush() { if (n > 0) close(dir "/" n ".out") }
	/^\.Ed/ || /^```/ { flush(); inex = 0; next }
	/^\$ attn / || /^\$ echo / {
		flush(); n++; inex = 1
		cmd = substr($0, 3)
		gsub(/\\e/, "\\", cmd); gsub(/\\&/, "", cmd)
		print cmd > (dir "/" n ".cmd"); close(dir "/" n ".cmd")
		printf "" > (dir "/" n ".out")
		next
	}
	inex {
		line = $0
		gsub(/\\e/, "\\", line); gsub(/\\&/, "", line)
		print line > (dir "/" n ".out")
	}
	' "$doc"
	for cmd in "$work"/*.cmd; do
		[ -f "$cmd" ] || continue
		exp=${cmd%.cmd}.out
		(cd "$top" && sh "$cmd" >"$work/got" 2>&1)
		if cmp -s "$exp" "$work/got"; then
			pass=$((pass + 1))
		else
			fail=$((fail + 1))
			echo "FAIL $(basename "$doc"): $(cat "$cmd")"
			diff -u "$exp" "$work/got" | sed 's/^/    /' | head -40
		fi
	done
done
echo "examples: $pass passed, $fail failed"
[ $fail -eq 0 ] && [ $pass -gt 0 ]
