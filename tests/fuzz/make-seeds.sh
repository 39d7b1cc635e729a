#!/bin/sh
# make-seeds.sh - (re)write the seed corpora of fuzz_json, fuzz_text and
# fuzz_jsonl in
# tests/fuzz/corpus/ from data/examples/, tests/cli/ inputs and small
# hand-written hostile cases.  Run from the top of the tree.
#
# A seed is one selector byte (see the harness's opening comment) and the
# text.  fuzz_json: byte % 4 picks the flags (0 finite, 1 bool, 2 none,
# 3 bias) and its bits the configuration a bundle is computed with.
# fuzz_text: bits 0-1 the format (0 csv, 1 tsv, 2 text, 3 auto), bits 2-3
# the flags (0 none, 4 finite, 8 bool, 12 bias), bits 4-7 the name auto
# guesses from (0x00 "fuzz", 0x10 ".csv", 0x20 ".tsv", 0x30 ".txt", 0x40
# ".json", 0x80 ".jsonl", 0x90 ".ndjson").  fuzz_jsonl: bits 0-1 the
# flags (0 none, 1 finite, 2 bool, 3 bias), bits 2-3 how the format is
# found (0 named, 4 auto from ".jsonl", 010 auto from ".ndjson", 014 auto
# from "-", the content).
set -eu

json=tests/fuzz/corpus/fuzz_json
text=tests/fuzz/corpus/fuzz_text
jsonl=tests/fuzz/corpus/fuzz_jsonl
mkdir -p "$json" "$text" "$jsonl"

# seed DIR NAME OCTAL-BYTE: the byte, then standard input.
seed() {
	{ printf "\\$3"; cat; } >"$1/$2"
}

# A file's content as a seed.
from() {
	seed "$1" "$2" "$3" <"$4"
}

# ---------------------------------------------------------------- json

from "$json" bundle-apple-cheese 000 data/examples/apple-cheese.json
from "$json" bundle-apple-cheese-causal-alibi 014 data/examples/apple-cheese.json
from "$json" bundle-mask-and-bias 000 tests/cli/bundle-with-mask-and-bias/bundle.json
from "$json" bundle-mask-and-bias-invert-window 300 tests/cli/bundle-with-mask-and-bias/bundle.json
from "$json" bundle-odd-labels 044 tests/cli/header-csv-quotes-labels-when-needed/odd-labels.json
from "$json" bundle-labels-count-mismatch 000 tests/cli/bundle-labels-count-mismatch/bundle.json
from "$json" bundle-repeated-key 000 tests/cli/bundle-with-repeated-key/bundle.json
from "$json" bundle-unknown-key 000 tests/cli/bundle-with-unknown-key/bundle.json
from "$json" bundle-without-v 000 tests/cli/bundle-without-v/bundle.json
from "$json" array-3d-batch 000 tests/cli/batch-3d-json-computes-each-batch/q.json
from "$json" mask-4d-batch-head 001 tests/cli/batch-mask-one-per-batch-and-head/mask.json
from "$json" bias-minus-inf-strings 002 tests/cli/bias-minus-inf-masks-a-row/bias.json
from "$json" array-cross-v 000 data/examples/cross/v.json
from "$json" array-empty 000 tests/cli/empty-json-array/q.json
printf '%s' '[1, 2.5, -3e-2, 1E+2, -0]' | seed "$json" array-1d 000
printf '%s' '[[1, 0], [0, 1, 2]]' | seed "$json" ragged-row 000
printf '%s' '[[[1, 0]], [[0, 1]], [[2]]]' | seed "$json" ragged-3d 000
printf '%s' '[[1, 2], [3' | seed "$json" truncated 000
printf '%s' '[[1]] x' | seed "$json" trailing-garbage 000
printf '%s' '[[1e999, 0]]' | seed "$json" number-out-of-range 000
printf '%s' '[[NaN, Infinity, -Infinity]]' | seed "$json" nan-literals 002
printf '%s' '[["nan", "inf", "-inf", "Infinity"]]' | seed "$json" nan-strings 002
printf '%s' '[["nan", "inf"]]' | seed "$json" nan-strings-finite 000
printf '%s' '[[true, false], [false, null]]' | seed "$json" mask-bools-null 001
printf '%s' '[["1", "x"]]' | seed "$json" string-for-number 000
printf '%s' '[[01, 1., .5, -]]' | seed "$json" odd-numbers 000
printf '%s' '[[[[[1]]]]]' | seed "$json" five-dims 000
printf '%s' '[[{"a": 1}], [[2]]]' | seed "$json" object-in-array 000
printf '\357\273\277[[1, 2],\r\n [3, 4]]\r\n' | seed "$json" bom-crlf 000
printf '[[1,\000 2]]' | seed "$json" nul-byte 000
printf '{"Q": [[1]], "K": [[1]], "V": [[1]], "labels": {"query": ["\377\376"], "key": ["\\u00e9"]}}' |
    seed "$json" bad-utf8-label 000
