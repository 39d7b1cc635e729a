#!/bin/sh
# workbench-tmux.sh ATTN - attn workbench as a person uses it: tmux runs
# it in a pane of a known size, send-keys presses each key, and
# capture-pane reads the screen after it.  What the screen says is
# checked against attn itself for the same options: the weights of the
# chosen query against `attn -s weights`, its entropy against --stats.
# After the workbench ends (q, SIGINT, SIGTERM, a crash's SIGABRT and
# SIGSEGV) the pane runs `stty -a`: the terminal must be back in
# canonical mode with echo.
#
# A key is followed by polling the screen for what it must show (at
# most 20 s, for the sanitizer build); the server runs on its own socket
# in a temporary directory and is killed at the end.
set -u

name=workbench-tmux
. "$(dirname "$0")/lib.sh"
cleanup='tmux -L attn-wb kill-server >/dev/null 2>&1'
visual_start tmux python3
TMUX_TMPDIR=$work
export TMUX_TMPDIR
unset TMUX
tm() { tmux -L attn-wb "$@"; }

# The toy's Q, K and V as files: the first 8 and 16 columns of attn gen
# 3x1024, full precision, as the workbench draws them.
for s in 1 2; do
	"$bin" gen 3x1024 --seed $s -o "$work/g$s.csv"
done
for d in 8 16; do
	cut -d, -f1-$d "$work/g1.csv" >"$work/q$d.csv"
	cut -d, -f1-$d "$work/g2.csv" >"$work/k$d.csv"
done
printf '1,0\n0,1\n1,1\n' >"$work/v.csv"
toy="--query-labels the,cat,sat --key-labels the,cat,sat"

# bad with the screen: what went wrong, and what it looked like.
bad_screen() {
	bad "$1"
	sed 's/^/    /' "$work/screen" | head -40
}

# start ENV ARGS...: attn workbench ARGS (words without blanks) in a pane
# 80 x 24, with NO_COLOR and COLORTERM unset and ENV set, its pid in
# $work/pid; after it ends the pane shows its status and the terminal's
# icanon and echo flags.  The shell lives through C-c (a trap, which
# the workbench does not inherit).  tmux itself runs with the pane's
# TERM, which ENV may have changed.
start() {
	env=$1
	shift
	cat >"$work/run.sh" <<RUN
unset NO_COLOR COLORTERM COLUMNS LINES
pane_term=\$TERM
$env
export NO_COLOR LC_ALL LANG 2>/dev/null
ulimit -c 0
trap 'true' INT
cd "$top"
sh -c 'echo \$\$ >"$work/pid"; exec "\$0" workbench "\$@"' "$bin" $* \
    2>"$work/stderr"
echo "status \$?"
stty -a | tr ' ;' '\n\n' | grep -x -e '-*icanon' -e '-*echo' | tr '\n' ' '
echo
TERM=\$pane_term tmux -L attn-wb wait-for -S wb-done
exec cat
RUN
	rm -f "$work/pid"
	# the server of the session before may be exiting: try again
	i=0
	until tm -f /dev/null new-session -d -s wb -x 80 -y 24 \
	    "sh $work/run.sh" 2>/dev/null; do
		i=$((i + 1))
		[ $i -lt 10 ] || break
		sleep 0.2
	done
}

# capture: the screen into $work/screen (text) and screen.e (colours).
capture() {
	tm capture-pane -t wb -p >"$work/screen"
	tm capture-pane -t wb -p -e >"$work/screen.e"
}

# await ERE: capture until a line of the screen matches, at most 20 s,
# then until two captures 30 ms apart agree (at most 2 s more), so that
# what the checks after it read is a whole redraw, not the part of one
# that a loaded machine had drawn; fails (returns 1) when nothing
# matched.
await() {
	i=0
	while [ $i -lt 200 ]; do
		capture
		if grep -Eq -- "$1" "$work/screen"; then
			steady
			return 0
		fi
		sleep 0.1
		i=$((i + 1))
	done
	return 1
}

# steady: capture the text again until it stays the same for 30 ms,
# then the colours with it.
steady() {
	j=0
	while [ $j -lt 60 ]; do
		cp "$work/screen" "$work/screen.was"
		sleep 0.03
		tm capture-pane -t wb -p >"$work/screen"
		cmp -s "$work/screen" "$work/screen.was" && break
		j=$((j + 1))
	done
	tm capture-pane -t wb -p -e >"$work/screen.e"
}

