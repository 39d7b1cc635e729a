#!/bin/sh
# run.sh ATTN - hostile inputs: attn must refuse each one cleanly.
#
# tests/bad/expect holds one case a line (blank lines and '#' comments
# are skipped):
#
#   NAME  STATUS  HOW  REGEX
#
#   NAME    a file in tests/bad/, or @NAME for a case this script sets up
#           itself (function setup_NAME below, '-' read as '_'): a
#           directory, a FIFO, a closed pipe, a signal, or an input too
#           large to commit;
#   STATUS  the exit status wanted, or several separated by '|';
#   HOW     how the file is given to attn:
#             self    attn --self FILE
#             bundle  attn FILE
#             q k v   FILE as that operand, good.csv as the other two
#             mask    attn --self good.csv --mask FILE (bias likewise)
#             grad    attn --self good.csv --grad FILE (dO)
#             proj    attn --proj FILE good.csv (a layer for 2 columns)
#             sinks   attn --self good.csv --sinks FILE (one head)
#             slopes  attn --self good.csv --alibi-slopes FILE (one head)
#             dropout attn --self good.csv --dropout-p 0.5 --dropout-mask
#                     FILE
#             check   attn --self good.csv --check FILE
#             seqlens attn --self good.csv --cu-seqlens-q FILE
#                     --cu-seqlens-k FILE (two rows to pack)
#             seqused attn --self good.csv --seqused-k FILE
#             table   FILE as --block-table of paged caches: Q two
#                     batches of one query (bshd), K and V three pages of
#                     two keys, --seqused-k 3,2
#             kcache  FILE as the K cache of those, with the table
#                     [[0, 1], [2, 0]]
#             indptr  FILE as FlashInfer's --kv-indptr of those caches,
#                     with --kv-indices 0,1,2 and --kv-last-page-len 1,2
#             lastpage FILE as --kv-last-page-len, with --kv-indptr
#                     [0, 2, 3] and --kv-indices 0,1,2
#             stdin   attn --self - <FILE
#           and - for @ cases;
#   REGEX   the rest of the line: an extended regular expression (as
#           awk and grep -E read it) that the one line on standard error
#           must match, or - when standard error must stay empty.
#
# A file case runs twice, in a fresh directory holding a copy of the file
# and good.csv (a 2x2 matrix): as it is, then with -o out.txt onto an
# out.txt that exists.  It passes when, under LC_ALL=C and within $limit
# seconds, the exit status is one of STATUS, nothing is on standard output,
# standard error is exactly one line that starts "attn: ", matches REGEX
# and is valid UTF-8, out.txt is unchanged and no .attn-* temporary file
# is left.  A timeout, a death by a signal that STATUS does not list, or
# a sanitizer report fails the case whatever else matched.
#
# The committed inputs are all under 64 KiB; the large ones (lines of
# megabytes, a million rows) are made here, in a temporary directory.
set -u

# A case that takes longer is taken for a hang.  A case alone takes a
# second or two at most, under ASan; but the limit is wall-clock time,
# and with an eighth of a core (make -j8 check on two busy ones) the ASan
# run of @long-json-line took more than the 10 s this limit once was.
limit=60

. "$(dirname "$0")/../harness.sh"
# Readable by everyone, for the cases that run attn as nobody.
chmod 755 "$work"
c=$work/case
devfull_symlink_ok=0

# ------------------------------------------------------------- judging

