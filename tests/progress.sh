#!/bin/sh
# progress.sh ATTN - the progress line of a long run (cli/progress.c):
#
#   1. in a real terminal (tmux), without options, the line shows while
#      the run goes on and is gone from the screen when it ends;
#   2. with stderr a file, nothing shows unless --progress asks; with
#      --progress the line is drawn with \r and erased at the end;
#   3. the output is the same whichever way;
#   4. the other phases report on the same line, named, each after the
#      one before, so that the line never stays at 100% while work goes
#      on: the streaming kernel's backward pass after its forward one
#      (--grad), --check's comparison after attn's run, an emulated
#      kernel's heads (--emulate), and --check's emulated baseline after
#      attn's own run; a phase shows once it has done some of its work,
#      so --check's comparison, begun before its baseline, after it.
#
# The line waits for a run's first second, so each run must last longer
# than that on the machine the test runs on, whatever its speed (CI's
# machines finished fixed sizes in under a second): grow() makes each
# input, on one thread, as many rows as a run of it takes the CPU time
# asked for, measured here, from files generated here rather than
# committed.
set -u
. "$(dirname "$0")/harness.sh"

# A tmux server of our own, so that no one else's is touched.
tm() { tmux -L "attn-progress-$$" "$@"; }
trap 'tm kill-server 2>/dev/null; rm -rf "$work"' EXIT

# Fail case $1 unless the last command succeeded.
expect() {
	if [ "$2" -eq 0 ]; then verdict "$1" ""; else verdict "$1" "no"; fi
}

# rows FILE N SEED COLS: N rows of COLS random numbers in -2..2.
rows() {
	awk -v n="$2" -v seed="$3" -v c="$4" 'BEGIN { srand(seed)
	    for (i = 0; i < n; i++) { for (j = 0; j < c; j++)
	        printf "%s%.4f", j ? "," : "", rand() * 4 - 2; print "" } }' >"$1"
}

# ms CMD...: the CPU time CMD takes (user and system, from the shell's
# times), in milliseconds, its output dropped.  On one thread its
# wall-clock time is at least that however loaded the machine is, where
# a wall-clock time measured under load may be twice what the run takes
# once the load is gone.
ms() {
	times >"$work/times.0"
	"$@" >/dev/null 2>&1
	times >"$work/times.1"
	awk 'function ms(t, m) { m = t; sub(/m.*/, "", m); sub(/^[0-9]*m/, "", t)
	        sub(/s$/, "", t); return (m * 60 + t) * 1000 }
	    FNR == 2 { c[FILENAME] = ms($1) + ms($2) }
	    END { printf "%d\n", c[ARGV[2]] - c[ARGV[1]] }' \
	    "$work/times.0" "$work/times.1"
}

# grow FILE SEED COLS N MS ARGS...: FILE of N rows or more, grown until
# attn -j 1 ARGS (which reads FILE) takes MS milliseconds of CPU; the
# time goes as the rows squared, so each step multiplies them by the
# square root of the time missing, with a margin, 1.5 to 8 times.
grow() {
	g_file=$1 g_seed=$2 g_cols=$3 g_n=$4 g_want=$5
	shift 5
	while :; do
		rows "$g_file" "$g_n" "$g_seed" "$g_cols"
		g_t=$(ms "$bin" -j 1 "$@")
		[ "$g_t" -ge "$g_want" ] && return
		g_n=$(awk -v n="$g_n" -v t="$g_t" -v w="$g_want" 'BEGIN {
		    f = sqrt(1.3 * w / (t > 1 ? t : 1))
		    printf "%d", n * (f < 1.5 ? 1.5 : f > 8 ? 8 : f) }')
	done
}

cd "$work" || exit 1
# Self-attention of 2 columns, 2.5 s of exp on one thread.
grow x.csv 5 2 10000 2500 --self x.csv -s output

# 1. A terminal: tmux gives the run one; poll the screen while it runs.
if ! command -v tmux >/dev/null 2>&1; then
	verdict tmux "tmux is missing (make test-deps installs it)"
	tally progress
	exit
fi
tm new-session -d -s run -c "$work" -x 160 -y 10 \
    "'$bin' -j 1 --self x.csv -o tty.csv; echo \"attn-done \$?\"; sleep 120"
seen=1
done=1
i=0
while [ $i -lt 1200 ]; do	# 120 s at most
	screen=$(tm capture-pane -p -t run 2>/dev/null)
	case $screen in *"% of query blocks, "*" s elapsed, about "*" s left"*)
		seen=0 ;;
	esac
	case $screen in *"attn-done"*) done=0; break ;; esac
	sleep 0.1
	i=$((i + 1))
done
expect "the run in a terminal ends" $done
expect "a terminal shows the line while the run goes on" $seen
screen=$(tm capture-pane -p -t run)
case $screen in *"query blocks"*) erased=1 ;; *) erased=0 ;; esac
expect "the line is erased at the end" $erased
case $screen in *"attn-done 0"*) ok=0 ;; *) ok=1 ;; esac
expect "the run in a terminal succeeds" $ok