# key K... EXPECT: press the keys, then await EXPECT.
key() {
	while [ $# -gt 1 ]; do
		tm send-keys -t wb "$1"
		shift
	done
	await "$1"
}

# The weights of the chosen query on screen: "key=weight ...", from the
# lines between the column heads and the entropy.
shown() {
	awk '/^key +scores +scaled +weights/ { on = 1; next }
	    /^entropy/ { on = 0 }
	    on && NF >= 4 { printf "%s%s=%s", (n++ ? " " : ""), $1, $4 }
	    END { print "" }' "$work/screen"
}

# attn's weights of query Q for options ARGS...: "key=weight ..." from
# the table of -s weights.
want() {
	q=$1
	shift
	"$bin" -s weights "$@" | awk -v q="$q" '
	    NR == 2 { for (i = 1; i <= NF; i++) k[i] = $i }
	    NR > 2 && $1 == q { for (i = 2; i <= NF; i++)
		printf "%s%s=%s", (i > 2 ? " " : ""), k[i - 1], $i; print "" }'
}

# settle EXP: capture until the screen's weights are EXP, at most 20 s;
# $got is what it showed last.  A capture can fall in the middle of a
# redraw, with a row's weight not drawn yet, so one look is not enough.
settle() {
	i=0
	while :; do
		got=$(shown)
		[ -n "$got" ] && [ "$got" = "$1" ] && return 0
		[ $i -lt 200 ] || return 1
		sleep 0.1
		capture
		i=$((i + 1))
	done
}

# same WHAT Q ARGS...: the screen's weights are attn's for Q and ARGS.
same() {
	what=$1
	shift
	exp=$(want "$@")
	settle "$exp" && ok ||
	    bad_screen "$what: the screen shows '$got', attn -s weights '$exp'"
}

# The entropy of query Q for options ARGS..., as --stats prints it.
entropy() {
	q=$1
	shift
	"$bin" --stats "$@" | awk -v q="$q" '$1 == q { print $4 }'
}

# finished STATUS WHAT: the workbench ended with STATUS, and the
# terminal is back in canonical mode with echo.
finished() {
	if ! timeout 20 tmux -L attn-wb wait-for wb-done; then
		bad "$2: the workbench did not end"
	fi
	capture
	grep -q "^status $1\$" "$work/screen" && ok ||
	    bad_screen "$2: not status $1"
	grep -q '^icanon echo *$' "$work/screen" && ok ||
	    bad_screen "$2: the terminal is not given back (icanon, echo)"
}

# ended STATUS WHAT: finished, and nothing on stderr.
ended() {
	finished "$@"
	# nothing on stderr, no message and no sanitizer report, but the
	# shell's word for the signal that ended it
	grep -v -x -e Terminated -e Aborted -e 'Segmentation fault' \
	    "$work/stderr" >"$work/stderr.rest"
	[ ! -s "$work/stderr.rest" ] && ok ||
	    bad "$2: stderr: $(head -c 2000 "$work/stderr.rest")"
	tm kill-session -t wb
}

q8="$work/q8.csv $work/k8.csv $work/v.csv"
q16="$work/q16.csv $work/k16.csv $work/v.csv"

# 1. The toy: its header, and the first query's weights as attn's.
start ""
await '^key +scores' || bad_screen "the toy did not start"
grep -q 'the toy, Q, K = columns 1-8 of attn gen 3x1024 --seed 1, 2' \
    "$work/screen" && ok || bad_screen "no toy title"
grep -q '^scaling on   d_k 8   causal off   head 1 of 1' "$work/screen" &&
    ok || bad_screen "no conventions line"
# shellcheck disable=SC2086
same "at the start" the $toy $q8
grep -q '^▶ the' "$work/screen" && ok || bad_screen "the first row not marked"
grep -q "$(printf '\033')\[48;5;[0-9]*m" "$work/screen.e" && ok ||
    bad_screen "no colour in the heatmap"
grep -q '^↑↓ query  s scale  + - d_k  c causal  h head  p predict  t step  ? help  q quit$' \
    "$work/screen" && ok || bad_screen "no key help on the last line"

# 2. down (and j): the marker moves, the row is the next query's.
key Down '^▶ cat' || bad_screen "Down does not mark cat"
grep -q '^query cat (row 2 of 3)' "$work/screen" && ok ||
    bad_screen "Down does not choose cat"
# shellcheck disable=SC2086
same "after Down" cat $toy $q8
key j '^▶ sat' && ok || bad_screen "j does not move to sat"
key k k '^▶ the' && ok || bad_screen "k does not move back up"
key j '^▶ cat' || bad_screen "j does not move to cat"

# 3. s: no scaling, the weights of --no-scale; scaled equals scores.
key s '^scaling off' && ok || bad_screen "s does not turn scaling off"
# shellcheck disable=SC2086
same "after s" cat --no-scale $toy $q8
awk '/^key +scores/ { on = 1; next } /^entropy/ { on = 0 }
    on && $2 != $3 { bad = 1 } END { exit bad }' "$work/screen" && ok ||
    bad_screen "without scaling, scaled differs from scores"

# 4. s again, then +: d_k 16 in the header, the toy's first 16 columns.
#    The example stays: d_k 16 adds 8 columns to the 8 there were, and
#    every query's largest weight stays on the same key.
key s '^scaling on' || bad_screen "s does not turn scaling back on"
# winner: query=key of the largest weight, for the query on screen
winner() {
	awk '/^key +scores/ { on = 1; next } /^entropy/ { on = 0 }
	    on && NF >= 4 && $4 + 0 > w { w = $4 + 0; k = $1 }
	    END { print k }' "$work/screen"
}
for q in sat the cat; do
	key j "^query $q " || bad_screen "j does not reach $q"
	w8=$(winner)
	key + '^scaling on   d_k 16' || bad_screen "+ does not double d_k"
	w16=$(winner)
	[ -n "$w8" ] && [ "$w8" = "$w16" ] && ok ||
	    bad_screen "query $q: the largest weight on $w8 at d_k 8, on $w16 at 16"
	key - '^scaling on   d_k 8' || bad_screen "- does not halve d_k"
done
key + '^scaling on   d_k 16' && ok || bad_screen "+ does not double d_k"
grep -q 'columns 1-16 of attn gen 3x1024' "$work/screen" && ok ||
    bad_screen "+ does not take the toy's first 16 columns"
# shellcheck disable=SC2086
same "after +" cat $toy $q16
key - '^scaling on   d_k 8' && ok || bad_screen "- does not halve d_k"

# 5. c: causal; masked keys are "-" as in attn's table.
key c 'causal on' && ok || bad_screen "c does not turn causal on"
# shellcheck disable=SC2086
same "after c" cat --causal $toy $q8
key c 'causal off' || bad_screen "c does not turn causal off"

# 6. Predict mode: s hides the weights and asks; m shows them and the
#    entropy before and after, as --stats gives them.
key p 'predict on' && ok || bad_screen "p does not turn predict mode on"
key s '^Predict: the weights of cat, more concentrated, more spread or about the same\?' &&
    ok || bad_screen "predict mode does not ask"
grep -q '%' "$work/screen" && bad_screen "weights shown before the guess" ||
    ok
[ "$(shown)" = "the=? cat=? sat=?" ] && ok ||
    bad_screen "the weights are not hidden: $(shown)"
# s is the scaling's key, not an answer: while the question is open it
# changes nothing and the note names the answers, f the spread one
key s '^first your guess: m \(more concentrated\), f \(more spread\) or a \(about the same\)$' &&
    ok || bad_screen "s answers the question"
grep -q '^scaling off' "$work/screen" && ok ||
    bad_screen "s changes the scaling while the question is open"
# shellcheck disable=SC2086
e0=$(entropy cat $toy $q8)
# shellcheck disable=SC2086
e1=$(entropy cat --no-scale $toy $q8)
key m "^entropy $e0 → $e1 nats" && ok ||
    bad_screen "m does not show the entropy $e0 → $e1"
# shellcheck disable=SC2086
same "after the guess" cat --no-scale $toy $q8
# without scaling the logits are larger: the weights concentrate
grep -q '^You said more concentrated: right\.$' "$work/screen" && ok ||
    bad_screen "the answer to m is not right"
key p 'predict off' || bad_screen "p does not turn predict mode off"
key s '^scaling on' || bad_screen "s does not turn scaling back on"

# 7. ? shows the keys, and back.
key '?' '^  p +predict mode' && ok || bad_screen "? shows no help"
key '?' '^key +scores' && ok || bad_screen "? does not come back"

# 8. A resize redraws for the new size: the key help on the last of 30
#    lines, and no line past 60 columns.
tm resize-window -t wb -x 60 -y 30
i=0
while [ $i -lt 200 ]; do
	capture
	[ "$(sed -n 30p "$work/screen")" != "" ] && break
	sleep 0.1
	i=$((i + 1))
done
sed -n 30p "$work/screen" | grep -q '^↑↓ query' && ok ||
    bad_screen "no redraw at 60 x 30"
python3 -c 'import sys
sys.exit(any(len(l.rstrip("\n")) > 60 for l in open(sys.argv[1],
    encoding="utf-8")))' "$work/screen" && ok ||
    bad_screen "a line past 60 columns"

# 9. q: status 0, the terminal as it was.
tm send-keys -t wb q
ended 0 q

# 10. The user's inputs: + and - say d_k is theirs; h shows head 2,
#     whose weights are attn's head 2.
gqa="--heads 4 --kv-heads 2 data/examples/gqa/q.csv data/examples/gqa/k.csv data/examples/gqa/v.csv"
# shellcheck disable=SC2086
start "" $gqa
await '^key +scores' || bad_screen "the workbench did not start on files"
key + 'd_k is 1, fixed by your inputs' && ok ||
    bad_screen "+ does not say d_k is fixed"
key h 'head 2 of 4' && ok || bad_screen "h does not show head 2"
# shellcheck disable=SC2086
exp=$("$bin" -s weights $gqa | awk '/^weights, head 2/ { on = 1; next }
    on && /^ / { split($0, k) } on && $1 == "q1" {
	for (i = 2; i <= NF; i++) printf "%s%s=%s", (i > 2 ? " " : ""), k[i - 1], $i
	print ""; exit }')
settle "$exp" && ok ||
    bad_screen "head 2: the screen shows '$got', attn '$exp'"
tm send-keys -t wb q
ended 0 "q on files"

# 10b. Labels holding Unicode format characters (a right-to-left
#     override, the line separator, a BOM) are shown escaped, as every
#     printer shows them: none reaches the terminal, and the rows keep
#     their lines.
printf 'q\342\200\256evil,1,0\nline\342\200\250x,0,1\n\357\273\277bom,1,1\n' \
    >"$work/format.csv"
start "" --self "$work/format.csv"
await '^key +scores' || bad_screen "the workbench did not start on labels"
grep -qF 'q\xE2\x80\xAEev' "$work/screen" &&
    grep -qF 'line\xE2\x80\xA' "$work/screen" &&
    grep -qF '\xEF\xBB\xBFbom ' "$work/screen" && ok ||
    bad_screen "labels with format characters are not shown escaped"
grep -q -e "$(printf '\342\200\256')" -e "$(printf '\342\200\250')" \
    -e "$(printf '\357\273\277')" "$work/screen" &&
    bad_screen "a format character reached the terminal" || ok
tm send-keys -t wb q
ended 0 "q on labels with format characters"

# 11. The screen attn-workbench(1) and attn(1) show is this one: the toy
#     with NO_COLOR after j, p, s and the guess m.
start "NO_COLOR=1"
await '^key +scores' || bad_screen "the workbench did not start"
key j p s '^Predict' || bad_screen "no question for the documents' screen"
key m '^You said' || bad_screen "no answer for the documents' screen"
python3 "$here/workbench-doc.py" "$work/screen" man/attn-workbench.1 man/attn.1 \
    >"$work/doc" 2>&1 && ok || { bad "the documents' screen:"; cat "$work/doc"; }
tm send-keys -t wb q
ended 0 "q after the documents' screen"

# 12. NO_COLOR: shade characters; --color-range row says so.  In the C
#     locale, whose characters are bytes, the screen is UTF-8 still.
start "NO_COLOR=1 LC_ALL=C LANG=C" --color-range row
# the legend, the heatmap's last line: the screen is drawn down to it
await '^0 \[' || bad_screen "the workbench did not start"
grep -q '^0 \[ .*\] each row.s largest weight' "$work/screen" && ok ||
    bad_screen "no shaded legend of --color-range row"
grep -q "$(printf '\033')\[48;5;" "$work/screen.e" &&
    bad_screen "colour with NO_COLOR" || ok
grep -Eq '^▶ the +.*█' "$work/screen" && ok ||
    bad_screen "the largest weight of the row is not a full block"

# 13. Signals: SIGINT (C-c), SIGTERM and a crash's SIGABRT end it with
#     their status and give the terminal back; SIGSEGV too, but for the
#     sanitizer build, whose own handler reports it.
tm send-keys -t wb C-c
ended 130 SIGINT
for sig in TERM ABRT SEGV; do
	case $sig in
	TERM) st=143 ;;
	ABRT) st=134 ;;
	SEGV) st=139
	      ldd "$bin" 2>/dev/null | grep -q libasan && continue ;;
	esac
	start ""
	await '^key +scores' || bad_screen "the workbench did not start"
	kill -$sig "$(cat "$work/pid")"
	ended $st SIG$sig
