#!/bin/sh
# timed.sh NAME CMD... - run CMD, then print "time NAME: S.S s (CPU C.C s)"
# (also when it fails) and exit with CMD's status: make check's time per
# suite.  The wall-clock time is what a run waits; the CPU time (user and
# system, of every process CMD waited for) is the suite's own cost,
# which other jobs on the machine do not change.
name=$1
shift
start=$(date +%s%N)
"$@"
status=$?
end=$(date +%s%N)
# `times` prints the shell's times, then its children's ("0m1.50s
# 0m0.20s"), in this shell only: not in a pipe or $(...), hence the file.
cpu=?
times_file=$(mktemp) && times >"$times_file" &&
    cpu=$(awk 'NR == 2 { t = 0
	for (i = 1; i <= 2; i++) { split($i, a, "m"); t += a[1] * 60 + a[2] }
	printf "%.1f", t }' "$times_file")
rm -f "$times_file"
awk -v n="$name" -v a="$start" -v b="$end" -v c="$cpu" \
    'BEGIN { printf "time %s: %.1f s (CPU %s s)\n", n, (b - a) / 1e9, c }'
exit $status