printf '%s' '{"Q": [[1]], "K": [[1]], "V": [[1]], "labels": {"query": ["a\x"]}}' |
    seed "$json" bad-escape 000
printf '%s' '{Q: [[1]]}' | seed "$json" unquoted-key 000
printf '%s' '{"Q": [[1]], "K": [[1]], "V": [[1]], "labels": {"query": [1]}}' |
    seed "$json" label-not-string 000
printf '%s' '{"Q": [[[1,0]],[[0,1]]], "K": [[[1,0]],[[0,1]]], "V": [[[1]],[[2]]], "mask": [[[1]],[[0]]], "bias": [[0]]}' |
    seed "$json" bundle-batches-mask-bias 044
printf '%s' "[$(printf '1%.0s' $(seq 1 1200))]" | seed "$json" thousand-digits 000
# 1100 levels: deeper than cJSON's nesting limit of 1000.
awk 'BEGIN { for (i = 0; i < 1100; i++) printf "["; printf "1";
    for (i = 0; i < 1100; i++) printf "]" }' </dev/null | seed "$json" deep-nesting 000
# what cJSON takes and RFC 8259 does not
printf '%s' '[[01, -01], [1., 1.e5]]' | seed "$json" strict-numbers 000
printf '[[1,\013 2],\f[\033 3, 4]]' | seed "$json" control-white-space 000
printf '[["-inf", 0], ["nan", "inf"]]' | seed "$json" bias-nan-inf 003
printf '[[1, \342\210\2221]]' | seed "$json" unicode-minus 000
# layers, and bundles of embeddings with their layer (bit 1: RoPE)
from "$json" layer-raschka 000 data/examples/raschka/sa_v1.json
from "$json" layer-mha 000 data/examples/mha/layer.json
from "$json" bundle-x-and-proj 002 tests/cli/proj-bundle-holds-x-and-its-layer/bundle.json
printf '%s' '{"XQ": [[1, 0, 2, 1]], "XKV": [[0, 1, 1, 1], [1, 1, 0, 0]], "proj": {"W_Q": [[1, 0], [0, 1], [1, 1], [0, 0]], "W_K": [[1, 0], [0, 1], [0, 0], [1, 1]], "W_V": [[1], [0], [2], [0]], "W_O": [[1, 2]], "b_O": [0.5, 1]}}' |
    seed "$json" bundle-xq-xkv-proj-rope 042
printf '%s' '{"W_Q": [[1, 0]], "w_k": [[1]], "in_proj_weight": [[1]]}' |
    seed "$json" layer-bad-keys 000
printf '' | seed "$json" empty 000
printf ' \n\t \r\n' | seed "$json" whitespace-only 000

# ---------------------------------------------------------------- text

