#!/bin/sh
# html.sh ATTN - -f html as a person sees it, in headless Chromium
# (Debian's chromium, driven by html-check.py over the DevTools protocol):
# no console errors, nothing fetched, a screenshot, each number's
# arithmetic on hover and on keyboard focus, readable at a phone's width;
# and the workbench (html-bench.py), by keyboard, against attn's own
# pages for the options its controls stand for, on every variant the
# page shows, and off, with its note, where the page cannot recompute.
# Screenshots stay in $ATTN_SHOTS when that names a directory.
set -u

name=html
. "$(dirname "$0")/lib.sh"
visual_start python3 chromium

# page NAME 'ATTN-ARGS' CHECK-ARGS...: make the page with attn -f html
# ATTN-ARGS (split at blanks: paths here have none), look at it.
page() {
	pg=$1
	attn_args=$2
	shift 2
	mkdir -p "$work/$pg"
	# shellcheck disable=SC2086
	if ! "$bin" -f html $attn_args >"$work/$pg/page.html" \
	    2>"$work/err"; then
		bad "$pg: attn failed: $(cat "$work/err")"
		return
	fi
	if python3 "$here/html-check.py" "$work/$pg/page.html" \
	    "$work/$pg" "$@" >"$work/out" 2>&1; then
		ok
	else
		bad "$pg:"
		sed 's/^/    /' "$work/out"
	fi
	if [ -n "${ATTN_SHOTS:-}" ] && [ -d "$ATTN_SHOTS" ]; then
		for f in desktop hover phone; do
			cp "$work/$pg/$f.png" "$ATTN_SHOTS/$pg-$f.png"
		done
		cp "$work/$pg/page.html" "$ATTN_SHOTS/$pg.html"
	fi 2>/dev/null
}

page gallery-two-heads '--stats --heads 2 data/examples/two-heads.json' \
    --hover '#weights .block:nth-child(2) td[data-a]' 'weights, head 2, where, here:' \
    --tab 'scores, head 1, where, here:'
page worked-example data/examples/apple-cheese.json \
    --hover '#weights td[data-a]' 'apple: 1 / 1.4931 = 0.6698' \
    --hover '#output td[data-a]' 'query[1] = 0.6698 x 10 + 0.3302 x 0 = 6.698' \
    --tab 'query.apple = 1x1 + 0x0 = 1'
page masked '--causal -m data/examples/t3s4-mask.csv data/examples/t3s4.json' \
    --hover '#weights td.masked[data-a]' 'k2: masked' \
    --hover '#weights tr:nth-child(2) td[data-a]' 'k1: 0.49307 / 1.4931 = 0.3302' \
    --tab 'q1.k1 = 1x1 + 0x0 = 1'
page heads-and-stats '--stats --heads 4 --kv-heads 2 data/examples/gqa/q.csv
    data/examples/gqa/k.csv data/examples/gqa/v.csv' \
    --hover '#weights table:nth-of-type(1) td[data-a]' 'q1.k1 = 1x1 = 1' \
    --tab 'q1.k1 = 1x1 = 1'
"$bin" gen 40x4 --seed 1 >"$work/q.txt"
"$bin" gen 40x4 --seed 2 >"$work/k.txt"
page too-large-for-arithmetic "$work/q.txt $work/k.txt $work/k.txt" \
    --no-arithmetic

# The workbench, each case --case NAME ATTN-ARGS (html-bench.py).  T = 6
# queries over S = 4 keys, bottom-right, causal: q1 and q2 see no key.
d=data/examples
"$bin" gen 6x2 --seed 3 >"$work/q6.txt"
# a slope a batch of batch.json's one head, as a kernel's B x H alibi_slopes
echo '[[0.5], [2]]' >"$work/slopes-2x1.json"
"$bin" gen 4x2 --seed 4 >"$work/k4.txt"
mkdir -p "$work/bench"
python3 "$here/html-bench.py" "$bin" "$work/bench" \
    --case worked-example $d/apple-cheese.json \
    --case mask-bias-stats-arithmetic --stats -e --arithmetic \
	-m $d/t3s4-mask.csv --bias $d/t3s4-bias.json $d/t3s4.json \
    --case gqa-stats --stats --heads 4 --kv-heads 2 $d/gqa/q.csv \
	$d/gqa/k.csv $d/gqa/v.csv \
    --case batches-3d-mask --stats $d/batch.json \
    --case color-range-row --color-range row --stats $d/gqa/q.csv \
	$d/gqa/k.csv $d/gqa/v.csv --heads 4 --kv-heads 2 \
    --case color-range-max --color-range max $d/t3s4.json \
    --case color-range-chosen-for-a-narrow-band --self \
	$d/raschka/inputs.csv \
    --case sinks-alibi-softcap-query --sinks $d/sink0.txt --alibi \
	--softcap 5 --align bottom-right --query 3,1 -e --arithmetic \
	$d/t3s4.json \
    --case scale-given-causal-window --scale 1/8 --causal --window 1,0 \
	--masked-rows uniform -d 3 $d/t3s4.json \
    --case bottom-right-rows-with-no-key --stats --align bottom-right \
	--masked-rows nan -e --arithmetic "$work/q6.txt" "$work/k4.txt" \
	"$work/k4.txt" \
    --case lse-base-2-masked-inf-rows-with-no-key --lse-base 2 \
	--lse-masked inf --align bottom-right -e --arithmetic \
	"$work/q6.txt" "$work/k4.txt" "$work/k4.txt" \
    --case packed-sequences-alibi-uniform --stats --alibi \
	--align bottom-right --masked-rows uniform --cu-seqlens-q 0,2,2,6 \
	--cu-seqlens-k 0,1,2,4 --seqused-k 1,1,2 -e --arithmetic \
	"$work/q6.txt" "$work/k4.txt" "$work/k4.txt" \
    --case alibi-slopes-by-batch --alibi-slopes "$work/slopes-2x1.json" \
	--causal -e --arithmetic $d/batch.json \
    --case bshd-no-arithmetic --layout bshd $d/kernel/q.npy \
	$d/kernel/k.npy $d/kernel/v.npy \
    --case off-rope --off --rope --rope --self $d/rope/same-row.csv \
    --case off-proj --off --proj --proj $d/raschka/sa_v1.json \
	$d/raschka/inputs.csv \
    --case off-emulate --off --emulate --emulate fp16 $d/t3s4.json \
    --case off-grad --off --grad --grad $d/t3s4-do.csv $d/t3s4.json \
    >"$work/bench.out" 2>&1
status=$?
# a line a case, counted; a failing case with its checks
while IFS= read -r line; do
	case $line in
	"PASS case "*) ok; shown=0 ;;
	"FAIL case "*) bad "bench: ${line#FAIL case }"; shown=1 ;;
	"    "*) [ "$shown" -eq 1 ] && printf '%s\n' "$line" ;;
	*) bad "bench: $line" ;;
	esac
done <"$work/bench.out"
if [ $status -ne 0 ] && ! grep -q '^FAIL case ' "$work/bench.out"; then
	bad "html-bench.py exited $status"
fi
if [ -n "${ATTN_SHOTS:-}" ] && [ -d "$ATTN_SHOTS" ]; then
	cp "$work/bench"/*.png "$ATTN_SHOTS/" 2>/dev/null
fi

visual_end
