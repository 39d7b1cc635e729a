#!/bin/sh
# run.sh ATTN [PART...] - the tests of what a person sees, each a script
# here taking the binary: the heatmap in a real terminal (tmux), and
# those added beside it; the PARTs named (html, svg, heatmap-tmux, ...),
# or all of them.  Each prints "NAME: N passed, N failed"; this fails
# when any of them does, or names no part that exists.
set -u

here=$(dirname "$0")
bin=$1
shift
if [ $# -eq 0 ]; then
	for t in "$here"/*.sh; do
		case $(basename "$t" .sh) in run | lib) continue ;; esac
		set -- "$@" "$(basename "$t" .sh)"
	done
fi
status=0
for part in "$@"; do
	case $part in run | lib) part=none ;; esac
	if [ ! -f "$here/$part.sh" ]; then
		echo "visual: no part $part"
		status=1
		continue
	fi
	sh "$here/$part.sh" "$bin" || status=1
done
exit $status