# Why the run in $c (status $st, files out and err) does not meet STATUS
# $1 and REGEX $2; nothing when it does.  check_out=0 skips the stdout
# test (for cases whose stdout is a pipe or a device).  One awk looks at
# standard error, since a process costs more here than any check.
judge() {
	if [ "$st" -eq 124 ]; then
		echo "timed out after $limit s (a hang?)"
		return
	fi
	ok=0
	for s in $(echo "$1" | tr '|' ' '); do
		[ "$st" = "$s" ] && ok=1
	done
	if [ $ok = 0 ]; then
		if [ "$st" -gt 128 ]; then
			echo "killed by signal $((st - 128)) (a crash?)," \
			    "want status $1"
		else
			echo "exit status $st, want $1"
		fi
		[ -s "$c/err" ] && sed -n '1,3s/^/    stderr: /p' "$c/err"
		return
	fi
	if [ "$check_out" = 1 ] && [ -s "$c/out" ]; then
		echo "stdout is not empty"
		return
	fi
	RE=$2 awk '
		{ n++; all = all "\n    " $0 }
		/Sanitizer|runtime error:/ && !san { san = $0 }
		END {
			re = ENVIRON["RE"]
			if (san != "")
				print "sanitizer report: " san
			else if (re == "-" && n > 0)
				print "stderr is not empty:" all
			else if (re == "-")
				;
			else if (n != 1)
				print "stderr is " n " lines, not one:" all
			else if (substr(all, 6, 6) != "attn: ")
				print "stderr does not start with attn:" all
			else if (substr(all, 6) !~ re)
				print "stderr does not match\n    want: " re \
				    "\n    got:  " substr(all, 6)
		}' "$c/err"
	# A last line without its newline is no line.
	[ "$2" != - ] && [ -s "$c/err" ] && [ -n "$(tail -c 1 "$c/err")" ] &&
	    echo "stderr does not end with a newline"
	if [ "$2" != - ] && ! iconv -f UTF-8 -t UTF-8 "$c/err" \
	    >/dev/null 2>&1; then
		echo "stderr is not valid UTF-8"
	fi
}

# Why -o out.txt was not left as it was, or a temporary file was left.
judge_output() {
	line=
	[ -f "$c/out.txt" ] && read -r line <"$c/out.txt"
	[ "$line" = precious ] || echo "-o out.txt was changed or removed"
	temp_left
}

# The opposite, for a run that succeeds: why out.txt does not hold a new
# result, or a temporary file was left.
judge_written() {
	line=
	[ -f "$c/out.txt" ] && read -r line <"$c/out.txt"
	[ -n "$line" ] && [ "$line" != precious ] ||
	    echo "-o out.txt was not written"
	temp_left
}

temp_left() {
	for f in "$c"/.attn-*; do
		[ -e "$f" ] && echo "temporary file left behind: $f"
	done
}

fresh() {
	rm -rf "$c"
	mkdir -m 755 "$c"
	printf '1,2\n3,4\n' >"$c/good.csv"
	printf 'precious\n' >"$c/out.txt"
	check_out=1
	extra=
}

# Run attn in $c with arguments "$@", stdin from $in, under timeout.
run() {
	(cd "$c" && timeout $limit "$bin" "$@" <"$in" >out 2>err)
	st=$?
}

# Polling instead of fixed waits: each loop looks every 10 ms, for at
# most $limit s (the timeout of every case), then gives up and lets the
# case fail on what it finds.
polls=$((limit * 100))

# Wait until file $1 (in the current directory) exists.
until_file() {
	n=0
	while [ ! -e "$1" ] && [ $n -lt $polls ]; do
		sleep 0.01
		n=$((n + 1))
	done
}

# Wait until process $1 is attn (the shell that started it has exec'd)
# and sleeps reading a pipe or FIFO, having read all there was: by the
# kernel's wait channel where /proc shows it, else by its state.
wait_reading() {
	n=0
	real=$(readlink -f "$bin")
	while [ $n -lt $polls ] && kill -0 "$1" 2>/dev/null; do
		if [ "$(readlink "/proc/$1/exe" 2>/dev/null)" = "$real" ]; then
			w=$(cat "/proc/$1/wchan" 2>/dev/null)
			case $w in
			*pipe*) return ;;
			''|0) [ "$(awk '{ print $3 }' "/proc/$1/stat" \
			    2>/dev/null)" = S ] && return ;;
			esac
		fi
		sleep 0.01
		n=$((n + 1))
	done
}

# Wait for background attn $1 to end (killing it after $limit s, as
# timeout would, status 124) and set st.
finish() {
	n=0
	while kill -0 "$1" 2>/dev/null && [ $n -lt $polls ]; do
		sleep 0.01
		n=$((n + 1))
	done
	if kill -0 "$1" 2>/dev/null; then
		kill -KILL "$1" 2>/dev/null
		wait "$1" 2>/dev/null
		st=124
	else
		wait "$1"
		st=$?
	fi
}

# ------------------------------------------------------------- file cases

