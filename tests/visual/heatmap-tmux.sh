#!/bin/sh
# heatmap-tmux.sh ATTN - --heatmap as a person sees it in a terminal.
#
# tmux runs attn in a pane of a known size, as a terminal would (stdout a
# tty, TERM set by tmux, the width from the pty), and capture-pane reads
# the screen: the text with -p, the colours with -e.  Each run signals a
# tmux channel when attn is done (wait-for), so nothing waits on a clock;
# `timeout` only guards against a hang.  The server runs on its own
# socket in a temporary directory and is killed at the end.
set -u

name=heatmap-tmux
. "$(dirname "$0")/lib.sh"
cleanup='tmux -L attn kill-server >/dev/null 2>&1'
visual_start tmux
TMUX_TMPDIR=$work
export TMUX_TMPDIR
unset TMUX

# 3 queries and 64 keys, for a terminal narrower than the grid.
awk 'BEGIN {
	printf "{\"Q\": [[1, 0], [0, 1], [1, 1]], \"K\": ["
	for (j = 0; j < 64; j++)
		printf "%s[%d, %d]", j ? ", " : "", j % 3, j % 5
	printf "], \"V\": ["
	for (j = 0; j < 64; j++)
		printf "%s[%d]", j ? ", " : "", j
	print "]}"
}' >"$work/wide.json"

# bad with the screen: what went wrong, and what it looked like.
bad_screen() {
	bad "$1"
	sed 's/^/    /' "$work/screen" | head -30
}

# show COLUMNS ENV ARGS...: run attn with ARGS in a pane COLUMNS wide,
# with the environment settings ENV (NO_COLOR and COLORTERM are unset
# first), and capture the screen into $work/screen (text), screen.e
# (with colours) and screen.j (wrapped lines joined).
show() {
	cols=$1
	env=$2
	shift 2
	printf '%s\n' "$@" >"$work/args"
	cat >"$work/run.sh" <<RUN
unset NO_COLOR COLORTERM COLUMNS LINES
$env
export NO_COLOR COLORTERM 2>/dev/null
cd "$top"
tr '\n' '\0' <"$work/args" | xargs -0 "$bin" 2>/dev/null
echo "status \$?"
tmux -L attn wait-for -S attn-done
exec cat
RUN
	tmux -L attn -f /dev/null new-session -d -s heat -x "$cols" -y 50 \
	    "sh $work/run.sh"
	if ! timeout 60 tmux -L attn wait-for attn-done; then
		bad "attn did not finish in the pane"
	fi
	tmux -L attn capture-pane -t heat -p >"$work/screen"
	tmux -L attn capture-pane -t heat -p -e >"$work/screen.e"
	# -J keeps trailing blanks, which -p drops
	tmux -L attn capture-pane -t heat -p -J | sed 's/ *$//' \
	    >"$work/screen.j"
	tmux -L attn kill-session -t heat
}

esc=$(printf '\033')

# 1. On a terminal: colour backgrounds (256 colours), labels, a legend,
#    no shade characters, masked cells as dots.
show 80 "" --heatmap -m data/examples/t3s4-mask.csv data/examples/t3s4.json
grep -q '^status 0$' "$work/screen" && ok || bad_screen "attn failed on a terminal"
grep -q "${esc}\[48;5;[0-9]*m" "$work/screen.e" && ok ||
    bad_screen "no 256-colour backgrounds on a terminal"
grep -q '^    k1 k2 k3 k4' "$work/screen" && ok || bad_screen "no key labels"
grep -q '^q3 ············$' "$work/screen" && ok ||
    bad_screen "the masked row is not dots"
grep -q '·· masked$' "$work/screen" && ok || bad_screen "no legend"
grep -q '[░▒▓█]' "$work/screen" && bad_screen "shades on a colour terminal" || ok

# 2. COLORTERM=truecolor: 24-bit backgrounds; the weight 1 cell of the
#    legend is viridis's yellow.
show 80 "COLORTERM=truecolor" --heatmap data/examples/apple-cheese.json
grep -q "${esc}\[48;2;253;231;37m" "$work/screen.e" && ok ||
    bad_screen "no 24-bit colour with COLORTERM=truecolor"

# 3. NO_COLOR, and --color never: shade characters, no colour at all.
for env in "NO_COLOR=1" ""; do
	if [ -n "$env" ]; then
		show 80 "$env" --heatmap --self data/examples/tokens.csv
	else
		show 80 "" --heatmap --color never --self data/examples/tokens.csv
	fi
	grep -q '^cat ░░░░▓▓▓▓░░░░' "$work/screen" && ok ||
	    bad_screen "no shades with ${env:---color never}"
	grep -q "${esc}\[48;" "$work/screen.e" &&
	    bad "colour with ${env:---color never}" || ok
done

# 4. A pane 40 columns wide and a grid of 64 keys: the first and last keys
#    around a column of ..., and no line wraps (joining wrapped lines
#    changes nothing).
show 40 "" --heatmap "$work/wide.json"
grep -q '…' "$work/screen" && ok || bad_screen "64 keys at 40 columns not summarised"
cmp -s "$work/screen" "$work/screen.j" && ok || bad_screen "a line wrapped at 40 columns"
grep -q '(8 of 64 keys, 3 of 3 queries shown)' "$work/screen" && ok ||
    bad_screen "no note of the keys left out"

# 5. The same at 300 columns (the grid is 3 + 64 x 4 = 259 wide): every
#    key, nothing left out.
show 300 "" --heatmap "$work/wide.json"
grep -q '…' "$work/screen" && bad_screen "summarised at 300 columns" || ok
cmp -s "$work/screen" "$work/screen.j" && ok ||
    bad_screen "a line wrapped at 300 columns"

# 6. -o FILE from a terminal: the file gets shades, not escapes.
show 80 "" --heatmap -o "$work/out.txt" data/examples/apple-cheese.json
grep -q "$esc" "$work/out.txt" && bad_screen "escapes in -o FILE" || ok
grep -q '^query ▓▓░░$' "$work/out.txt" && ok || bad_screen "no shades in -o FILE"

# 7. --color-range row on a terminal: Raschka's near-uniform row "with"
#    (0.13 to 0.21) is one or two of the nine colours on the 0 to 1
#    scale, and at least four when each row spans 0 to its largest;
#    without the option the range is chosen so, and the legend says so.
colours() {
	grep 'with ' "$work/screen.e" | grep -o "${esc}\\[48;5;[0-9]*m" |
	    sort -u | wc -l
}
show 80 "" --heatmap --no-scale --self data/examples/raschka/inputs.csv
chosen=$(colours)
grep -q '^(chosen: every weight lies in 0.09881 to 0.2379)$' "$work/screen" &&
    [ "$chosen" -ge 4 ] && ok ||
    bad_screen "without --color-range the row 'with' has $chosen colours, or no legend says why"
show 80 "" --heatmap --color-range unit --no-scale --self \
    data/examples/raschka/inputs.csv
unit=$(colours)
show 80 "" --heatmap --color-range row --no-scale --self \
    data/examples/raschka/inputs.csv
row=$(colours)
[ "$unit" -le 2 ] && [ "$row" -ge 4 ] && ok ||
    bad_screen "the row 'with' has $unit colours on 0..1, $row with --color-range row"
grep -q "each row's largest weight" "$work/screen" && ok ||
    bad_screen "the legend does not name --color-range row's scale"

visual_end
