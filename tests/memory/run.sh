#!/bin/sh
# run.sh ATTN - the memory limit bounds what attn really takes.
#
#   heap     for inputs of each shape the readers are charged for (JSON
#            nodes, JSON Lines, wide, tall and labelled text, a header, a
#            bundle, a NumPy print, .npy of float16 and float64), and for the
#            stages and the output (a .npz archive too, with what libzip
#            holds while it makes it; a dropout mask and dropped), the least
#            ATTN_MAX_MEMORY that attn accepts is at least the heap it
#            takes at its peak when it runs, as peak.c (LD_PRELOAD)
#            counts it: the charges bound the real peak.
#   prlimit  under a hard address-space limit (prlimit --as) a little
#            above ATTN_MAX_MEMORY, sweeps of inputs from well inside to
#            far past it: every run succeeds, or is refused with one line
#            that names ATTN_MAX_MEMORY and exit 71; none runs into the
#            hard limit (a failed malloc, a wrong error, a crash).  So the
#            refusal comes before the kill.  Output and lse alone, which
#            stream, fit at every size.
#   cgroup   a cgroup memory limit (v2 memory.max, v1
#            memory.limit_in_bytes, of attn's cgroup or an ancestor) is
#            the limit when it is the lowest: attn runs in a private mount
#            namespace (unshare) over a made-up /sys/fs/cgroup.
#
# A part that cannot run here is skipped with a notice: under
# AddressSanitizer (it reserves terabytes of address space and brings its
# own malloc), without a C compiler, prlimit or the right to unshare.
# Sizes are set relative to the limits the script sets itself, so the
# machine's memory does not change the outcome.
set -u

. "$(dirname "$0")/../harness.sh"
unset ATTN_MAX_MEMORY

# ------------------------------------------------------------- inputs

# awk programs for the files below: N values, or N rows.
mk() {
	n=$2
	case $1 in
	json-row) awk -v n="$n" 'BEGIN { printf "[["; for (i = 0; i < n; i++)
	    printf "%s1", i ? "," : ""; print "]]" }' ;;
	json-column) awk -v n="$n" 'BEGIN { printf "["; for (i = 0; i < n; i++)
	    printf "%s[1]", i ? "," : ""; print "]" }' ;;
	json-layer) awk -v n="$n" 'BEGIN { printf "{"
	    for (w = 0; w < 3; w++) {
	        printf "%s\"W_%s\": [", w ? ", " : "", substr("QKV", w + 1, 1)
	        for (i = 0; i < n; i++)
	            printf "%s[1, 0]", i ? "," : ""
	        printf "]"
	    }
	    print "}" }' ;;
	json-labels) awk -v n="$n" 'BEGIN {
	    printf "{\"K\": [[1]], \"V\": [[1]], \"Q\": ["
	    for (i = 0; i < n; i++) printf "%s[1]", i ? "," : ""
	    printf "], \"labels\": {\"query\": ["
	    for (i = 0; i < n; i++) printf "%s\"q%d\"", i ? "," : "", i
	    print "]}}" }' ;;
	jsonl-column) awk -v n="$n" 'BEGIN { for (i = 0; i < n; i++)
	    print "[1]" }' ;;
	csv-row) awk -v n="$n" 'BEGIN { for (i = 0; i < n; i++)
	    printf "%s1", i ? "," : ""; print "" }' ;;
	csv-column) awk -v n="$n" 'BEGIN { for (i = 0; i < n; i++) print i % 10 }' ;;
	csv-labels) awk -v n="$n" 'BEGIN { for (i = 0; i < n; i++)
	    printf "row%d,%d\n", i, i % 10 }' ;;
	csv-header) awk -v n="$n" 'BEGIN { for (i = 0; i < n; i++)
	    printf "%sc%d", i ? "," : "", i; print ""
	    for (i = 0; i < n; i++) printf "%s1", i ? "," : ""; print "" }' ;;
	text-row) awk -v n="$n" 'BEGIN { for (i = 0; i < n; i++)
	    printf "0.%06d  ", i; print "" }' ;;
	text-repr) awk -v n="$n" 'BEGIN { printf "[["; for (i = 0; i < n; i++)
	    printf "%s1.", i ? " " : ""; print "]]" }' ;;
	csv-matrix) awk -v n="$n" 'BEGIN { srand(7); for (i = 0; i < n; i++) {
	    for (j = 0; j < 8; j++) printf "%s%.17g", j ? "," : "", rand()
	    print "" } }' ;;
	npy-f2|npy-f8) npy "${1#npy-}" "$n" ;;
	esac
}

