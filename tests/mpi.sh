#!/bin/sh
# mpi.sh ATTN ATTN_MPI - attn-mpi is attn shared among the processes of an
# MPI job (attn(1), "Beyond one machine: attn-mpi"): the same bytes,
# messages and exit status.
#
# Bytes: a generated matrix of conventions (causal and its alignments, a
# window, packed sequences, a paged KV cache, GQA, sinks, a softcap,
# ALiBi, a bias, --emulate bf16, the backward stages with --grad) is run
# by attn and by `mpirun -n R attn-mpi` for R = 1 to 4 (and 1 or 2
# threads a process), every stage in one .npz (-s all) or the output,
# lse and weights printed, --explain, --check, and compared with cmp;
# standard error too.  Text, standard input and a FIFO, which rank 0
# alone reads, give the same bytes.
# Inputs are long enough (300 queries, 3 tasks a head) that every rank
# has rows of its own.  Q read by rows (a .npy by each rank, text sent
# by rank 0 in packs): the same bytes with heads of 9 tasks, a fault of
# Q's told as attn tells it, and each rank's peak memory at R = 2 at
# most 0.65 of one rank's.
# Faults: bad input every rank sees (attn's line, once, attn's status);
# an overflow in the kernel (the fault attn reports first); memory
# refused on one rank of three (ATTN_MAX_MEMORY for that rank alone:
# "attn: rank 1: ...", attn's status 71, also for Q's rows); one rank
# of three killed by SIGTERM (one line naming it, status 143), or
# SIGKILL (rank 0's line), or all three by SIGTERM at once (a line
# each); and in each, nothing at -o FILE's name and no temporary file
# left.  Last, the benchmark (bench/mpi.sh) runs on a small case, so
# that it cannot rot.
set -u