# Paged caches for HOW table and kcache: Q (2 x 1 x 1 x 2), K and V
# caches of 3 pages of 2 keys (3 x 2 x 1 x 2) and a table that fits.
paged_inputs() {
	echo '[[[[1, 0]]], [[[0, 1]]]]' >"$c/pq.json"
	echo '[[[[1, 2]], [[3, 4]]], [[[5, 6]], [[7, 8]]], [[[1, 1]], [[2, 2]]]]' \
	    >"$c/pk.json"
	cp "$c/pk.json" "$c/pv.json"
	echo '[[0, 1], [2, 0]]' >"$c/pt.json"
	echo '[0, 2, 3]' >"$c/pp.json"
	echo '[0, 1, 2]' >"$c/pi.json"
	echo '[1, 2]' >"$c/pl.json"
}

run_file() {
	name=$1 want=$2 how=$3 re=$4
	if [ ! -f "$here/$name" ]; then
		verdict "$name" "no such file in tests/bad/"
		return
	fi
	for mode in plain output; do
		fresh
		cp "$here/$name" "$c/"
		in=/dev/null
		case $how in
		self)	set -- --self "$name" ;;
		bundle)	set -- "$name" ;;
		q)	set -- "$name" good.csv good.csv ;;
		k)	set -- good.csv "$name" good.csv ;;
		v)	set -- good.csv good.csv "$name" ;;
		mask)	set -- --self good.csv --mask "$name" ;;
		bias)	set -- --self good.csv --bias "$name" ;;
		grad)	set -- --self good.csv --grad "$name" -s grad_q ;;
		proj)	set -- --proj "$name" good.csv ;;
		sinks)	set -- --self good.csv --sinks "$name" ;;
		slopes)	set -- --self good.csv --alibi-slopes "$name" ;;
		dropout) set -- --self good.csv --dropout-p 0.5 \
			    --dropout-mask "$name" ;;
		check)	set -- --self good.csv --check "$name" ;;
		seqlens) set -- --self good.csv --cu-seqlens-q "$name" \
			    --cu-seqlens-k "$name" ;;
		seqused) set -- --self good.csv --seqused-k "$name" ;;
		table)	paged_inputs
			set -- --layout bshd --block-table "$name" \
			    --seqused-k 3,2 pq.json pk.json pv.json ;;
		kcache)	paged_inputs
			set -- --layout bshd --block-table pt.json \
			    --seqused-k 3,2 pq.json "$name" pv.json ;;
		indptr)	paged_inputs
			set -- --layout bshd --kv-indptr "$name" \
			    --kv-indices pi.json --kv-last-page-len pl.json \
			    pq.json pk.json pv.json ;;
		lastpage) paged_inputs
			set -- --layout bshd --kv-indptr pp.json \
			    --kv-indices pi.json --kv-last-page-len "$name" \
			    pq.json pk.json pv.json ;;
		stdin)	set -- --self -
			in=$c/$name ;;
		*)	verdict "$name" "unknown HOW '$how'"
			return ;;
		esac
		[ $mode = output ] && set -- -o out.txt "$@"
		run "$@"
		why=$(judge "$want" "$re")
		[ -z "$why" ] && why=$(judge_output)
		if [ -n "$why" ]; then
			[ $mode = output ] && why="with -o out.txt: $why"
			break
		fi
	done
	verdict "$name" "$why"
}

# ------------------------------------------------------------- set-up cases
#
# Each runs attn its own way in a fresh $c, leaving st, out and err for
# judge; extra holds anything else it found wrong, skipped a reason to
# skip.

setup_directory() {
	mkdir "$c/dir.csv"
	run --self dir.csv
}

setup_directory_as_output() {
	mkdir "$c/outdir"
	run --self good.csv -o outdir
	[ -d "$c/outdir" ] || extra="-o outdir removed the directory"
	for f in "$c"/.attn-*; do
		[ -e "$f" ] && extra="temporary file left behind: $f"
	done
}

# A FIFO whose writer pauses mid-file, until attn has read what came and
# waits for more, then ends it with a short row.  The script holds both
# ends (<>), so that opening it never blocks, whatever attn does.
setup_fifo() {
	mkfifo "$c/q.csv"
	exec 3<>"$c/q.csv"
	printf '1,2\n' >&3
	# 3>&-: attn must not hold a writing end itself
	(cd "$c" && exec "$bin" --self q.csv </dev/null >out 2>err 3>&-) &
	pid=$!
	wait_reading $pid
	printf '3\n' >&3
	exec 3>&-
	finish $pid
}

setup_missing_file() {
	run --self nosuch.csv
}

setup_missing_k() {
	run good.csv nosuch.csv good.csv
}