done

# 14. A terminal it cannot drive (TERM names none, or one without cursor
#     addressing, which would draw the screen onto one line) is a usage
#     error before any input is read: 64 even when the input cannot be
#     opened, its one line naming TERM and the pointer to its help after
#     it, and nothing else on stderr (under the sanitizers, no leak
#     reported).
for t in dumb nosuchterm; do
	start "TERM=$t" --self /nonexistent.csv
	finished 64 "TERM=$t"
	[ "$(sed -n 1p "$work/stderr")" = "attn: attn workbench cannot drive \
this terminal (TERM=$t): it needs one that moves the cursor" ] &&
	    [ "$(sed -n '2,$p' "$work/stderr")" = \
	    "Try 'attn workbench --help'." ] && ok ||
	    bad "TERM=$t: stderr: $(head -c 2000 "$work/stderr")"
	tm kill-session -t wb
done

# 15. Predict mode judges a change no one could see as about the same:
#     at d_k 1024 without scaling each query's weights are all but one
#     key's, and the next query's entropy differs by far less than 0.01
#     nats; a is the answer "about the same", and m is wrong there.
start ""
await '^key +scores' || bad_screen "the workbench did not start"
key + + + + + + + '^scaling on   d_k 1024' || bad_screen "+ does not reach 1024"
# d_k's limits: reached, the note says so and names the key that goes
# back; pressed again, the key does nothing but say it
grep -q "^d_k 1024 is the toy's largest: - halves it\$" "$work/screen" && ok ||
    bad_screen "no note on reaching d_k 1024"