[ $# -eq 2 ] || { echo "usage: mpi.sh ATTN ATTN_MPI" >&2; exit 2; }
if ! command -v mpirun >/dev/null 2>&1; then
	echo "mpi-test: skipped: no mpirun (Open MPI's openmpi-bin)"
	exit 0
fi
top=$(cd "$(dirname "$0")/.." && pwd)
attn=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
mpi=$(cd "$(dirname "$2")" && pwd)/$(basename "$2")
work=$(mktemp -d) || exit 1
trap 'rm -rf "$work"' EXIT
cd "$work" || exit 1
# Under the sanitizers (make check's second run): Open MPI's libraries
# keep memory to the end, which LeakSanitizer would report in every
# process; attn's own leaks are the other suites' to find.
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0"
if [ "$(id -u)" -eq 0 ]; then
	export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
fi
# -q: the launcher's own notices off, so that standard error is attn's
run_mpi() {
	n=$1
	shift
	mpirun -q --oversubscribe -n "$n" "$mpi" "$@"
}
# launcher_noise WHAT: the launcher's event library now and then warns
# of a descriptor already closed as a job ends on a fault ("[warn] Epoll
# MOD(1) on fd 25 failed. ...", an Open MPI 4.1 race, as its SIGSEGV
# below): its lines, not attn-mpi's, are left out of got.err, and said.
launcher_noise() {
	noise='^\[warn\] Epoll [A-Z]*([0-9]*) on fd [0-9]* failed\.'
	grep -q "$noise" got.err || return 0
	echo "mpi: $1: the launcher's warning left out:" \
	    "$(grep "$noise" got.err | head -n 1)"
	sed "/$noise/d" got.err >got.err2 && mv got.err2 got.err
}
pass=0
fail=0
bad() {
	echo "FAIL mpi: $*"
	fail=$((fail + 1))
}

# ------------------------------------------------------------- inputs

gen() {
	"$attn" gen "$1" --seed "$2" -f npy -o "$3" || exit 1
}
gen 300x32 1 q.npy		# 4 heads of 8
gen 260x32 2 k.npy
gen 260x32 3 v.npy
gen 260x16 4 k2.npy		# 2 KV heads
gen 260x16 5 v2.npy
gen 300x32 6 do.npy
gen 300x260 7 bias.npy
gen 2x300x4x8 8 q4.npy		# bshd: 2 batches
gen 6x64x2x8 9 kc.npy		# paged caches: 6 pages of 64
gen 6x64x2x8 10 vc.npy
gen 2x300x4x8 11 do4.npy
echo '[[0, 2, 4], [5, 1, 3]]' >table.json
echo '0.5 -1 0 2' >sinks.txt
echo '0,120,300' >cu_q.txt
echo '0,100,260' >cu_k.txt

# ------------------------------------------------------------- bytes

# same OUT ARGS...: attn and attn-mpi at R = 1 to 4 print the same
# bytes to OUT (- for standard output) and standard error, with the
# same status; ATTN_THREADS alternates 1 and 2.  Standard input is the
# file $stdin names (/dev/null unless set).
stdin=/dev/null
same() {
	out=$1
	shift
	if [ "$out" = - ]; then
		"$attn" "$@" <"$stdin" >want.out 2>want.err
	else
		"$attn" "$@" -o "want.$out" <"$stdin" 2>want.err
	fi
	want=$?
	for r in 1 2 3 4; do
		tries=0
		while :; do
			rm -f "got.$out"
			if [ "$out" = - ]; then
				ATTN_THREADS=$((r % 2 + 1)) run_mpi $r "$@" \
				    <"$stdin" >got.out 2>got.err
			else
				ATTN_THREADS=$((r % 2 + 1)) run_mpi $r "$@" \
				    -o "got.$out" <"$stdin" 2>got.err
			fi
			got=$?
			# Open MPI 4.1's mpirun itself now and then dies of
			# SIGSEGV in its forwarding of standard input (in 2
			# or 3 runs of 100 on a quiet machine, from a file
			# or a pipe alike, more often on a loaded one: three
			# in a row were seen; the trace it prints: its stdin
			# handler, then mpirun's own frame): not attn-mpi's
			# doing, so that run is made again, five times at
			# most.
			[ $got -eq 139 ] && [ $tries -lt 5 ] &&
			    grep -q '(orte_iof_hnp_read_local_handler+' \
			    got.err && grep -q '\] mpirun(' got.err || break
			tries=$((tries + 1))
			echo "mpi: -n $r $*: mpirun crashed forwarding" \
			    "standard input; run again"
		done
		launcher_noise "-n $r $*"
		if [ $got -ne $want ]; then
			bad "-n $r $*: status $got, attn's $want:" \
			    "$(head -n 3 got.err)"
		elif [ "$out" = - ] && ! cmp -s want.out got.out; then
			bad "-n $r $*: standard output differs"
		elif [ "$out" != - ] && ! cmp -s "want.$out" "got.$out"; then
			bad "-n $r $*: $out differs"
		elif ! cmp -s want.err got.err; then
			bad "-n $r $*: standard error differs:" \
			    "$(head -n 2 got.err)"
		else
			pass=$((pass + 1))
		fi
	done
}

qkv="q.npy k.npy v.npy"
gqa="q.npy k2.npy v2.npy"
same npz $qkv --heads 4 -s all
same npz $qkv --heads 4 --causal -s all
same npz $qkv --heads 4 --causal --align bottom-right --lse-base 2 \
    --lse-masked inf -s all
same npz $qkv --heads 4 --window 40,10 -s all
same npz $gqa --heads 4 --kv-heads 2 --causal --sinks sinks.txt \
    --softcap 5 -s all
same npz $qkv --heads 4 --alibi --causal -s all
same npz $gqa --heads 4 --kv-heads 2 --causal --grad do.npy -s all
same npz $qkv --heads 4 --bias bias.npy --sinks sinks.txt --grad do.npy \
    -s all
same npz $gqa --heads 4 --kv-heads 2 --alibi --window 30,30 --grad do.npy \
    -s all
same npz $qkv --heads 4 --cu-seqlens-q cu_q.txt --cu-seqlens-k cu_k.txt \
    --causal --grad do.npy -s all
same npz q4.npy kc.npy vc.npy --layout bshd --block-table table.json \
    --seqused-k 150,192 --causal --align bottom-right --grad do4.npy -s all
same npz $gqa --heads 4 --kv-heads 2 --causal --emulate bf16 -s all
same npz $qkv --heads 4 --emulate bf16 --grad do.npy -s all
same npy $qkv --heads 4 --causal -s output
same - $gqa --heads 4 --kv-heads 2 --causal -s lse -f csv
same - $qkv --heads 4 --window 5,0 -s weights -f csv
# standard output, which mpirun makes a pseudo-terminal in every
# process whatever the job's is: a binary format written to it, and the
# heatmap's colours and width, as attn gives them to a file
same - $qkv --heads 4 --causal -s output -f npy
same - $gqa --heads 4 --kv-heads 2 --causal --heatmap
# the printers that read several stages, and --check of the merged ones
same - $gqa --heads 4 --kv-heads 2 --causal --explain --query 3,200
"$attn" $gqa --heads 4 --kv-heads 2 --causal -s output -o ref.npy
same - $gqa --heads 4 --kv-heads 2 --causal --check ref.npy --emulate fp32

# Q from a .npy is read by each rank for the rows it computes, once
# every other input is read: a head of at least 2R tasks (1200 queries,
# 9 tasks of 144) has the same rows on a rank in every head.  float64 in
# C order where it lies, float32 widened, bhsd folded row by row; the
# cases above read the short heads' rows so, and the backward pass's.
gen 1200x64 15 lq1.npy		# 4 heads of 16
"$attn" gen 1200x64 --seed 15 -f npy --npy-dtype f4 -o lq1f.npy || exit 1
gen 700x32 16 lk1.npy		# 2 KV heads
gen 700x32 17 lv1.npy
gen 2x4x1200x16 18 lq4.npy	# bhsd
gen 2x2x700x16 19 lk4.npy
gen 2x2x700x16 20 lv4.npy
gen 1200x64 25 ldo1.npy
long="--heads 4 --kv-heads 2"
same npz lq1.npy lk1.npy lv1.npy $long --causal -s output,lse,weights
same npz lq1f.npy lk1.npy lv1.npy $long --window 200,30 -s output,lse
same npz lq4.npy lk4.npy lv4.npy --causal --align bottom-right \
    --sinks sinks.txt -s output,lse
same - lq1f.npy lk1.npy lv1.npy $long --causal -s output -f csv
# the emulation's tasks (16 rows) and packed sequences' (144 rows of one
# sequence)
same npz lq1f.npy lk1.npy lv1.npy $long --causal --emulate bf16 \
    -s output,lse
same npz lq1f.npy lk1.npy lv1.npy $long --emulate fp16 --grad ldo1.npy \
    -s output,grad_q
same npz lq1f.npy lk1.npy lv1.npy $long --cu-seqlens-q 0,500,501,1200 \
    --cu-seqlens-k 0,300,301,700 --causal -s output,lse
# the passes before the kernel on a rank's rows alone: Q descaled and
# rotated; with a layer, XQ's rows projected (q_rot and q whole on rank
# 0, which prints them)
same npz lq1.npy lk1.npy lv1.npy $long --causal --rope --descale-q 0.5 \
    --descale-k 2 -s output,lse
same npz lq1f.npy lk1.npy lv1.npy $long --rope --emulate fp8-e4m3 \
    --descale-q 0.5 -s output
same npz lq4.npy lk4.npy lv4.npy --rope --grad lq4.npy -s q_rot,grad_q
printf '{"W_Q": %s, "W_K": %s, "W_V": %s, "b_Q": %s}\n' \
    "$("$attn" gen 24x64 --seed 26 -f json)" \
    "$("$attn" gen 24x32 --seed 27 -f json)" \
    "$("$attn" gen 24x32 --seed 28 -f json)" \
    "$("$attn" gen 1x64 --seed 29 -f json)" >layer.json
gen 1200x24 30 lxq.npy
gen 700x24 31 lxkv.npy
same npz lxq.npy lxkv.npy --proj layer.json $long --causal --rope \
    -s output,lse
same npz lxq.npy lxkv.npy --proj layer.json $long --grad ldo1.npy \
    -s q,output,grad_q
# --check and --query: rank 0 reads all of Q, the others their rows
"$attn" lq1f.npy lk1.npy lv1.npy $long --causal -s output,lse \
    -o lref.npz || exit 1
same - lq1f.npy lk1.npy lv1.npy $long --causal --check lref.npz \
    --emulate bf16 -s output
same - lq1f.npy lk1.npy lv1.npy $long --window 9,9 -s output --query 5,1100
"$attn" lq4.npy lk4.npy lv4.npy --causal -s output -o lref4.npy || exit 1
same - lq4.npy lk4.npy lv4.npy --causal --check lref4.npy --emulate bf16
# --check of the stages its file names (no --stage), known once it is
# read: the rows read for the forward pass, the backward's are read too
"$attn" lq1f.npy lk1.npy lv1.npy $long --grad ldo1.npy \
    -s output,grad_q,grad_v -o lrefg.npz || exit 1
same - lq1f.npy lk1.npy lv1.npy $long --grad ldo1.npy --check lrefg.npz
# with --grad, every row of the heads of a rank's (batch, KV head) pairs
# (--stage all before --grad, whose stages it offers)
same npz lq1f.npy lk1.npy lv1.npy $long --causal -s all --grad ldo1.npy
same npz lq1.npy lk1.npy lv1.npy $long --grad ldo1.npy -s output,grad_k
# A number of Q's that is not finite, in rows another rank reads: attn's
# line (the first in Q's order, whichever rank read it), also when
# another input is bad too, which attn reads after Q.
cp lq1.npy qnan.npy
# put_nan FILE ROW COL: a float64 nan at [ROW, COL] of a .npy of attn's
# (a 128-byte header, 64 columns)
put_nan() {
	printf '\000\000\000\000\000\000\370\177' | dd of="$1" bs=1 \
	    seek=$((128 + 8 * ($2 * 64 + $3))) conv=notrunc 2>/dev/null
}
put_nan qnan.npy 1150 0
put_nan qnan.npy 1100 37
put_nan qnan.npy 1190 2
same - qnan.npy lk1.npy lv1.npy $long --causal -s output
same - qnan.npy lk1.npy missing.npy $long -s output
same - qnan.npy lk1.npy lq1.npy $long -s output

# No rank holds all of Q: each rank's peak resident memory at R = 2,
# less that of a run with a Q of one task, is at most 0.65 of the one
# rank's at R = 1 (half of Q, and of its float32 file, a rank; the rest
# is K, V and lse, small here); so with RoPE (half of q_rot too) and
# with a layer (half of XQ and of its projection).  Measured by a
# parent of each rank (getrusage of its child: Linux's ru_maxrss, in
# KiB).
cat >maxrss.py <<'PY'
import os, resource, subprocess, sys
rc = subprocess.call(sys.argv[2:])
kib = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
with open("%s.%s" % (sys.argv[1], os.environ["OMPI_COMM_WORLD_RANK"]), "w") as f:
    f.write("%d\n" % kib)
sys.exit(rc)
PY
# peak R Q [TEXT]: the most any rank of R held, in KiB, but rank 0 when
# Q is TEXT (read by rank 0 alone); $kv the rest of the operands and
# options
peak() {
	rm -f rss.*
	# shellcheck disable=SC2086 # kv is words
	ATTN_THREADS=1 mpirun -q --oversubscribe -n "$1" python3 maxrss.py rss \
	    "$mpi" "$2" $kv --heads 4 --causal -s lse -o out.npy \
	    </dev/null 2>got.err || echo 0
	[ $# -gt 2 ] && [ "$1" -gt 1 ] && rm -f rss.0
	sort -n rss.* | tail -n 1
}
# halves Q Q0 [TEXT]: a rank of 2 holds at most 0.65 of what one rank
# alone holds of Q, over a run of Q0's one task
halves() {
	base1=$(peak 1 "$2")
	base2=$(peak 2 "$2")
	one=$(($(peak 1 "$1") - base1))
	two=$(($(peak 2 "$1" ${3-}) - base2))
	if [ $one -le 0 ] || [ $((two * 100)) -gt $((one * 65)) ]; then
		bad "Q $1 $kv: a rank of 2 held $two KiB more than a run" \
		    "of one task, one rank alone $one KiB"
	else
		pass=$((pass + 1))
	fi
}
if command -v python3 >/dev/null 2>&1; then
	gen 16384x512 21 mq.npy		# 64 MiB
	"$attn" gen 16384x512 --seed 21 -f npy --npy-dtype f4 -o mqf.npy ||
	    exit 1
	gen 144x512 22 mq0.npy
	gen 64x512 23 mk.npy
	gen 64x4 24 mv.npy
	# (text: rank 1's, where rank 0 holds the text and all of Q)
	"$attn" gen 8192x512 --seed 21 -f csv -o mq.csv || exit 1
	kv="mk.npy mv.npy"
	halves mq.npy mq0.npy
	halves mqf.npy mq0.npy
	halves mq.csv mq0.npy text
	kv="mk.npy mv.npy --rope --descale-q 0.5"
	halves mq.npy mq0.npy
	# XQ of 16384 x 64 projected to 4 heads of 128
	gen 16384x64 32 mx.npy
	gen 144x64 33 mx0.npy
	gen 64x64 34 mxkv.npy
	printf '{"W_Q": %s, "W_K": %s, "W_V": %s}\n' \
	    "$("$attn" gen 64x512 --seed 35 -f json)" \
	    "$("$attn" gen 64x512 --seed 36 -f json)" \
	    "$("$attn" gen 64x16 --seed 37 -f json)" >mlayer.json
	kv="mxkv.npy --proj mlayer.json"
	halves mx.npy mx0.npy
	rm -f mq.npy mqf.npy mq.csv mx.npy mlayer.json out.npy
else
	echo "mpi: Q's memory a rank: skipped: no python3"
fi

# Q as text (or JSON) is read by rank 0 alone, which sends each rank
# its rows, 1 MiB at a time: 1200 rows of 512 columns come in several.
"$attn" gen 1200x64 --seed 15 -f csv -o lq1.csv || exit 1
"$attn" gen 2x4x1200x16 --seed 18 -f json -o lq4.json || exit 1
"$attn" gen 1200x512 --seed 26 -f csv -o wq.csv || exit 1
gen 300x512 27 wk.npy
gen 300x8 28 wv.npy
same npz lq1.csv lk1.npy lv1.npy $long --causal -s output,lse
same npz lq1.csv lk1.npy lv1.npy $long --causal --grad ldo1.npy \
    -s output,grad_q,grad_k
same npz lq4.json lk4.npy lv4.npy --window 100,100 -s output,lse
same npy wq.csv wk.npy wv.npy --causal --align bottom-right -s output
same - lq1.csv lk1.npy lv1.npy $long --causal --check lref.npz -s output
same npz lq1.csv lk1.npy lv1.npy $long --cu-seqlens-q 0,500,501,1200 \
    --cu-seqlens-k 0,300,301,700 --window 50,0 --emulate fp16 \
    -s output,lse
# a fault in it: rank 0's, attn's line
sed '700s/^[^,]*,/nan,/' lq1.csv >qnan.csv
sed '900s/,/,,/' lq1.csv >qbad.csv
same - qnan.csv lk1.npy lv1.npy $long -s output
same - qbad.csv lk1.npy missing.npy $long -s output

# Text and standard input are read by rank 0 alone, which mpirun gives
# standard input, and broadcast (Q's rows sent, as above): a csv Q on standard input, a JSON
# bundle, a pipe that can be read once (a FIFO, whose other readers
# would wait for a writer forever: so under timeout).
"$attn" gen 300x32 --seed 1 -f csv -o q.csv || exit 1
stdin=q.csv
same npz - k.npy v.npy --heads 4 --causal --grad do.npy -s all
stdin=/dev/null
printf '{"Q": %s, "K": %s, "V": %s}\n' "$("$attn" gen 5x3 --seed 2 -f json)" \
    "$("$attn" gen 7x3 --seed 3 -f json)" "$("$attn" gen 7x3 --seed 4 \
    -f json)" >bundle.json
stdin=bundle.json
same - - --causal --explain
stdin=/dev/null
"$attn" q.csv k.npy v.npy --heads 4 -s output -f csv >want.out
mkfifo fifo || exit 1
cat q.csv >fifo &
timeout 60 mpirun -q --oversubscribe -n 3 "$mpi" fifo k.npy v.npy \
    --heads 4 -s output -f csv >got.out 2>got.err
got=$?
wait
if [ $got -ne 0 ] || ! cmp -s want.out got.out; then
	bad "a FIFO read once: status $got, $(head -n 2 got.err)"
else
	pass=$((pass + 1))
fi

# ------------------------------------------------------------- faults

# Bad input that every rank sees: attn's line, once, and its status.
same - $qkv --heads 3
same - q.npy k.npy missing.npy --heads 4
# An overflow in the kernel: the first one attn finds.
"$attn" gen 300x32 --seed 1 -f csv | awk -F, -v OFS=, \
    'NR == 200 { $3 = "1e300" } { print }' >big.csv
same - big.csv k.npy v.npy --heads 4 --causal -s output
# and in the projection of XQ's rows, which each rank makes of its own
# (1e308 at [600, 3] and [1100, 3] of 24 columns)
cp lxq.npy xbig.npy
for row in 600 1100; do
	printf '\240\310\353\205\363\314\341\177' | dd of=xbig.npy bs=1 \
	    seek=$((128 + 8 * (row * 24 + 3))) conv=notrunc 2>/dev/null
done
same - xbig.npy lxkv.npy --proj layer.json $long -s output

# fault_ok WHAT STATUS LINE: the status is STATUS, standard error is the
# one line LINE (a grep -x pattern), and neither out.npz nor a temporary
# file of it is left.
fault_ok() {
	launcher_noise "$1"
	if [ "$got" -ne "$2" ]; then
		bad "$1: status $got, not $2 ($(head -n 2 got.err))"
	elif [ "$(wc -l <got.err)" -ne 1 ] || ! grep -qx "$3" got.err; then
		bad "$1: standard error is not one line '$3':" \
		    "$(head -n 3 got.err)"
	elif [ -n "$(ls -A | grep '^out\.npz\|^\.out\.npz')" ]; then
		bad "$1: left $(ls -A | grep 'out\.npz')"
	else
		pass=$((pass + 1))
	fi
}

# A T x S stage refused before any work, by each process's own limit
# (in attn's words; its bytes are not attn's, which counts a copy of
# the Q that attn-mpi reads in place, and a workspace a thread).
"$attn" $qkv --heads 4 -s weights -f csv >/dev/null 2>&1 || exit 1
ATTN_MAX_MEMORY=1M run_mpi 3 $qkv --heads 4 -s weights -f csv \
    >got.out 2>got.err
got=$?
fault_ok "a T x S stage over the limit" 71 \
    'attn: the inputs .* take more than ATTN_MAX_MEMORY (1048576 bytes)'
# refused_on_1 WHAT LIMIT LINE ARGS...: the job of 3 with ATTN_MAX_MEMORY
# LIMIT for rank 1 alone fails as fault_ok says, with LINE.
refused_on_1() {
	what=$1 limit=$2 line=$3
	shift 3
	mpirun -q --oversubscribe -n 1 "$mpi" "$@" -o out.npz : \
	    -n 1 -x ATTN_MAX_MEMORY="$limit" "$mpi" "$@" -o out.npz : \
	    -n 1 "$mpi" "$@" -o out.npz 2>got.err
	got=$?
	fault_ok "$what" 71 "$line"
}
# Memory refused on rank 1 of 3 alone.
refused_on_1 "memory refused on rank 1" 100000 \
    'attn: rank 1: .*ATTN_MAX_MEMORY.*' $qkv --heads 4 --causal -s all
# ... and for the bytes rank 0 read and broadcast (K's: Q's rows are
# sent, not its bytes).
"$attn" gen 260x32 --seed 2 -f csv -o k.csv || exit 1
refused_on_1 "memory refused on rank 1 for rank 0's bytes" 100000 \
    'attn: rank 1: k.csv: .*ATTN_MAX_MEMORY.*' q.npy k.csv v.npy \
    --heads 4 --causal -s all
# ... and for the rows of Q rank 0 read and sends: refused before rank
# 0 sends any.
refused_on_1 "memory refused on rank 1 for Q's rows" 700000 \
    'attn: rank 1: allocating a 1200x64 matrix .*ATTN_MAX_MEMORY.*' \
    lq1.csv lk1.npy lv1.npy $long -s output

# The ranks $2 (1, or "0 1 2": a grep pattern of rank numbers) of 3
# killed by signal $1 while they compute (a run of 60000 queries, 6 s of
# a core a process and more under the sanitizers, so that the kill,
# half a second after the processes are seen, comes before they last
# meet: past that, rank 0 rightly says nothing); got is the job's
# status, got.err its standard error, pid the processes killed.  TMPDIR
# is tmp/, where rank 0's file for the processes killed from outside
# (cli/mpi/main.c) must not be left.  The launcher waits 10 s, not 1,
# between its SIGTERM to the others and its SIGKILL (attn(1)), so that
# rank 0 says its line after a SIGKILL on a loaded machine too.
mkdir tmp
kill_ranks() {
	TMPDIR=$PWD/tmp ATTN_THREADS=1 mpirun -q --oversubscribe \
	    --mca odls_base_sigkill_timeout 10 -n 3 "$mpi" \
	    lq.npy lk.npy lv.npy -s output,lse -o out.npz 2>got.err &
	job=$!
	pid=
	for i in $(seq 200); do
		pid=
		for p in $(pgrep -f "$mpi lq.npy" 2>/dev/null); do
			if tr '\0' '\n' <"/proc/$p/environ" 2>/dev/null |
			    grep -qx "OMPI_COMM_WORLD_RANK=\($(echo "$2" |
			    sed 's/ /\\|/g')\)"; then
				pid="$pid $p"
			fi
		done
		[ "$(echo $pid | wc -w)" -eq "$(echo $2 | wc -w)" ] && break
		sleep 0.05
	done
	sleep 0.5
	if [ "$(echo $pid | wc -w)" -gt 1 ]; then
		# Several at once: the launcher is stopped meanwhile, as a
		# pkill is at once to the processes.  Else, on a loaded
		# machine, it could see one die and end the others with its
		# own SIGTERM before the kill reaches them, and those would
		# rightly say nothing.
		kill -STOP $job
		kill -"$1" $pid
		for i in $(seq 200); do
			alive=
			for p in $pid; do
				case $(ps -o stat= -p "$p" 2>/dev/null) in
				Z*|'') ;;
				*) alive=1 ;;
				esac
			done
			[ -z "$alive" ] && break
			sleep 0.05
		done
		kill -CONT $job
	elif [ -n "$pid" ]; then
		kill -"$1" $pid
	fi
	wait $job
	got=$?
	if [ -n "$(ls tmp | grep '^attn-mpi')" ]; then
		bad "ranks $2 killed by SIG$1: left $(ls tmp | grep attn-mpi)"
	fi
}
gen 60000x64 12 lq.npy
gen 60000x64 13 lk.npy
gen 60000x64 14 lv.npy