# Run attn in $c with arguments "$@" as a user without root's rights: as
# the user running the suite, or as nobody (setpriv, else runuser) when
# that is root, since root reads and writes anything.  Sets skipped when
# the suite runs as root and attn cannot be run as nobody.
run_unprivileged() {
	if [ "$(id -u)" != 0 ]; then
		run "$@"
		return
	fi
	for as in "setpriv --reuid=65534 --regid=65534 --clear-groups" \
	    "runuser -u nobody --"; do
		command -v "${as%% *}" >/dev/null 2>&1 &&
		    $as test -x "$bin" 2>/dev/null && break
		as=
	done
	if [ -z "$as" ]; then
		skipped="running as root, and cannot run attn as nobody"
		return
	fi
	(cd "$c" && timeout $limit $as "$bin" "$@" <"$in" >out 2>err)
	st=$?
}

setup_unreadable() {
	printf '1,2\n' >"$c/secret.csv"
	chmod 000 "$c/secret.csv"
	run_unprivileged --self secret.csv
}

# -o onto a file its user may not write is refused, as > refuses it, even
# where the directory would let attn rename a new file over it.
setup_output_read_only_file() {
	chmod 444 "$c/out.txt"
	[ "$(id -u)" = 0 ] && chmod 777 "$c"
	run_unprivileged --self good.csv -o out.txt
	extra=$(judge_output)
}

# A file attn may write, in a directory where it may not create one: no
# temporary file can be made there, so it is written in place, as > does.
setup_output_in_read_only_directory() {
	chmod 666 "$c/out.txt"
	: >"$c/out"
	: >"$c/err"
	[ "$(id -u)" = 0 ] || chmod 555 "$c"
	run_unprivileged --self good.csv -o out.txt
	chmod 755 "$c"
	extra=$(judge_written)
}

# Likewise in a sticky directory (/tmp) where the file is someone else's:
# only its owner may rename over it, anyone may write it.
setup_output_others_file_in_sticky_directory() {
	if [ "$(id -u)" != 0 ]; then
		skipped="needs root, to give out.txt another owner than attn's"
		return
	fi
	chmod 666 "$c/out.txt"
	chmod 1777 "$c"
	run_unprivileged --self good.csv -o out.txt
	extra=$(judge_written)
}

# /dev/full through a symbolic link: the same path as -o /dev/full, but
# a wrong rename() replaces the link, not the device.
setup_dev_full_via_symlink() {
	ln -s /dev/full "$c/full.txt"
	run --self good.csv -o full.txt
	[ -L "$c/full.txt" ] || extra="-o replaced the symbolic link"
	for f in "$c"/.attn-*; do
		[ -e "$f" ] && extra="temporary file left behind: $f"
	done
	[ "$st" = 74 ] && [ -z "$extra" ] && devfull_symlink_ok=1
}

# As root, a wrong rename() would replace the device itself: only tried
# when the symbolic link case showed that -o writes to the device.
setup_dev_full() {
	if [ "$(id -u)" = 0 ] && [ $devfull_symlink_ok = 0 ]; then
		skipped="as root, and -o through a link to /dev/full failed"
		return
	fi
	run --self good.csv -o /dev/full
	[ -c /dev/full ] || extra="/dev/full IS NO LONGER A DEVICE: restore \
it with 'rm /dev/full; mknod -m 666 /dev/full c 1 7'"
}

setup_stdout_dev_full() {
	(cd "$c" && timeout $limit "$bin" --self good.csv </dev/null \
	    >/dev/full 2>err)
	st=$?
	: >"$c/out"
}

setup_missing_output_dir() {
	run --self good.csv -o nodir/out.txt
}

# head -c0 has exited by the time attn writes: SIGPIPE, and no message.
# The reader's side says when the pipe has no reader left (closed).
setup_closed_pipe() {
	(cd "$c" && { until_file closed; timeout $limit "$bin" --self good.csv \
	    -s weights </dev/null 2>err; echo $? >st; } |
	    { head -c0; exec 0<&-; : >closed; })
	st=$(cat "$c/st")
	: >"$c/out"
}

# The same with SIGPIPE ignored (as under some supervisors): EPIPE is a
# write error, status 74, but without a message: the reader left.
setup_closed_pipe_sigpipe_ignored() {
	(cd "$c" && trap '' PIPE && { until_file closed; timeout $limit "$bin" \
	    --self good.csv -s weights </dev/null 2>err; echo $? >st; } |
	    { head -c0; exec 0<&-; : >closed; })
	st=$(cat "$c/st")
	: >"$c/out"
}

