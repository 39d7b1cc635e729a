#!/bin/sh
# svg.sh ATTN - --svg as a viewer sees it: each picture is well-formed
# XML (xmllint), rsvg-convert (librsvg, as GNOME and many converters
# use) renders it to PNG, and svg-check.py reads the PNG: its size, and
# that weights 1 and 0 and masked cells differ in colour.
set -u

name=svg
. "$(dirname "$0")/lib.sh"
visual_start xmllint rsvg-convert python3

# A weight of exactly 1 and one of exactly 0 (exp(-1000) underflows),
# and labels that XML must escape.
cat >"$work/sharp.json" <<'JSON'
{"Q": [[1, 0], [0, 1]], "K": [[1, 0], [0, 1]], "V": [[1], [2]],
 "labels": {"query": ["<q>", "q&2"], "key": ["\"k1\"", "k'2"]}}
JSON

# picture NAME ATTN-ARGS...: draw, lint, render, look.
picture() {
	pic=$1
	shift
	if ! "$bin" --svg "$work/$pic.svg" "$@" 2>"$work/err"; then
		bad "$pic: attn failed: $(cat "$work/err")"
		return
	fi
	if xmllint --noout "$work/$pic.svg" 2>"$work/err" &&
	    rsvg-convert "$work/$pic.svg" -o "$work/$pic.png" \
	    2>>"$work/err" &&
	    python3 "$here/svg-check.py" "$work/$pic.svg" "$work/$pic.png" \
	    >"$work/out" 2>>"$work/err"; then
		ok
	else
		bad "$pic:"
		cat "$work/out" "$work/err" | sed 's/^/    /'
	fi
}

picture sharp --scale 1000 "$work/sharp.json"
# the check must see both colours in this one
grep -q '^ok   weights 1 and 0 differ in colour$' "$work/out" && ok ||
    bad "sharp: no cells of weight 1 and 0 compared"
picture worked-example data/examples/apple-cheese.json
picture masked --causal -m data/examples/t3s4-mask.csv \
    data/examples/t3s4.json
grep -q '^ok   a masked cell is neither' "$work/out" && ok ||
    bad "masked: no masked cell looked at"
picture heads --heads 4 --kv-heads 2 data/examples/gqa/q.csv \
    data/examples/gqa/k.csv data/examples/gqa/v.csv
picture batches --no-scale data/examples/batch.json
"$bin" gen 20x4 --seed 1 >"$work/q.txt"
"$bin" gen 30x4 --seed 2 >"$work/k.txt"
picture large --causal "$work/q.txt" "$work/k.txt" "$work/k.txt"

# --color-range: Raschka's weights without scaling are near uniform (0.10
# to 0.24).  On the 0 to 1 scale a row's cells are a few neighbouring
# purples; each row 0 to its own largest spreads the row over the scale,
# its largest weight yellow; 0 to the largest weight of all (0.2379, not
# in the row "with", whose largest is 0.2074) lies between.  The title
# says which.
raschka="--no-scale --self data/examples/raschka/inputs.csv"
for range in unit max row; do
	# shellcheck disable=SC2086
	picture "range-$range" --color-range $range $raschka
	python3 "$here/svg-range.py" "$work/range-$range.svg" \
	    "$work/range-$range.png" with >"$work/range-$range" 2>&1 ||
	    bad "range-$range: $(cat "$work/range-$range")"
done
spread() { sed -n 's/^spread //p' "$work/range-$1"; }
[ "$(spread unit)" -lt 60 ] && ok ||
    bad "unit: the row 'with' spreads $(spread unit), not under 60"
[ "$(spread row)" -gt 150 ] && [ "$(spread row)" -gt "$(spread max)" ] &&
    [ "$(spread max)" -gt "$(spread unit)" ] && ok ||
    bad "spreads of the row 'with': unit $(spread unit), max $(spread max), row $(spread row)"
grep -qx 'top-yellow' "$work/range-row" && ok ||
    bad "row: the row's largest weight is not yellow: $(cat "$work/range-row")"
grep -qx 'top-yellow' "$work/range-max" &&
    bad "max: the largest weight of the row 'with' is yellow" || ok
grep -q '<title>.*colours 0 to each row.s largest weight</title>' \
    "$work/range-row.svg" && ok || bad "row: the title does not say so"
grep -q '<title>.*colours 0 to 0.2379, the largest weight</title>' \
    "$work/range-max.svg" && ok || bad "max: the title does not say so"
grep -q 'colours 0 to' "$work/range-unit.svg" &&
    bad "unit: the title names a range" || ok

# Without --color-range, weights in a narrow band (Raschka's with the
# scaling, 0.1243 to 0.2070) are drawn by row as if row were given: the
# row's largest weight yellow, the row spread over the scale; the title
# says the range was chosen and why.  The causal picture's weights span
# 0 to 1: drawn 0 to 1, no range in the title.
picture range-chosen --self data/examples/raschka/inputs.csv
python3 "$here/svg-range.py" "$work/range-chosen.svg" \
    "$work/range-chosen.png" with >"$work/range-chosen" 2>&1 ||
    bad "range-chosen: $(cat "$work/range-chosen")"
grep -qx 'top-yellow' "$work/range-chosen" && [ "$(spread chosen)" -gt 150 ] &&
    ok || bad "chosen: the row 'with' is not drawn by row: $(cat "$work/range-chosen")"
grep -q '<title>.*colours 0 to each row.s largest weight (chosen: every weight lies in 0.1243 to 0.2070)</title>' \
    "$work/range-chosen.svg" && ok || bad "chosen: the title does not say why"
grep -q 'colours 0 to' "$work/large.svg" &&
    bad "large: the title names a range for weights from 0 to 1" || ok

visual_end