from "$text" tokens-csv-header-labels 000 data/examples/tokens.csv
from "$text" tokens-auto-csv-name 023 data/examples/tokens.csv
from "$text" cross-q-text-comment 002 data/examples/cross/q.txt
from "$text" cross-q-auto-txt 063 data/examples/cross/q.txt
from "$text" cross-k-tsv-header 001 data/examples/cross/k.tsv
from "$text" cross-k-auto-tsv 043 data/examples/cross/k.tsv
from "$text" mask-csv-comments 010 data/examples/t3s4-mask.csv
from "$text" zeros-csv 004 data/examples/zeros.csv
from "$text" bias-minus-inf 000 tests/cli/bias-csv-with-minus-inf/bias.csv
from "$text" bias-minus-inf-finite 004 tests/cli/bias-csv-with-minus-inf/bias.csv
from "$text" crlf-bom-labels 004 tests/cli/csv-with-crlf-and-bom/k.csv
from "$text" labels-first-column 004 tests/cli/labels-from-csv-first-column/q.csv
from "$text" nan-in-mask 010 tests/cli/nan-in-mask-csv/mask.csv
from "$text" nan-in-q 004 tests/cli/nan-in-q/q.csv
from "$text" non-number 004 tests/cli/non-number-in-csv/q.csv
from "$text" ragged-row 004 tests/cli/ragged-csv-row/q.csv
from "$text" stdin-bundle-auto 003 tests/cli/stdin-bundle/stdin
from "$text" json-auto-json-name 103 tests/cli/stdin-json/stdin
printf 'True,False\ntrue,0\n' | seed "$text" mask-true-false 010
printf '"a,b",1,2\n"say ""hi""",3,4\n' | seed "$text" quoted-labels 000
printf '"2",1\n"3\n' | seed "$text" unterminated-quote 000
printf '"x"y,1\n' | seed "$text" text-after-quote 000
printf ',f1,f2\nq1,1,2\nq2,3,4\n' | seed "$text" pandas-header 004
printf 'a\tb\n1\t2\n\n# comment\n3\t4\n' | seed "$text" tsv-header-blank-comment 005
printf '1 2  3\n\t4 5 6\n' | seed "$text" text-runs-of-blanks 006
printf '1,,2\n' | seed "$text" empty-field 000
printf 'a,b\nx\n' | seed "$text" label-without-numbers 000
printf 'h1,h2,h3\n1,2\n' | seed "$text" header-too-long 000
printf 'inf,-inf,nan,+Infinity,-NAN\n' | seed "$text" inf-nan-spellings 000
printf '1e999,1\n' | seed "$text" out-of-range 000
printf '1e-400,4.9e-324,-0\n' | seed "$text" subnormal-underflow 000
printf '0.1,0.3333333333333333,1e308,2.2250738585072014e-308\n' | seed "$text" round-trip 000
printf '%s\n' "$(printf '9%.0s' $(seq 1 1500))" | seed "$text" thousand-digits 000
printf '1,2\n3,\0004\n' | seed "$text" nul-byte 000
printf '\377\376,1\n\303\251,2\n' | seed "$text" invalid-utf8-labels 000
printf '' | seed "$text" empty 000
printf '  \n\t\n\r\n' | seed "$text" whitespace-only 003
printf '# only a comment\n' | seed "$text" comment-only 000
printf '1 2\n3 4\n' | seed "$text" auto-no-extension 003
printf '\223NUMPY\001\000v\000' | seed "$text" npy-magic-auto 003
# real-world text: pandas, quotes, separators, dashes, archives
printf ',a,b\n0,1.0,0.0\n1,0.0,1.0\n' | seed "$text" pandas-index 004
printf '"","a"\r\n"1",2\r\n' | seed "$text" r-write-csv 000
printf '"1","0"\r\n"0","1"\r\n' | seed "$text" quote-all 000
printf 'l\n2\n3\n' | seed "$text" one-column-typo 063
printf '1  0\t1 0\n  0 1   0 1\n' | seed "$text" mixed-blanks-auto 063
printf 'name\tx\nNew York\t1\n' | seed "$text" tsv-label-spaces-auto 003
printf 'q;k\n1;2\n' | seed "$text" semicolons-csv 000
printf '1,5;2,0\n' | seed "$text" decimal-commas 000
printf '1 2\n3 4\n' | seed "$text" spaces-tsv 001
printf '\342\210\2221,2\n' | seed "$text" unicode-minus 000
printf '0,-inf\nnan,+inf\n' | seed "$text" bias-nan-inf 014
printf 'PK\003\004' | seed "$text" zip-magic 003
# arrays as NumPy and PyTorch print them (through auto)
printf '[[1. 0.]\n [0. 1.]]\n' | seed "$text" numpy-str 003
printf 'array([[ 1.0e-05, -2.5e+03],\n       [ 3.0e+00,  4.0e+00]])' |
    seed "$text" numpy-repr-e 003
printf 'tensor([[[0., 1.],\n         [2., 3.]],\n\n        [[4., 5.],\n         [6., 7.]]], dtype=torch.float64)' |
    seed "$text" torch-3d 063
printf '[[ True False]\n [False  True]]' | seed "$text" numpy-bool 013
printf '[[0. 0. 0. ... 0. 0. 0.]\n [0. 0. 0. ... 0. 0. 0.]]' |
    seed "$text" numpy-summarised 003
