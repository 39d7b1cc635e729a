#!/bin/sh
# busiest.sh CMD [ARG...] - run CMD and print on stderr
#
#	wall SECONDS cpu SECONDS busiest SECONDS threads N
#
# its wall time, the CPU time (user and system) of all its threads, and
# that of its busiest thread, each thread's read from
# /proc/PID/task/TID/stat every 50 ms while CMD runs (so a thread's last
# 50 ms may be missed).  Where other sessions share the CPUs, Linux's
# autogroup gives a session its share however many threads it runs, and
# the wall time cannot show what more threads buy; the busiest thread's
# CPU time, which the load does not change, is the least wall time the
# run could take with a CPU a thread (a lower bound: a thread that waits
# for another spends no CPU time).  CMD's exit status is busiest.sh's.
set -u

if [ $# -eq 0 ]; then
	echo "usage: bench/busiest.sh CMD [ARG...]" >&2
	exit 64
fi
hz=$(getconf CLK_TCK)
log=$(mktemp) || exit 1
trap 'rm -f "$log"' EXIT
start=$(date +%s.%N)
"$@" &
pid=$!
while kill -0 "$pid" 2>/dev/null; do
	# utime and stime are fields 14 and 15, the 12th and 13th after
	# the command's name, which may hold spaces and ends at ") "
	awk '{ s = $0; sub(/^.*\) /, "", s); split(s, f, " ");
	    print FILENAME, f[12] + f[13] }' /proc/"$pid"/task/*/stat \
	    >>"$log" 2>/dev/null
	sleep 0.05
done
wait "$pid"
rc=$?
end=$(date +%s.%N)
awk -v s="$start" -v e="$end" -v hz="$hz" '{ last[$1] = $2 }
    END { for (t in last) { n++; tot += last[t];
	if (last[t] > max) max = last[t] }
	printf "wall %.2f cpu %.2f busiest %.2f threads %d\n", e - s,
	    tot / hz, max / hz, n }' "$log" >&2
exit $rc
