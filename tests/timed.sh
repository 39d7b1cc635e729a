#!/bin/sh
# timed.sh NAME CMD... - run CMD, then print "time NAME: S.S s" (also when
# it fails) and exit with CMD's status: make check's time per suite.
name=$1
shift
start=$(date +%s%N)
"$@"
status=$?
end=$(date +%s%N)
awk -v n="$name" -v a="$start" -v b="$end" \
    'BEGIN { printf "time %s: %.1f s\n", n, (b - a) / 1e9 }'
exit $status