printf 'tensor([ 1.0000, -0.5000], grad_fn=<MulBackward0>)' | seed "$text" torch-1d 003
# the book's code: comments naming rows, some rows, unknown code
from "$text" torch-book-code 007 data/examples/raschka/inputs.py
printf 'x = np.array([\n  [1., 0.],  # a\n  [0., 1.]])\nprint(x)\n' |
    seed "$text" numpy-code-some-rows-named 003
printf 'x = foo(\n  [[1., 0.]])  # a\n' | seed "$text" unknown-code 003
# JSON Lines, by content and by name
printf '[1,2]\n[3,4.5]\n' | seed "$text" jsonl-rows-auto 003
printf '[[1,2],[3,4]]\r\n\r\n[[5,6],[7,8]]\n' | seed "$text" jsonl-stack-name 203
printf '[true,false]\n[0,1]\n' | seed "$text" jsonl-mask 013
printf '[0,"-inf"]\n["-inf",2]\n' | seed "$text" jsonl-bias-ndjson 217
printf '[1,2]\n[3]\n' | seed "$text" jsonl-ragged 003
printf '[1,2]\n[[3,4]]\n' | seed "$text" jsonl-mixed-dims 003
printf '[1,2]\n[3,4x]\n' | seed "$text" jsonl-bad-number 003
printf '["]",1]\n[2,3]\n' | seed "$text" jsonl-bracket-in-string 003
printf '[1,2]\n[3,4]\n' | seed "$text" jsonl-in-json-name 103

# ---------------------------------------------------------------- jsonl

# rows, matrices (a stack), each kind of value, and the ways it is found
printf '[1,2]\n[3,4.5]\n' | seed "$jsonl" rows 001
printf '[1, 2.5, -3e-2]\n[1E+2, -0, 5e-324]' | seed "$jsonl" rows-no-last-newline 000
printf '[[1,2],[3,4]]\r\n\r\n[[5,6],[7,8]]\n' | seed "$jsonl" stack-crlf 001
printf '[[1,2]]\n[[3,4]]\n[[5,6]]\n' | seed "$jsonl" stack-of-rows 014
printf '\357\273\277[1,2]\n  \t\n[3,4]\n' | seed "$jsonl" bom-blank-line 001
printf '[true,false]\n[0,1]\n[null,true]\n' | seed "$jsonl" mask-bools 002
printf '[0,"-inf"]\n["-inf",2]\n' | seed "$jsonl" bias-strings-ndjson 013
printf '["nan","inf"]\n[NaN,Infinity]\n' | seed "$jsonl" nan-inf 000
printf '[1,2]\n[3,4]\n' | seed "$jsonl" auto-by-content 014
printf '[1]\n' | seed "$jsonl" one-line-auto 014
printf '[1e308,-1e308]\n[1e-320,0]\n' | seed "$jsonl" extremes 005
# the faults a line alone cannot tell, and those it can
printf '[1,2]\n[3]\n' | seed "$jsonl" ragged 000
printf '[[1,2],[3,4]]\n[[5,6]]\n' | seed "$jsonl" ragged-stack 000
printf '[[1,2],[3,4]]\n[[5,6],[7]]\n' | seed "$jsonl" ragged-inside-matrix 000
printf '[1,2]\n[[3,4]]\n' | seed "$jsonl" row-then-matrix 000
printf '[[[1]]]\n[[[2]]]\n' | seed "$jsonl" 3d-lines 000
printf '[1,2]\n[3,4x]\n' | seed "$jsonl" bad-number 000
printf '["]",1]\n[2,3]\n' | seed "$jsonl" bracket-in-string 000
printf '[1,2]\n[3,\n4]\n' | seed "$jsonl" array-across-lines 000
printf '[1,2], [3,4]\n' | seed "$jsonl" two-arrays-one-line 000
printf '{"Q": [[1]]}\n' | seed "$jsonl" object-line 000
printf '5\n6\n' | seed "$jsonl" scalar-lines 000
printf '[]\n[]\n' | seed "$jsonl" empty-arrays 000
printf '\n  \n\r\n' | seed "$jsonl" blank-only 000
printf '[1,\0002]\n' | seed "$jsonl" nul-byte 000
printf '[1,2]\n\377[3,4]\n' | seed "$jsonl" bad-utf8 000
printf '[1,2]\n\357\273\277[3,4]\n' | seed "$jsonl" bom-on-line-2 000
printf '\377\376[\0001\000]\000\n\000' | seed "$jsonl" utf16 000
for f in tests/bad/jsonl-*; do
	b=${f##*/}
	from "$jsonl" "bad-${b%.*}" 000 "$f"
done