key x 'does nothing here' || bad_screen "x does not clear the note"
key + "^d_k 1024 is the toy's largest: - halves it\$" && ok ||
    bad_screen "+ at d_k 1024 does not say it is the largest"
grep -q '^scaling on   d_k 1024' "$work/screen" && ok ||
    bad_screen "+ at d_k 1024 changes d_k"
# h with the toy's one head says why it does nothing
key h '^h shows the next head: the toy has one \(with --heads your Q K V have more\)$' &&
    ok || bad_screen "h with one head does not say why it does nothing"
key s p '^scaling off.*predict on' || bad_screen "s, p: no predict mode"
key j '^Predict: .*about the same' && ok ||
    bad_screen "predict mode does not offer about the same"
grep -q '  a about the same  ' "$work/screen" && ok ||
    bad_screen "the answers do not name a"
key a '^You said about the same: right \(it moved under 0\.01 nats\)\.$' && ok ||
    bad_screen "a is not right for a change under 0.01 nats"
grep -Eq '^entropy .* nats, effective keys .*: about the same\.$' \
    "$work/screen" && ok || bad_screen "the change is not judged the same"
key j m '^You said more concentrated: not this time \(it moved under 0\.01 nats\)\.$' && ok ||
    bad_screen "m is right for a change under 0.01 nats"
