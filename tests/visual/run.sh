#!/bin/sh
# run.sh ATTN - the tests of what a person sees, each a script here
# taking the binary: the heatmap in a real terminal (tmux), and those
# added beside it.  Each prints "NAME: N passed, N failed"; this fails
# when any of them does.
set -u

status=0
for t in "$(dirname "$0")"/*.sh; do
	case $(basename "$t") in run.sh | lib.sh) continue ;; esac
	sh "$t" "$1" || status=1
done
exit $status
