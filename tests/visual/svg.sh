#!/bin/sh
# svg.sh ATTN - --svg as a viewer sees it: each picture is well-formed
# XML (xmllint), rsvg-convert (librsvg, as GNOME and many converters
# use) renders it to PNG, and svg-check.py reads the PNG: its size, and
# that weights 1 and 0 and masked cells differ in colour.
set -u

bin=$1
case $bin in /*) ;; *) bin=$(pwd)/$bin ;; esac
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
for tool in xmllint rsvg-convert python3; do
	if ! command -v $tool >/dev/null 2>&1; then
		echo "svg: $tool is missing (make test-deps installs it)"
		exit 1
	fi
done
work=$(mktemp -d) || exit 1
trap 'rm -rf "$work"' EXIT
trap 'exit 130' INT TERM
cd "$top" || exit 1

# A weight of exactly 1 and one of exactly 0 (exp(-1000) underflows),
# and labels that XML must escape.
cat >"$work/sharp.json" <<'JSON'
{"Q": [[1, 0], [0, 1]], "K": [[1, 0], [0, 1]], "V": [[1], [2]],
 "labels": {"query": ["<q>", "q&2"], "key": ["\"k1\"", "k'2"]}}
JSON

pass=0
fail=0
# picture NAME ATTN-ARGS...: draw, lint, render, look.
picture() {
	name=$1
	shift
	if ! "$bin" --svg "$work/$name.svg" "$@" 2>"$work/err"; then
		echo "FAIL svg $name: attn failed: $(cat "$work/err")"
		fail=$((fail + 1))
		return
	fi
	if xmllint --noout "$work/$name.svg" 2>"$work/err" &&
	    rsvg-convert "$work/$name.svg" -o "$work/$name.png" \
	    2>>"$work/err" &&
	    python3 "$here/svg-check.py" "$work/$name.svg" "$work/$name.png" \
	    >"$work/out" 2>>"$work/err"; then
		pass=$((pass + 1))
	else
		echo "FAIL svg $name:"
		cat "$work/out" "$work/err" | sed 's/^/    /'
		fail=$((fail + 1))
	fi
}

picture sharp --scale 1000 "$work/sharp.json"
# the check must see both colours in this one
grep -q '^ok   weights 1 and 0 differ in colour$' "$work/out" &&
    pass=$((pass + 1)) || {
	echo "FAIL svg sharp: no cells of weight 1 and 0 compared"
	fail=$((fail + 1))
}
picture worked-example data/examples/apple-cheese.json
picture masked --causal -m data/examples/t3s4-mask.csv \
    data/examples/t3s4.json
grep -q '^ok   a masked cell is neither' "$work/out" &&
    pass=$((pass + 1)) || {
	echo "FAIL svg masked: no masked cell looked at"
	fail=$((fail + 1))
}
picture heads --heads 4 --kv-heads 2 data/examples/gqa/q.csv \
    data/examples/gqa/k.csv data/examples/gqa/v.csv
picture batches --no-scale data/examples/batch.json
"$bin" gen 20x4 --seed 1 >"$work/q.txt"
"$bin" gen 30x4 --seed 2 >"$work/k.txt"
picture large --causal "$work/q.txt" "$work/k.txt" "$work/k.txt"

echo "svg: $pass passed, $fail failed"
[ $fail -eq 0 ] && [ $pass -gt 0 ]