# A long output read by head -1: attn dies of SIGPIPE, quietly.
setup_head_1() {
	awk 'BEGIN { for (i = 0; i < 600; i++)
	    printf "%d,%d,%d,%d\n", i % 7, i % 5, i % 3, i % 2 }' \
	    >"$c/big.csv"
	(cd "$c" && { timeout $limit "$bin" --self big.csv -s weights -f csv \
	    </dev/null 2>err; echo $? >st; } | head -n 1 >head.out)
	st=$(cat "$c/st")
	[ "$(wc -l <"$c/head.out")" -eq 1 ] || extra="head -1 got no line"
	: >"$c/out"
}

# SIGTERM while attn waits on a slow standard input, with -o out.txt:
# sent once attn has read the first row and waits for more.
setup_sigterm_while_reading() {
	mkfifo "$c/slow"
	(printf '1,2\n' && exec sleep $limit) >"$c/slow" &
	writer=$!
	# In a subshell whose stderr is muted: the shell that waits for a
	# job killed by a signal says "Terminated".
	(
		cd "$c" || exit
		"$bin" --self - -o out.txt <slow >out 2>err &
		pid=$!
		wait_reading $pid
		kill -TERM $pid
		wait $pid
		echo $? >st
	) 2>/dev/null
	st=$(cat "$c/st")
	kill $writer 2>/dev/null
	wait $writer 2>/dev/null
	extra=$(judge_output)
}

# The fchmod shim (signal-in-fchmod.c), built once into $work; skipped
# is set when there is no compiler to build it.
shim=
build_shim() {
	if [ -z "$shim" ] && ${CC:-cc} -shared -fPIC -o "$work/shim.so" \
	    "$here/signal-in-fchmod.c" >/dev/null 2>&1; then
		shim=$work/shim.so
	fi
	[ -n "$shim" ] || skipped="cannot build signal-in-fchmod.so with ${CC:-cc}"
}

