#!/bin/sh
# mpi.sh [N] [BUILD] - attn-mpi against attn on this machine: a forward
# pass of N queries and keys (65536 unless given), d = 64, one head,
# causal and not, by one attn process of one thread, and by attn-mpi as
# 1 and 2 ranks of one thread each (ATTN_THREADS=1; MPI_RANKS="2" or
# "2 3" runs those counts instead of "1 2"), output to an .npy.
# Prints a row a run: wall and CPU seconds (the launcher and every rank,
# /usr/bin/time), each rank's CPU seconds, peak resident memory (which
# counts the pages of mapped input files, shared by the processes of a
# machine) and peak private memory (anonymous pages, sampled every 0.1 s
# from /proc/PID/smaps_rollup), and the parallel efficiency (attn's wall
# time over R times the run's; on a machine that other work loads, each
# rank's CPU time says more).  bench/README.md holds what it printed,
# with the date and processor.
set -eu

n=${1:-65536}
build=${2:-build}
top=$(cd "$(dirname "$0")/.." && pwd)
attn=$top/$build/attn
mpi=$top/$build/attn-mpi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"
if [ "$(id -u)" -eq 0 ]; then
	export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
fi
export ATTN_THREADS=1
"$attn" gen "${n}x64" --seed 1 -f npy -o q.npy
"$attn" gen "${n}x64" --seed 2 -f npy -o k.npy
"$attn" gen "${n}x64" --seed 3 -f npy -o v.npy
echo "$(date -u '+%Y-%m-%d %H:%M') $(grep -m1 'model name' /proc/cpuinfo |
    sed 's/.*: //'), family $(grep -m1 'cpu family' /proc/cpuinfo |
    sed 's/.*: //') model $(grep -m1 '^model' /proc/cpuinfo |
    sed 's/.*: //'), $(nproc) CPUs; load $(cut -d' ' -f1-3 /proc/loadavg)"
# sample NAME: until done.t appears, the anonymous kB of each process
# called NAME running in this directory, a line "pid kB" a sample, into
# anon.t.
sample() {
	: >anon.t
	while [ ! -e done.t ]; do
		for p in $(pgrep -x "$1"); do
			# (a process may end between pgrep and awk)
			if [ "/proc/$p/cwd" -ef . ]; then
				awk -v p="$p" '/^Anonymous:/ { print p, $2 }' \
				    "/proc/$p/smaps_rollup" >>anon.t \
				    2>/dev/null || :
			fi
		done
		sleep 0.1
	done
}
printf '%-9s %-7s %7s %7s %12s %13s %14s %5s\n' run mask wall_s cpu_s \
    cpu_s/rank rss_MiB/rank anon_MiB/rank eff
for mask in none causal; do
	opt=
	[ $mask = causal ] && opt=--causal
	for run in attn ${MPI_RANKS:-1 2}; do
		rm -f done.t
		sample "$([ $run = attn ] && echo attn || echo attn-mpi)" &
		sampler=$!
		if [ $run = attn ]; then
			/usr/bin/time -f '%e %U %S %M' -o all.t "$attn" $opt \
			    -s output -o out.npy q.npy k.npy v.npy
			cut -d' ' -f2- all.t >rank.t
		else
			rm -f rank.t.*
			/usr/bin/time -f '%e %U %S %M' -o all.t mpirun -q \
			    --oversubscribe -n $run sh -c '/usr/bin/time -f \
			    "%U %S %M" -o rank.t.$$ "$0" "$@"' "$mpi" $opt -s output \
			    -o got.npy q.npy k.npy v.npy
			cat rank.t.* >rank.t
			cmp -s out.npy got.npy || echo "attn-mpi -n $run: not attn's bytes"
		fi
		touch done.t
		wait $sampler
		anon=$(awk '$2 > a[$1] { a[$1] = $2 } END { for (p in a)
		    s = s (s == "" ? "" : "/") sprintf("%.0f", a[p] / 1024)
		    print (s == "" ? "-" : s) }' anon.t)
		read -r wall user sys peak <all.t
		[ $run = attn ] && base=$wall
		awk -v run="$run" -v mask=$mask -v wall="$wall" \
		    -v cpu="$(echo "$user $sys" | awk '{ print $1 + $2 }')" \
		    -v base="$base" -v anon="$anon" \
		    -v r="$([ $run = attn ] && echo 1 ||
		    echo $run)" -v label="$([ $run = attn ] && echo attn ||
		    echo "mpi -n $run")" '
		    { p = p (p == "" ? "" : "/") sprintf("%.0f", $3 / 1024)
		      c = c (c == "" ? "" : "/") sprintf("%.1f", $1 + $2) }
		    END { printf "%-9s %-7s %7.1f %7.1f %12s %13s %14s %5.2f\n",
			label, mask, wall, cpu, c, p, anon,
			(wall > 0 ? base / (r * wall) : 1) }' rank.t
	done
done