# 2. stderr a file: nothing by default, the line with --progress.
"$bin" -j 1 --self x.csv -o pipe.csv 2>quiet.err
expect "a run with stderr not a terminal succeeds" $?
[ ! -s quiet.err ]
expect "no line when stderr is not a terminal" $?
"$bin" -j 1 --progress --self x.csv -o forced.csv 2>forced.err
expect "a run with --progress succeeds" $?
grep -q "attn: [0-9]*% of query blocks, [0-9.]* s elapsed, about [0-9.]* s left" \
    forced.err
expect "--progress draws the line into a pipe" $?
# Drawn with \r, never a newline, and erased: the last bytes are
# "\r" + spaces + "\r".
tr -d '\r ' <forced.err | grep -q 'left$' &&
    [ "$(tr -cd '\n' <forced.err | wc -c)" -eq 0 ] &&
    [ "$(tail -c 1 forced.err | od -An -c | tr -d ' ')" = '\r' ]
expect "the line is redrawn in place and erased at the end" $?
"$bin" -j 1 --progress --no-progress --self x.csv -o off.csv 2>off.err
[ ! -s off.err ]
expect "--no-progress after --progress turns it off" $?

# 3. The same numbers whichever way.
cmp -s tty.csv pipe.csv && cmp -s tty.csv forced.csv && cmp -s tty.csv off.csv
expect "the output does not depend on the progress line" $?

# 4. The other phases, on one thread, each input grown until its phase
# lasts past the line's first second: the streaming kernel's forward
# pass of y.csv (self-attention of 2 columns) 2 s, so that its line
# shows before the backward pass's (three times as long); the emulated
# fp16 kernel of z.csv (4 columns, 2 heads) 2 s; and its forward and
# backward passes of zg.csv 2 s: twice the second, for a machine whose
# load drops after the input is measured.
grow y.csv 7 2 8000 2000 --self y.csv -s output
grow z.csv 8 4 3000 2000 --emulate fp16 --heads 2 --self z.csv -s output
grow zg.csv 9 4 1500 2000 --emulate fp16 --heads 2 --self zg.csv \
    --grad zg.csv -s grad_k
# One run does both: grad_k (S x 2, as y.csv is) checked against y.csv,
# which fails the check (exit 1) after its comparison.
"$bin" -j 1 --progress --self y.csv --grad y.csv -s grad_k --check y.csv \
    >gcheck.out 2>grad.err
[ $? -eq 1 ]
expect "a run with --grad and --check comes to its verdict" $?
grep -q "attn: [0-9]*% of key blocks of the backward pass, [0-9.]* s elapsed, about [0-9.]* s left" \
    grad.err
expect "--grad names its phase on the line" $?
# The lines drawn, one a line: the forward pass's, then the backward
# pass's up to its 100%, then the comparison's, last.
tr '\r' '\n' <grad.err | grep '^attn: ' >grad.lines
tail -n 1 grad.lines |
    grep -q "^attn: 100% of the comparison with the --check file, " &&
    awk '/% of query blocks, / { q = NR }
        /100% of key blocks of the backward pass, / { if (!b) b = NR }
        END { exit !(q > 0 && b > q) }' grad.lines
expect "the backward pass follows the forward one, the check last" $?
"$bin" -j 1 --progress --emulate fp16 --heads 2 --self z.csv -s output \
    -f csv -o e.csv 2>emu.err
expect "a run with --emulate succeeds" $?
grep -q "attn: [0-9]*% of query blocks of the emulated fp16 kernel, [0-9.]* s elapsed" \
    emu.err
expect "--emulate names its phase on the line" $?
"$bin" -j 1 --progress --emulate fp16 --heads 2 --self zg.csv \
    --grad zg.csv -s grad_k -f csv -o eg.csv 2>emugrad.err
expect "a run with --emulate and --grad succeeds" $?
grep -q "attn: [0-9]*% of blocks of the emulated fp16 kernel, forward and backward, [0-9.]* s elapsed" \
    emugrad.err
expect "--emulate --grad names its phase on the line" $?
# The last line drawn before it is erased is the end of the work.
tr '\r' '\n' <emugrad.err | grep -v '^ *$' | tail -1 |
    grep -q "attn: 100% of blocks of the emulated fp16 kernel"
expect "the emulated backward's line ends at 100%, with the work" $?
"$bin" -j 1 --progress --emulate fp16 --check e.csv --heads 2 \
    --self z.csv >check.out 2>check.err
expect "--check --emulate of the emulation passes" $?
grep -q "attn: [0-9]*% of query blocks of the emulated fp16 kernel, " check.err
expect "--check's baseline reports after attn's run" $?
# A phase shows once it has done some of its work: --check's
# comparison, begun (done 0) before its emulated baseline is computed,
# only after the baseline's last line, and never at done 0, whose
# estimate would come from no work ("about 0.0 s left").  (Other phases
# may show 0% with a block or more done, of many.)
tr '\r' '\n' <check.err | grep '^attn: ' >check.lines
! grep -q '^attn: 0% of the comparison ' check.lines grad.lines &&
    awk '/ of query blocks of the emulated fp16 kernel, / { e = NR }
        / of the comparison with the --check file, / { if (!c) c = NR }
        END { exit !(e > 0 && c > e) }' check.lines
expect "a phase shows once begun: the comparison after its baseline" $?
[ "$(tail -c 1 grad.err | od -An -c | tr -d ' ')" = '\r' ] &&
    [ "$(tr -cd '\n' <check.err | wc -c)" -eq 0 ]
expect "the line is erased after the last phase, never a newline" $?

tally progress