# attn -o out.txt with the shim sending it the signals $1 between its
# temporary file and the rename, after the shell ran `trap '' $2`.  The
# trap is set inside timeout, which gives its child default dispositions;
# the shell that waits for attn, and would say "Terminated", is muted
# (a subshell, since dash says it while the redirections hold).  An
# ASan build wants its runtime first among preloaded libraries.
run_signalled() {
	sigs=$1 ignore=$2
	shift 2
	rm -f "$c/st"
	(cd "$c" && timeout $limit sh -c 'sigs=$1 ignore=$2; shift 2
	    [ -n "$ignore" ] && trap "" $ignore
	    export ATTN_TEST_SIGNALS="$sigs" LD_PRELOAD="$SHIM" \
	    ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0"
	    ("$@" >out 2>err)
	    echo $? >st' sh "$sigs" "$ignore" "$bin" "$@" <"$in" 2>/dev/null)
	st=124
	[ -f "$c/st" ] && st=$(cat "$c/st")
}

# An input that another process truncates while attn reads it: the
# shim (shrink-after-map.c) cuts it to half its length as soon as it is
# mapped, and the pages past that would raise SIGBUS.
setup_input_shrinks_while_read() {
	if ! ${CC:-cc} -shared -fPIC -o "$work/shrink.so" \
	    "$here/shrink-after-map.c" >/dev/null 2>&1; then
		skipped="cannot build shrink-after-map.so with ${CC:-cc}"
		return
	fi
	awk 'BEGIN { for (i = 0; i < 8000; i++) print i / 8 "," i % 5 }' \
	    >"$c/shrink.csv"
	(cd "$c" && ATTN_TEST_SHRINK=16000 LD_PRELOAD="$work/shrink.so" \
	    ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0" \
	    timeout $limit "$bin" --self shrink.csv -o out.txt </dev/null >out \
	    2>err)
	st=$?
	extra=$(judge_output)
}

# attn run with a libzip that is no library first in the loader's path
# (LD_LIBRARY_PATH), named as the build's libzip is (the soname of the
# libzip.so the compiler finds); skipped is set when there is none.
run_without_libzip() {
	so=$(objdump -p "$(${CC:-cc} -print-file-name=libzip.so)" \
	    2>/dev/null | sed -n 's/^ *SONAME *//p')
	if [ -z "$so" ]; then
		skipped="no libzip.so found with ${CC:-cc} and objdump"
		return
	fi
	mkdir "$c/nolib"
	echo 'not a library' >"$c/nolib/$so"
	(cd "$c" && LD_LIBRARY_PATH=$c/nolib timeout $limit "$bin" "$@" \
	    <"$in" >out 2>err)
	st=$?
}

# An archive without libzip: refused in one line, not a start that fails.
setup_npz_without_libzip() {
	cp "$here/npz-archive.npz" "$c/"
	run_without_libzip --self good.csv --check npz-archive.npz
}

# A run that reads no archive does without libzip.
setup_csv_without_libzip() {
	run_without_libzip --self good.csv -o out.txt
	[ -s "$c/out.txt" ] || extra="no out.txt written"
}

# Signals the shell ignored (nohup, trap '' INT) stay ignored: the run
# goes on and writes out.txt.
setup_ignored_signals_stay_ignored() {
	build_shim || return
	SHIM=$shim run_signalled 'INT HUP TERM' 'INT HUP TERM' --self good.csv \
	    -o out.txt
	extra=$(judge_written)
}

# A signal that is not ignored still removes the temporary file, and attn
# dies of it.
setup_sigterm_before_rename() {
	build_shim || return
	SHIM=$shim run_signalled TERM '' --self good.csv -o out.txt
	extra=$(judge_output)
}

# attn gen writes -o FILE straight into its temporary file too
# (render_open_to): the signal there removes it and leaves FILE.
setup_sigterm_before_rename_of_gen() {
	build_shim || return
	SHIM=$shim run_signalled TERM '' gen 300x7 -o out.txt
	extra=$(judge_output)
}

# Why w.svg (made "precious" by the case) was changed.
judge_svg_kept() {
	line=
	[ -f "$c/w.svg" ] && read -r line <"$c/w.svg"
	[ "$line" = precious ] || echo "--svg w.svg was changed or removed"
}

# --svg FILE and -o FILE at once, the signal while the first temporary
# file is given its mode: both temporary files are removed (not only the last
# one made), and neither target is replaced.
setup_sigterm_with_svg_and_output() {
	build_shim || return
	printf 'precious\n' >"$c/w.svg"
	SHIM=$shim run_signalled TERM '' --self good.csv --svg w.svg \
	    -s weights -o out.txt
	extra=$(judge_output; judge_svg_kept)
}

# Ignored signals with both: the run goes on and writes both, and the
# dispositions it put back are the ignored ones (a second sink must not
# save the first one's handler as the original).
setup_ignored_signals_with_svg_and_output() {
	build_shim || return
	printf 'precious\n' >"$c/w.svg"
	SHIM=$shim run_signalled 'INT HUP TERM' 'INT HUP TERM' --self \
	    good.csv --svg w.svg -s weights -o out.txt
	extra=$(judge_written)
	grep -q '<svg' "$c/w.svg" || extra="${extra}--svg w.svg was not written"
}

# -o FILE that cannot be written (/dev/full) after --svg FILE was made:
# the SVG is not replaced.
setup_svg_kept_when_output_fails() {
	printf 'precious\n' >"$c/w.svg"
	run --self good.csv --svg w.svg -s weights -o /dev/full
	extra=$(judge_svg_kept; temp_left)
}

# 40 x 40 weights in CSV: some 30 kB, over any `ulimit -f 1`.
big_output_input() {
	awk 'BEGIN { for (i = 0; i < 40; i++) { for (j = 0; j < 40; j++)
	    printf "%s%d", j ? "," : "", (i * j) % 7; print "" } }' \
	    >"$c/big.csv"
}

# A file size limit (ulimit -f) is a write error, not a death by SIGXFSZ
# that leaves the temporary file behind.
setup_file_size_limit() {
	big_output_input
	(cd "$c" && ulimit -f 1 && timeout $limit "$bin" --self big.csv -s weights \
	    -f csv -o out.txt </dev/null >out 2>err
	    echo $? >st) 2>/dev/null
	st=$(cat "$c/st")
	extra=$(judge_output)
}

setup_file_size_limit_stdout() {
	big_output_input
	(cd "$c" && ulimit -f 1 && timeout $limit "$bin" --self big.csv -s weights \
	    -f csv </dev/null >big.out 2>err
	    echo $? >st) 2>/dev/null
	st=$(cat "$c/st")
}