# SIGTERM from outside: rank 1's own line, the job ended with the
# signal's status.
kill_ranks TERM 1
if [ -z "$pid" ]; then
	bad "SIGTERM: rank 1's process not found"
else
	fault_ok "rank 1 killed by SIGTERM" 143 \
	    'attn: rank 1: killed by signal 15 (SIGTERM)'
fi

# SIGKILL, where rank 1 can say nothing: rank 0, ended by the launcher,
# says why in one line.
kill_ranks KILL 1
if [ -z "$pid" ]; then
	bad "SIGKILL: rank 1's process not found"
else
	fault_ok "rank 1 killed by SIGKILL" 137 \
	    'attn: rank 0: ended by mpirun before the processes finished: .*(SIGKILL or a crash).*'
fi

# Every rank killed from outside at once, as pkill kills them: each
# says so, and no file is left, rank 0's included.
kill_ranks TERM "0 1 2"
if [ "$(echo $pid | wc -w)" -ne 3 ]; then
	bad "SIGTERM to all: found only the processes$pid"
elif [ $got -ne 143 ] || [ "$(sort got.err)" != "$(printf \
    'attn: rank %d: killed by signal 15 (SIGTERM)\n' 0 1 2)" ]; then
	bad "SIGTERM to all: status $got, $(head -n 3 got.err)"
else
	pass=$((pass + 1))
fi

# The benchmark (bench/mpi.sh, make bench-mpi) on a small case: a row
# for each of its six runs, each attn's bytes.
sh "$top/bench/mpi.sh" 300 "$(dirname "$1")" >bench.out 2>&1
got=$?
# (rows counted by their first word: the header's load average ends as
# a row's efficiency does)
rows=$(grep -c '^\(attn\|mpi -n [0-9]\) .* [0-9]*\.[0-9][0-9]$' bench.out)
if [ $got -ne 0 ] || [ "$rows" -ne 6 ] ||
    grep -q "not attn's bytes" bench.out; then
	bad "bench/mpi.sh 300: status $got: $(tail -n 3 bench.out)"
else
	pass=$((pass + 1))
fi

echo "mpi: $pass passed, $fail failed"
[ $fail -eq 0 ]