key j f '^You said more spread: not this time \(it moved under 0\.01 nats\)\.$' && ok ||
    bad_screen "f does not answer more spread"
key p 'predict off' || bad_screen "p does not leave predict mode"
key - - - - - - - - - - "^d_k 1 is the toy's smallest: \+ doubles it\$" && ok ||
    bad_screen "no note at d_k 1"
grep -q '^scaling off   d_k 1 ' "$work/screen" && ok ||
    bad_screen "- does not stop at d_k 1"
tm send-keys -t wb q
ended 0 "q after about the same"

# 16. The heatmap's key labels take the room there is: whole where the
#     columns fit, else cut to the cells' width and marked cut (~), as
#     the labels of the rows are past 16 columns.
start "NO_COLOR=1" --query-labels there,kitten,a_label_longer_than_sixteen
await '^key +scores' || bad_screen "the workbench did not start"
heads() { awk '/^weights +\[T x S/ { getline; print; exit }' "$work/screen"; }
heads | grep -Eq '^ +there +kitten +a_label_longer_~$' && ok ||
    bad_screen "the heatmap's labels are not whole (cut past 16): $(heads)"
tm resize-window -t wb -x 56 -y 24
await '^ +there +kitten +a_label_lo~$' && ok ||
    bad_screen "at 56 columns the labels are not cut to the cells: $(heads)"
