#!/bin/sh
# alibi.sh ATTN - attn --check of FlashAttention-2's softmax_lse under
# causal ALiBi, computed for the test in NumPy (alibi_lse.py, which says
# how): attn's lse follows the relative form, -slope * |i + S - T - j|,
# which the same script's lse-relative passes; FlashAttention-2's, which
# adds slope * j, is off by slope * (i + S - T) a row, and fails with a
# hint that names that shift, in natural log and under --lse-base 2.
#
# Without NumPy the suite is skipped with a notice, as grad.sh is.
set -u
. "$(dirname "$0")/../harness.sh"
. "$here/../python.sh"
if [ -z "$py" ]; then
	echo "alibi-kernel: SKIPPED: no Python with NumPy (Debian: apt-get" \
	    "install python3-numpy)"
	exit 0
fi

# case NAME FILE STATUS [OPTION..]: FILE checked as lse under --like
# flash --causal --alibi; STATUS 0 wants the pass line, 1 the FAIL line
# and the hint of FlashAttention-2's shift.
case_() {
	name=$1 file=$2 want=$3
	shift 3
	why=
	(cd "$work" && "$bin" --like flash --causal --alibi "$@" --check \
	    "$file" -s lse q.npy k.npy v.npy >report 2>err)
	st=$?
	[ "$st" = "$want" ] || why="exit $st, want $want"
	[ -s "$work/err" ] && why="$why; stderr: $(cat "$work/err")"
	if [ "$want" = 0 ]; then
		grep -q '^pass$' "$work/report" || why="$why; no pass line"
	else
		grep -q "^  hint: $file is attn's lse plus slope_h \* (i + S - T), the query's position: FlashAttention-2's lse under causal ALiBi" \
		    "$work/report" || why="$why; no hint of the shift"
	fi
	verdict "$name" "$why"
	[ -n "$why" ] && sed 's/^/    /' "$work/report" 2>/dev/null
}

if ! "$py" "$here/alibi_lse.py" "$work" 2>"$work/err"; then
	verdict "alibi_lse.py" "it failed: $(cat "$work/err")"
else
	case_ "the relative form passes" lse-relative.npy 0
	case_ "FlashAttention-2's lse fails, naming the shift" lse.npy 1
	# the same in log2, as the kernel would store it with --lse-base 2
	"$py" -c 'import numpy as np, sys
for n in ("lse", "lse-relative"):
    np.save(sys.argv[1] + "/" + n + "2.npy",
            np.load(sys.argv[1] + "/" + n + ".npy") / np.log(2))' "$work"
	case_ "the relative form in log2 passes" lse-relative2.npy 0 \
	    --lse-base 2
	case_ "FlashAttention-2's lse in log2 fails, naming the shift" \
	    lse2.npy 1 --lse-base 2
fi

tally alibi-kernel