# A .npy of one column of n zeros of dtype <$1 (f2: 2 bytes each, f8: 8),
# its header unpadded (other writers than numpy do not pad).
npy() {
	h="{'descr': '<$1', 'fortran_order': False, 'shape': ($2, 1), }"
	hl=$((${#h} + 1))
	printf '\223NUMPY\001\000'
	printf "\\$(printf %03o $((hl % 256)))\\$(printf %03o $((hl / 256)))"
	printf '%s\n' "$h"
	head -c $(($2 * ${1#f})) /dev/zero
}

# Set args to run attn on an input of kind $1 and size $2, made in $work.
setup() {
	f=$work/$1.$2
	case $1 in
	json-*) f=$f.json ;;
	jsonl-*) f=$f.jsonl ;;
	text-*) f=$f.txt ;;
	npy-*) f=$f.npy ;;
	*) f=$f.csv ;;
	esac
	case $1 in stages|output|stream|npz|dropout) ;;
	*) [ -f "$f" ] || mk "$1" "$2" >"$f" ;;
	esac
	printf '1\n' >"$work/one.csv"
	case $1 in
	json-row|csv-row|csv-header|text-row|text-repr) set -- \
	    --self "$f" -s lse ;;
	# queries of one column: a row of n (d = n) costs the kernel more
	# than its reader
	json-column|jsonl-column|csv-column|csv-labels|npy-*) set -- "$f" \
	    "$work/one.csv" \
	    "$work/one.csv" -s lse ;;
	json-labels) set -- "$f" -s lse ;;
	json-layer) mk csv-row "$2" >"$work/x.$2.csv"
		set -- --proj "$f" "$work/x.$2.csv" -s lse ;;
	stages|output|stream|npz|dropout) f=$work/csv-column.$2.csv
		[ -f "$f" ] || mk csv-column "$2" >"$f" ;;
	csv-matrix) printf '1,0,0,0,0,0,0,1\n' >"$work/q8.csv" ;;
	esac
	case $1 in
	# a T x S stage: lse alone streams in O(T + S)
	stages) set -- --self "$f" -s scores -f csv ;;
	output) set -- --self "$f" -s weights -f csv ;;
	# output and lse never hold T x S: 20000 keys fit where their
	# weights (3.2 GB) would not
	stream) set -- --self "$f" -s output,lse -f csv ;;
	# two T x S stages in one .npz: their .npy bytes, and the archive
	# libzip makes of them in memory
	npz) set -- --self "$f" -s scores,weights -f npz ;;
	# a T x S dropout mask read, and the weights after it held
	dropout) awk -v n="$2" 'BEGIN { for (i = 0; i < n; i++)
	    for (j = 0; j < n; j++) printf "%d%s", (i + j) % 3 != 0,
	    j + 1 < n ? "," : "\n" }' >"$work/dropout.$2.csv"
		set -- --self "$f" --dropout-p 0.5 --dropout-mask \
		    "$work/dropout.$2.csv" -s dropped -f csv ;;
	csv-matrix) set -- "$work/q8.csv" "$f" "$f" -s output ;;
	esac
	args=$*
}

# ------------------------------------------------------------- heap

# The least ATTN_MAX_MEMORY that attn accepts for $args, to within 0.5%:
# a bisection between a limit it refuses (exit 71) and one it accepts.
least_limit() {
	lo=1024 hi=$((1 << 30))
	while [ $((hi - lo)) -gt $((hi / 200)) ]; do
		mid=$(((lo + hi) / 2))
		# shellcheck disable=SC2086
		ATTN_MAX_MEMORY=$mid "$bin" $args >/dev/null 2>&1
		if [ $? -eq 71 ]; then lo=$mid; else hi=$mid; fi
	done
	echo "$hi"
}

# The heap peak of a run of $args with ATTN_MAX_MEMORY=$1, as peak.so
# counts it (the output's buffer grows less under a lower limit).
heap_peak() {
	# shellcheck disable=SC2086
	ATTN_MAX_MEMORY=$1 LD_PRELOAD=$work/peak.so "$bin" $args 2>&1 \
	    >/dev/null | sed -n 's/^attn-heap-peak //p'
}