tm send-keys -t wb q
ended 0 "q after the labels"

# 17. A short or narrow window: the query's key rows give way last.  At
#     80 x 14 and 40 x 12 every key row of the toy shows with its
#     weight; a heatmap shows only with a row of it; at 50 columns the
#     line of settings drops whole settings, never cutting one.  Below
#     the size of one key row the screen says "window too small (needs
#     W x H)", and W x H is exactly that size: it shows a key row, and a
#     column or a line less does not.  After a resize x is pressed
#     until the screen is the one drawn for the new size (the pane may
#     resize after tmux says so, and show lines it had before).
start "NO_COLOR=1"
await '^key +scores' || bad_screen "the workbench did not start"
title='attn workbench: the toy, Q, K = columns 1-8 of attn gen 3x1024 --seed 1, 2'
# sized W H: the pane made W x H, then x until the screen is drawn for
# it: the title cut at W first, x's note and the keys last
sized() {
	tm resize-window -t wb -x "$1" -y "$2"
	i=0
	while [ $i -lt 100 ]; do
		tm send-keys -t wb x
		sleep 0.2
		capture
		[ "$(sed -n 1p "$work/screen")" = "$(printf %s "$title" |
		    cut -c "1-$1" | sed 's/ *$//')" ] &&
		    sed -n "$(($2 - 1))p" "$work/screen" | grep -q 'does nothing' &&
		    sed -n "$2p" "$work/screen" | grep -q 'q quit$' && return 0
		i=$((i + 1))
	done
	return 1
}
# resize W H ERE: the pane made W x H, then await ERE (which the screen
# before does not show)
resize() {
	tm resize-window -t wb -x "$1" -y "$2"
	await "$3"
}
for size in "80 14" "40 12"; do
	# shellcheck disable=SC2086
	sized $size || bad_screen "at $size: not drawn for the size"
	grep -Eq '^sat +[-0-9]' "$work/screen" ||
	    bad_screen "at $size: no row of sat"
	# shellcheck disable=SC2086
	same "at $size" the $toy $q8
	if grep -q '^weights +\[T x S' "$work/screen"; then
		grep -q '^▶ the' "$work/screen" && ok ||
		    bad_screen "at $size: a heatmap without its rows"
	fi
done
sized 50 24 || bad_screen "at 50 x 24: not drawn for the size"
sed -n 2p "$work/screen" | grep -Eq '^scaling on( +d_k 8)?( +causal off)?( +head 1( of 1)?)?( +predict off)? *$' &&
    ok || bad_screen "at 50 columns the settings are cut: $(sed -n 2p "$work/screen")"
resize 20 4 'window too small' || bad_screen "no 'window too small' at 20 x 4"
need=$(tr '\n' ' ' <"$work/screen" |
    sed -n 's/.*window too small *(needs \([0-9]*\) x \([0-9]*\)).*/\1 \2/p')
if [ -z "$need" ]; then
	bad_screen "window too small, but not what size it needs"
else
	ok
	set -- $need
	w=$1 h=$2
	resize "$w" "$h" '^(the|cat|sat) +[-0-9]' && ok ||
	    bad_screen "at the size it needs, $w x $h, no key row"
	resize $((w - 1)) "$h" 'window too small' && ok ||
	    bad_screen "a column less than it needs, $((w - 1)) x $h, is not too small"
	resize "$w" "$h" '^(the|cat|sat) +[-0-9]' ||
	    bad_screen "at $w x $h again, no key row"
	resize "$w" $((h - 1)) 'window too small' && ok ||
	    bad_screen "a line less than it needs, $w x $((h - 1)), is not too small"
