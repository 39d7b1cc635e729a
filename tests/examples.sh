#!/bin/sh
# examples.sh ATTN FILE... - run the examples written in the man page and
# the README, so that the docs cannot drift from what attn does.
#
# An example is a line "$ attn ..." followed by the output it prints
# (standard output and standard error together), up to the end of the
# block: ".Ed" in mdoc (where \e is a backslash and \& is nothing), a
# line of ``` in Markdown, or the next "$ " line.  Commands run from the
# top of the repository under LC_ALL=C.  A roff escape \[uXXXX] is the
# character it names.
#
# A comment line ".\" book: AUTHOR, TITLE, section S, FIGURE; prints N..."
# before an example says that the book prints the numbers N for it: each
# must be in the example's output to the digits the book gives (a number
# within half a unit of its last digit), so that the page cannot drift
# from the book either.
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

# figures BOOK OUTPUT: the numbers after "; prints " in BOOK that OUTPUT
# does not hold to the book's digits, printed; fails when there is one.
figures() {
	awk -v want="$(sed 's/.*; prints //' "$1")" '
	{ for (i = 1; i <= NF; i++) if ($i ~ /^-?[0-9.]+$/) got[++n] = $i + 0 }
	END {
		k = split(want, w, " ")
		for (i = 1; i <= k; i++) {
			d = index(w[i], ".") ? length(w[i]) - index(w[i], ".") : 0
			tol = 0.5 * 10 ^ -d + 1e-12
			for (j = 1; j <= n; j++) {
				e = got[j] - w[i]
				if (e <= tol && -e <= tol)
					break
			}
			if (j > n) {
				printf "%s%s", miss ? ", " : "", w[i]
				miss = 1
			}
		}
		exit miss
	}' "$2"
}

pass=0
fail=0
for doc in "$@"; do
	# Split the document into work/N.cmd and work/N.out files.
	rm -f "$work"/*.cmd "$work"/*.out "$work"/*.book
	perl -CSD -pe 's/\\\[u([0-9A-F]{4,5})\]/chr(hex($1))/ge' "$doc" |
	awk -v dir="$work" '
	function flush() { if (n > 0) close(dir "/" n ".out") }
	/^\.\\" book: / { book = substr($0, 11); next }
	/^\.Ed/ || /^```/ { flush(); inex = 0; next }
	/^\$ attn / || /^\$ echo / {
		flush(); n++; inex = 1
		cmd = substr($0, 3)
		gsub(/\\e/, "\\", cmd); gsub(/\\&/, "", cmd)
		print cmd > (dir "/" n ".cmd"); close(dir "/" n ".cmd")
		printf "" > (dir "/" n ".out")
		if (book != "") {
			print book > (dir "/" n ".book"); close(dir "/" n ".book")
			book = ""
		}
		next
	}
	inex {
		line = $0
		gsub(/\\e/, "\\", line); gsub(/\\&/, "", line)
		print line > (dir "/" n ".out")
	}
	'
	for cmd in "$work"/*.cmd; do
		[ -f "$cmd" ] || continue
		exp=${cmd%.cmd}.out
		(cd "$top" && sh "$cmd" >"$work/got" 2>&1)
		book=${cmd%.cmd}.book
		if [ -f "$book" ] && ! missing=$(figures "$book" "$work/got"); then
			fail=$((fail + 1))
			echo "FAIL $(basename "$doc"): $(cat "$cmd")"
			echo "    does not print $missing as $(sed 's/; prints .*//' "$book") prints it"
		elif cmp -s "$exp" "$work/got"; then
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