heap_part() {
	if ldd "$bin" 2>/dev/null | grep -q 'libasan\|libtsan'; then
		skip_case heap "a sanitizer build has its own malloc"
		return
	fi
	if ! ${CC:-cc} -O2 -shared -fPIC -o "$work/peak.so" "$here/peak.c" \
	    -ldl >/dev/null 2>&1; then
		skip_case heap "cannot build peak.c with ${CC:-cc}"
		return
	fi
	printf '1,0\n0,1\n' >"$work/base.csv"
	args="--self $work/base.csv"
	base=$(heap_peak 1G)
	for shape in json-row:50000 json-column:25000 json-labels:12000 \
	    json-layer:8000 jsonl-column:25000 \
	    csv-row:50000 csv-column:50000 csv-labels:25000 \
	    csv-header:25000 text-row:25000 text-repr:50000 npy-f2:50000 \
	    npy-f8:50000 stages:300 output:300 npz:300 csv-matrix:5000 \
	    dropout:300; do
		setup "${shape%:*}" "${shape#*:}"
		least=$(least_limit)
		peak=$(heap_peak "$least")
		why=
		if [ -z "$peak" ]; then
			why="peak.so reported nothing"
		elif [ "$least" -lt $((peak - base)) ]; then
			why="accepted with ATTN_MAX_MEMORY=$least, but its heap"
			why="$why peak is then $((peak - base)) bytes (less"
			why="$why the $base bytes of a run on a 2 x 2 input)"
		fi
		[ -n "${ATTN_MEMORY_VERBOSE:-}" ] && echo "heap $shape:" \
		    "peak $((peak - base)), least limit $least"
		verdict "heap $shape" "$why"
	done
}

# ------------------------------------------------------------- prlimit

limit=$((16 << 20))

# Run $args under prlimit --as=$1 with ATTN_MAX_MEMORY=$limit; st, err.
run_limited() {
	# shellcheck disable=SC2086
	ATTN_MAX_MEMORY=$limit prlimit --as="$1" "$bin" $args \
	    >"$work/out" 2>"$work/err"
	st=$?
}

# Why the run is neither a success nor the refusal; nothing when it is.
judge() {
	if [ "$st" = 0 ]; then
		[ -s "$work/err" ] && echo "exit 0 with: $(head -2 "$work/err")"
		return
	fi
	if [ "$st" != 71 ]; then
		echo "exit $st: $(head -2 "$work/err")"
		return
	fi
	[ "$(wc -l <"$work/err")" -eq 1 ] &&
	    grep -q "ATTN_MAX_MEMORY ($limit bytes)" "$work/err" ||
	    echo "exit 71, but not the refusal: $(head -2 "$work/err")"
}

# The least address space attn runs $args in, to 1 MiB, in hi; 1 when it
# does not run in 1 GiB.
least_as() {
	lo=0 hi=$((1 << 30))
	run_limited $hi
	[ "$st" = 0 ] || return 1
	while [ $((hi - lo)) -gt $((1 << 20)) ]; do
		mid=$(((lo + hi) / 2))
		run_limited $mid
		if [ "$st" = 0 ]; then hi=$mid; else lo=$mid; fi
	done
}