fi
tm send-keys -t wb q
ended 0 "q after a small window"

# 18. The vectors and the spread: the query's row of Q and each key's of
#     K (and V) as the table writes them, the first columns of the toy's
#     files; at d_k 16 the first 8 of each are those of d_k 8, and the
#     spread line gives the standard deviation of the head's scores
#     (and its ratio to sqrt(d_k)) that attn -s scores gives.
start "NO_COLOR=1"
await '^key +scores' || bad_screen "the workbench did not start"
# vecs: the lines of the vectors, "q the n n ..." and "k the n n ... v n n"
vecs() { grep -E '^[qk] (the|cat|sat) ' "$work/screen"; }
vecs >"$work/vec8"
# vec_check D: the screen's vectors are the files' at d_k D to 4 digits
vec_check() {
	python3 - "$work/screen" "$work/g1.csv" "$work/g2.csv" "$1" <<'PY'
import sys
scr, g1, g2, d = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
rows = lambda f: [[float(x) for x in l.split(",")] for l in open(f)]
Q, K = rows(g1), rows(g2)
V = [[1, 0], [0, 1], [1, 1]]
names = ["the", "cat", "sat"]
seen = 0
for line in open(scr, encoding="utf-8"):
    f = line.split()
    if len(f) < 3 or f[0] not in "qk" or f[1] not in names:
        continue
    i = names.index(f[1])
    nums, rest = f[2:], []
    if "v" in nums:
        rest = nums[nums.index("v") + 1:]
        nums = nums[:nums.index("v")]
    more = nums[-1:] == ["\u2026"]
    nums = [float(x) for x in nums if x != "\u2026"]
    want = (Q if f[0] == "q" else K)[i][:d]
    if not nums or more != (len(nums) < d) or any(
            abs(a - b) > 5e-4 * abs(b) + 1e-12 for a, b in zip(nums, want)):
        sys.exit("%s %s: %s, not %s" % (f[0], f[1], nums, want[:len(nums)]))
    if f[0] == "k" and [float(x) for x in rest] != V[i]:
        sys.exit("v %s: %s" % (f[1], rest))
    seen += 1
sys.exit(0 if seen == 4 else "%d vector lines, not 4" % seen)
PY
}
vec_check 8 && ok || bad_screen "the vectors at d_k 8 are not the toy's"
# spread_check D: the spread line's sd, ratio and scaled sd, from attn's
# scores at d_k D
spread_check() {
	"$bin" -s scores,scaled -f csv "$work/q$1.csv" "$work/k$1.csv" \
	    "$work/v.csv" >"$work/sc.csv" || return 1
	python3 - "$work/screen" "$work/sc.csv" "$1" <<'PY'
import math, re, sys
scr, csv, d = sys.argv[1], sys.argv[2], int(sys.argv[3])
text = open(scr, encoding="utf-8").read()
m = re.search(r"^spread of the head's scores: sd (\S+) = (\S+) sqrt\(d_k\); "
              r"of scaled: sd (\S+)$", text, re.M)
if not m:
    sys.exit("no spread line")
vals = [[float(x) for x in l.split(",")] for l in open(csv)
        if re.match(r"^-?[0-9]", l)]
sd = lambda xs: math.sqrt(sum((x - sum(xs) / len(xs)) ** 2 for x in xs)
                          / len(xs))
scores, scaled = sum(vals[:3], []), sum(vals[3:6], [])
want = [sd(scores), sd(scores) / math.sqrt(d), sd(scaled)]
got = [float(x) for x in m.groups()]
if any(abs(a - b) > 5e-4 * b for a, b in zip(got, want)):
    sys.exit("spread %s, not %s" % (got, want))
PY
}
spread_check 8 && ok || bad_screen "the spread at d_k 8 is not attn's"
sed -n '/^spread/p' "$work/screen" >"$work/spread8"
key + '^scaling on   d_k 16' || bad_screen "+ does not double d_k"
vec_check 16 && ok || bad_screen "the vectors at d_k 16 are not the toy's"
vecs >"$work/vec16"
# the vectors' first columns stay: the first 7 numbers of each line
# (its fields 3 to 9; 80 columns show 7 at d_k 16)
first7() { awk '{ print $1, $2, $3, $4, $5, $6, $7, $8, $9 }' "$1"; }
[ "$(wc -l <"$work/vec8")" -eq 4 ] &&
    [ "$(first7 "$work/vec8")" = "$(first7 "$work/vec16")" ] &&
    ok || bad_screen "d_k 16 does not keep the vectors' first columns"