# An SVG over the file size limit: the stages do not reach standard
# output (a failed run prints nothing there), and no temporary file is
# left.
setup_file_size_limit_svg() {
	big_output_input
	(cd "$c" && ulimit -f 1 && timeout 10 "$bin" --self big.csv --svg w.svg \
	    -s output -f csv </dev/null >out 2>err
	    echo $? >st) 2>/dev/null
	st=$(cat "$c/st")
	extra=$(temp_left)
}

# --svg /dev/full: likewise nothing on standard output.
setup_svg_dev_full() {
	run --self good.csv --svg /dev/full -s weights
}

setup_stdin_closed() {
	(cd "$c" && timeout $limit "$bin" --self - >out 2>err <&-)
	st=$?
}

# Linux: reading /proc/self/mem from offset 0 fails with EIO.
setup_read_error() {
	if [ ! -r /proc/self/mem ]; then
		skipped="no /proc/self/mem"
		return
	fi
	run --self /proc/self/mem
}

setup_dev_null() {
	run --self /dev/null
}

setup_empty_stdin() {
	run --self -
}

# 20 MB of NUL bytes on standard input.
setup_nul_stream() {
	(cd "$c" && head -c 20000000 /dev/zero |
	    timeout $limit "$bin" --self - >out 2>err)
	st=$?
}

# One line of 8 MB: 4 million values, then one that is not a number.
setup_long_line() {
	{ yes 1, | head -n 4000000 | tr -d '\n'; echo x; } >"$c/long-line.csv"
	run --self long-line.csv
}

# Two lines of a million values, the second one value longer.
setup_long_lines_ragged() {
	{ yes 1, | head -n 999999 | tr -d '\n'; echo 1
	  yes 2, | head -n 1000000 | tr -d '\n'; echo 2; } >"$c/wide.csv"
	run --self wide.csv
}

# A million rows, then a short one.
setup_million_rows_ragged() {
	{ yes 1,2 | head -n 1000000; echo 3; } >"$c/tall.csv"
	run tall.csv good.csv good.csv
}

# A million blank lines before the first (bad) row.
setup_million_blank_lines() {
	{ head -c 1000000 /dev/zero | tr '\0' '\n'; echo 1,x; } \
	    >"$c/blank.csv"
	run --self blank.csv
}

# A JSON row of 2 million numbers ending in a word.
setup_long_json_line() {
	{ printf '[['; yes 1, | head -n 2000000 | tr -d '\n'; echo 'x]]'; } \
	    >"$c/long.json"
	run --self long.json
}

# A 4 MB label in a bundle: read whole, then the count is wrong.
setup_long_json_label() {
	{ printf '{"Q": [[1], [2]], "K": [[1]], "V": [[1]], "labels": '
	  printf '{"query": ["'; head -c 4000000 /dev/zero | tr '\0' a
	  printf '", "b", "c"]}}\n'; } >"$c/label.json"
	run label.json
}

# 100000 open brackets: cJSON's depth limit, not the stack, stops it.
setup_deep_nesting_100k() {
	head -c 100000 /dev/zero | tr '\0' '[' >"$c/deep.json"
	run --self deep.json
}

# A number of a million digits, in CSV and in JSON, then a ragged row.
setup_million_digit_number() {
	{ printf '0.'; head -c 1000000 /dev/zero | tr '\0' 3; echo
	  echo 1,2; } >"$c/digits.csv"
	run --self digits.csv
}

setup_million_digit_json() {
	{ printf '[[0.'; head -c 1000000 /dev/zero | tr '\0' 3
	  echo '], [1, 2]]'; } >"$c/digits.json"
	run --self digits.json
}

run_setup() {
	name=$1 want=$2 re=$4
	fn=setup_$(echo "${name#@}" | tr '-' '_')
	fresh
	in=/dev/null
	skipped=
	st=0
	if ! command -v "$fn" >/dev/null 2>&1; then
		verdict "$name" "no function $fn in run.sh"
		return
	fi
	"$fn" </dev/null
	if [ -n "$skipped" ]; then
		skip_case "$name" "$skipped"
		return
	fi
	why=$(judge "$want" "$re")
	[ -z "$why" ] && why=$extra
	verdict "$name" "$why"
}

# ------------------------------------------------------------- main

while read -r name want how re; do
	case $name in
	''|'#'*) continue ;;
	@*) run_setup "$name" "$want" "$how" "$re" ;;
	*) run_file "$name" "$want" "$how" "$re" ;;
	esac
done <"$here/expect"

tally bad
