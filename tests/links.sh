#!/bin/sh
# links.sh FILE... - every file a document names must be in the repository,
# so that a clone is complete: paths under the repository's own folders
# (data/examples/t3s4.json, man/attn.1) and Markdown files (HACKING.md).
# Placeholders (tests/cli/NAME), built files (build/) and installed ones
# (/usr/local, share/...) are not files of the repository and are skipped.
set -u
cd "$(dirname "$0")/.." || exit 1
fail=0 seen=0
for doc in "$@"; do
	# roff's quotes \(oq and \(cq around a path are not part of it
	for ref in $(sed 's/\\(oq/ /g; s/\\(cq/ /g' "$doc" |
	    grep -o '[A-Za-z0-9_.-]*\(/[A-Za-z0-9_.-]\+\)\+\|[A-Za-z0-9_-]\+\.md' |
	    sort -u); do
		ref=${ref#./}
		case $ref in
		*.md) ;;
		lib/* | cli/* | tests/* | data/* | man/* | tools/* | bench/* | .ci/*) ;;
		*) continue ;;
		esac
		case $ref in
		*NAME* | */[A-Z] | *-) continue ;;	# tests/cli/NAME, gallery-...
		esac
		seen=$((seen + 1))
		if [ ! -e "$ref" ] && [ ! -e "$(dirname "$doc")/$ref" ]; then
			echo "links: $doc names $ref, which is not in the repository" >&2
			fail=$((fail + 1))
		fi
	done
done
echo "links: $seen files named, $fail missing"
[ "$fail" -eq 0 ]