spread_check 16 && ok || bad_screen "the spread at d_k 16 is not attn's"
[ "$(sed -n '/^spread/p' "$work/screen")" != "$(cat "$work/spread8")" ] &&
    ok || bad_screen "the spread line does not change with d_k"
tm send-keys -t wb q
ended 0 "q after the vectors"

# 19. Step mode (t): the vectors first, then one stage more at each n
#     (or right), back at each b (or left), each step's line naming the
#     stage and its formula; the weights, their entropy and heatmap wait
#     for step 4, the output for step 5; at either end a note says which
#     key goes on, and t shows every stage again.
start "NO_COLOR=1"
await '^key +scores' || bad_screen "the workbench did not start"
key n '^n and b move through the stages in step mode: t starts it$' && ok ||
    bad_screen "n outside step mode does not say what it is for"
# cols: the fields of the key rows, "the:N cat:N sat:N"
cols() {
	awk '/^key( |$)/ { on = 1; next } /^entropy/ { on = 0 }
	    on { printf "%s%s:%d", (n++ ? " " : ""), $1, NF } END { print "" }' \
	    "$work/screen"
}
key t '^step 1 of 5: the vectors, q of the query, k and v of each key$' &&
    ok || bad_screen "t does not start step mode at the vectors"
[ "$(cols)" = "the:1 cat:1 sat:1" ] && grep -q '^q the ' "$work/screen" &&
    ok || bad_screen "step 1 shows more than the vectors: $(cols)"
grep -q '^weights   \[T x S = 3x3\]   (step 4)$' "$work/screen" &&
    ! grep -Eq '^▶ the +[^ ]' "$work/screen" && ok ||
    bad_screen "step 1 shows the weights' heatmap"
key n '^step 2 of 5: scores = Q K\^T$' && ok || bad_screen "n does not reach step 2"
[ "$(cols)" = "the:2 cat:2 sat:2" ] && ok ||
    bad_screen "step 2 does not show the scores alone: $(cols)"
key Right '^step 3 of 5: scaled = scores \* scale$' && ok ||
    bad_screen "Right does not reach step 3"
[ "$(cols)" = "the:3 cat:3 sat:3" ] && grep -q '^spread of' "$work/screen" &&
    ok || bad_screen "step 3 does not show scaled and the spread: $(cols)"
grep -q '^output = weights V .*:  step 5$' "$work/screen" && ok ||
    bad_screen "step 3 shows the output"
key n '^step 4 of 5: weights = softmax\(scaled\), row by row$' && ok ||
    bad_screen "n does not reach step 4"
# shellcheck disable=SC2086
same "at step 4" the $toy $q8
grep -q '^entropy [0-9.]* nats' "$work/screen" && ok ||
    bad_screen "step 4 does not show the entropy"
key n '^step 5 of 5: output = weights V$' && ok || bad_screen "n does not reach step 5"
grep -Eq '^output = weights V .*:  [-0-9.]+  [-0-9.]+$' "$work/screen" && ok ||
    bad_screen "step 5 does not show the output"
key n '^the last step: b goes back, t shows every stage$' && ok ||
    bad_screen "n at the last step does not say so"
key b '^step 4 of 5' && ok || bad_screen "b does not go back"
key Left Left Left '^step 1 of 5' && ok || bad_screen "Left does not go back to step 1"
key b '^the first step: n goes on, t shows every stage$' && ok ||
    bad_screen "b at the first step does not say so"
key t '^↑↓ query  s scale' && ok || bad_screen "t does not leave step mode"
grep -q '^step ' "$work/screen" && bad_screen "a step line after t" || ok
# shellcheck disable=SC2086
same "after step mode" the $toy $q8
tm send-keys -t wb q
ended 0 "q after step mode"

visual_end