prlimit_part() {
	if ! command -v prlimit >/dev/null 2>&1; then
		skip_case prlimit "no prlimit (util-linux)"
		return
	fi
	printf '1,0\n0,1\n' >"$work/base.csv"
	args="--self $work/base.csv"
	if ! least_as; then
		skip_case prlimit "attn does not run in 1 GiB of address space (AddressSanitizer?)"
		return
	fi
	# Room for the allocator's slack above ATTN_MAX_MEMORY: half of it.
	as=$((hi + limit + limit / 2))
	# -f npz maps libzip and the libraries it brings (libcrypto's
	# megabytes among them), which are no heap: its runs start from
	# the least address space such a run takes.
	args="--self $work/base.csv -f npz"
	least_as
	as_npz=$((hi + limit + limit / 2))
	for kind in json-row csv-row csv-column json-labels npy-f2 stages \
	    output npz csv-matrix stream; do
		case $kind in
		stages|output|npz) sizes="100 300 500 700 1000 2000" ;;
		stream) sizes="1000 4000 10000 20000" ;;
		csv-matrix) sizes="1000 4000 10000 40000 120000" ;;
		# 2 bytes a value on disk, 8 once read
		npy-f2) sizes="$((limit / 100)) $((limit / 20)) $((limit / 8))
		    $((limit / 4)) $((limit / 2))" ;;
		*) sizes="$((limit / 1000)) $((limit / 300)) $((limit / 100))
		    $((limit / 60)) $((limit / 30))" ;;
		esac
		outcomes= why=
		for n in $sizes; do
			setup "$kind" "$n"
			if [ "$kind" = npz ]; then
				run_limited $as_npz
			else
				run_limited $as
			fi
			w=$(judge)
			[ -n "$w" ] && why="${why:+$why; }size $n: $w"
			outcomes="$outcomes $st"
		done
		case $kind:$outcomes in
		stream:" 0 0 0 0") ;;
		stream:*) why="${why:+$why; }outcomes$outcomes: want every"
			why="$why run to fit, in O(T + S)" ;;
		*:" 0"*71) ;;
		*) why="${why:+$why; }outcomes$outcomes: want 0 first, 71 last" ;;
		esac
		verdict "prlimit $kind" "$why"
	done
}

# ------------------------------------------------------------- cgroup

# Run "$@" in a private mount namespace with a tmpfs on /sys/fs/cgroup,
# so that the made-up limits below reach no real cgroup.
in_namespace() {
	$userns unshare --mount --propagation private "$@"
}

# attn's cgroup v2 path and v1 memory path, from /proc/self/cgroup.
cg_run() {
	version=$1 value=$2
	shift 2
	in_namespace sh -c '
	    version=$1 value=$2; shift 2
	    mount -t tmpfs none /sys/fs/cgroup || exit 99
	    if [ "$version" = v2 ]; then
	        dir=/sys/fs/cgroup$(sed -n "s/^0:://p" /proc/self/cgroup)
	        mkdir -p "$dir" && echo "$value" >"$dir/memory.max"
	    else
	        # The hierarchy root: an ancestor of any cgroup.
	        mkdir -p /sys/fs/cgroup/memory &&
	        echo "$value" >/sys/fs/cgroup/memory/memory.limit_in_bytes
	    fi
	    exec "$@"' sh "$version" "$value" "$@" \
	    >"$work/out" 2>"$work/err"
	st=$?
}

cgroup_part() {
	userns=
	if ! unshare --mount --propagation private true 2>/dev/null; then
		if unshare --user --map-root-user --mount true 2>/dev/null; then
			userns="unshare --user --map-root-user"
		else
			skip_case cgroup "cannot unshare a mount namespace here"
			return
		fi
	fi
	seq 300 >"$work/x.csv"
	want="^attn: the inputs \([0-9]+ bytes\) and the stages \([0-9]+ bytes\) take more than the memory limit of attn's cgroup \(1048576 bytes\)$"
	for case in "v2 1048576 71" "v2 max 0" "v1 1048576 71" \
	    "v1 9223372036854771712 0" "v2 1048576 71 1G"; do
		set -- $case
		if [ "$1" = v1 ] &&
		    ! grep -q '^[0-9]*:\([^:]*,\)\{0,1\}memory[,:]' /proc/self/cgroup; then
			skip_case "cgroup $case" "attn's cgroup has no v1 memory controller"
			continue
		fi
		cg_run "$1" "$2" env ${4:+ATTN_MAX_MEMORY=$4} "$bin" \
		    --self "$work/x.csv" -s weights
		why=
		if [ "$st" = 99 ]; then
			skip_case "cgroup $case" "cannot mount a tmpfs on /sys/fs/cgroup"
			continue
		elif [ "$st" != "$3" ]; then
			why="exit $st, want $3: $(head -2 "$work/err")"
		elif [ "$3" = 71 ] && ! grep -Eq "$want" "$work/err"; then
			why="stderr: $(head -2 "$work/err")"
		elif [ "$3" = 0 ] && [ -s "$work/err" ]; then
			why="stderr: $(head -2 "$work/err")"
		fi
		verdict "cgroup $case" "$why"
	done
}

heap_part
prlimit_part
cgroup_part
tally memory
