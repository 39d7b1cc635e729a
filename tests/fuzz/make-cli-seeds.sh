#!/bin/sh
# make-cli-seeds.sh MKSEED - (re)write tests/fuzz/corpus/fuzz_cli/ from the
# readable descriptions below (make fuzz-cli-seeds runs it).  Each line:
#
#   s NAME WORD... -- FILE0 FILE1 FILE2 FILE3 FILE4 STDIN
#
# WORDs are entries of fuzz_cli_table.h ("-s weights" is one entry, so it
# is one quoted argument); @0j is file 0 as .json, @1c file 1 as .csv, and
# so on; "=" is an empty file.  Most come from tests/cli/ cases.
set -eu

mk=$1
out=tests/fuzz/corpus/fuzz_cli
mkdir -p "$out"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

s() {
	name=$1
	shift
	"$mk" "$out/$name" "$@"
}

ex=data/examples
cli=tests/cli
ac=$ex/apple-cheese.json

# Small files for the cases no test has.
printf '[[1, 0], [0, 1]]' >"$tmp/q2"
printf '[[1, 0], [0, 1], [1, 1]]' >"$tmp/k3"
printf '[[1, 2], [3, 4], [5, 9]]' >"$tmp/v3"
printf '[[1, 1, 0], [0, 1, 1]]' >"$tmp/mask23"
printf '[[0, 0.5, "-inf"], [1, 0, 0]]' >"$tmp/bias23"
printf '1,1,0\n0,1,1\n' >"$tmp/mask23.csv"
printf '[[1, 0, 1, 0], [0, 1, 0, 1]]' >"$tmp/q4"
printf '[[1, 0, 0, 1], [0, 1, 1, 0], [1, 1, 1, 1]]' >"$tmp/k4"
printf '[[1e300, 1e300]]' >"$tmp/huge"
printf 'old output\n' >"$tmp/old"
printf '[[6.697615493266569, 3.302384506733431]]' >"$tmp/ac-out"
printf '[[6.7, "nan"]]' >"$tmp/ac-out-nan"
printf '[[[[1, 0], [0, 1]], [[1, 1], [0, 0]]]]' >"$tmp/q4d"
printf '[[[[1, 0], [0, 1], [1, 1]]]]' >"$tmp/k4d"
printf '[[[[1], [2], [4]]]]' >"$tmp/v4d"
printf '[[[[1, 1, 0]]]]' >"$tmp/pad4d"

# ---------------------------------------------------------------- good runs
s bundle-default @0j -- $ac
s bundle-explain -e @0j -- $ac
s bundle-explain-digits -e "-d 3" @0j -- $ac
s bundle-all-csv "-s all" "-f csv" @0j -- $ac
s bundle-all-json "-f json" "-s all" @0j -- $ac
s bundle-weights-tsv-header "-f tsv" --header "-s weights,output" @0j -- $ac
s bundle-labels-options "--query-labels a" "--key-labels k,l" "-s weights" @0j -- $ac
s bundle-from-stdin "-f csv" "-s weights" - -- = = = = = $cli/stdin-bundle/stdin
s cross-txt-tsv-json "-s all" @0x @1t @2j -- $ex/cross/q.txt $ex/cross/k.tsv $ex/cross/v.json
s self-tokens-csv "--self @0c" "-s weights,output" -- $ex/tokens.csv
s self-tokens-stdin "--self -" -- = = = = = $ex/tokens.csv
s stdin-as-k "-f csv" "-s weights,output" @0j - @2j -- $cli/stdin-csv-by-content/q.json = $cli/stdin-csv-by-content/v.json = = $cli/stdin-csv-by-content/stdin
s by-content-no-ext "-f csv" "-s weights,output" @0n @1n @2n -- $cli/format-by-content-without-extension/query $cli/format-by-content-without-extension/keys $cli/format-by-content-without-extension/values
s crlf-bom-csv "-s weights" @0j @1c @2j -- $cli/csv-with-crlf-and-bom/q.json $cli/csv-with-crlf-and-bom/k.csv $cli/csv-with-crlf-and-bom/v.json
s causal-bottom-right --causal "--align bottom-right" "-s all" @0j @1j @2j -- $cli/causal-bottom-right-t3-s4/q.json $cli/causal-bottom-right-t3-s4/k.json $cli/causal-bottom-right-t3-s4/v.json
s mask-json "-m @3j" "-s all" @0j @1j @2j -- $tmp/q2 $tmp/k3 $tmp/v3 $tmp/mask23
s mask-csv-invert "-m @3c" --mask-invert "--masked-rows nan" @0j @1j @2j -- $tmp/q2 $tmp/k3 $tmp/v3 $tmp/mask23.csv
s bias-json-window "--bias @4j" "--window 1,1" "-s scores,scaled" @0j @1j @2j -- $tmp/q2 $tmp/k3 $tmp/v3 = $tmp/bias23
s bias-csv-minus-inf "--bias @4c" "-s all" "-f csv" @0j @1j @2j -- $cli/bias-csv-with-minus-inf/q.json $cli/bias-csv-with-minus-inf/k.json $cli/bias-csv-with-minus-inf/v.json = $cli/bias-csv-with-minus-inf/bias.csv
s heads-two-alibi "--heads 2" --alibi "-s all" @0j @1j @2j -- $tmp/q4 $tmp/k4 $tmp/k4
s gqa-kv-heads "--heads 2" "--kv-heads 1" "--like flash" @0j @1j @2j -- $tmp/q4 $tmp/q2 $tmp/q2
s softcap-scale "--softcap 30" "--scale 0.5" "-d 17" @0j -- $ac
s batch-3d "-f json" "-s weights,output" @0j @1j @2j -- $cli/batch-3d-json-computes-each-batch/q.json $cli/batch-3d-json-computes-each-batch/k.json $cli/batch-3d-json-computes-each-batch/v.json
s output-file "-o @o" "-f csv" @0j -- $ac
s output-over-input "-o @0j" @0j -- $ac
s help --help -- =
s version -V -- =
s stdout-full "!full" "-s all" @0j -- $ac
s grad-explain -e "--grad @4j" @0j -- $ac = = = $ex/apple-cheese-do.json
s grad-gqa-csv "--heads 4" "--kv-heads 2" "--grad @3c" "-s grad_q,grad_k,grad_v" "-f csv" @0c @1c @2c -- $ex/gqa/q.csv $ex/gqa/k.csv $ex/gqa/v.csv $ex/gqa/do.csv
s grad-stdin "--grad -" "-s grad_bias,delta" "--bias @4j" @0j -- $ex/t3s4.json = = = $ex/t3s4-bias.json $ex/t3s4-do.csv
s npy-output "-f npy" "-o @o" "-s weights" @0j -- $ac
s check-pass "--check @4j" @0j -- $ac = = = $tmp/ac-out
s check-emulate-json "--check @4j" "--emulate fp16" "-f json" @0j -- $ac = = = $tmp/ac-out-nan
s layout-4d-mask "-m @3j" "-s weights" @0j @1j @2j -- $tmp/q4d $tmp/k4d $tmp/v4d $tmp/pad4d
s layout-bshd-check "--layout bshd" "--check @4j" @0j @1j @2j -- $tmp/q4d $tmp/k4d $tmp/v4d = $tmp/q4d

# ---------------------------------------------------------------- bad runs
s output-file-kept-on-error "-o @0j" @1c @2j @3j -- $tmp/old $cli/ragged-csv-row/q.csv $tmp/k3 $tmp/v3
s output-missing-dir "-o @m" @0j -- $ac
s output-is-dir "-o @D" @0j -- $ac
s ragged-csv @0c @1j @2j -- $cli/ragged-csv-row/q.csv $cli/ragged-csv-row/k.json $cli/ragged-csv-row/v.json
s nan-in-q @0c @1j @2j -- $cli/nan-in-q/q.csv $cli/nan-in-q/k.json $cli/nan-in-q/v.json
s truncated-json @0j @1j @2j -- $cli/truncated-json/q.json $cli/truncated-json/k.json $cli/truncated-json/v.json
s scores-overflow @0j @0j @0j -- $tmp/huge
s shape-mismatch @0j @1j @2j -- $cli/shape-mismatch-q-and-k-columns/q.json $cli/shape-mismatch-q-and-k-columns/k.json $cli/shape-mismatch-q-and-k-columns/v.json
s missing-and-dir @M @D @0j -- $ac
s stdin-twice - - @2j -- = = $tmp/v3 = = $tmp/q2
s bundle-repeated-key @0j -- $cli/bundle-with-repeated-key/bundle.json
s npy-input @0y @1j @2j -- $ac
s explain-with-stage -e "-s weights" @0j -- $ac
s unknown-options -ez --bogus "-f xml" "-d 0" @0j -- $ac
s heads-huge "--heads 9223372036854775807" @0j -- $ac
s window-huge "--window 1,18446744073709551615" @0j -- $ac
s grad-wrong-shape "--grad @4j" "-s grad_weights" @0j -- $ex/t3s4.json = = = $tmp/mask23
s grad-missing "--grad @M" @0j -- $ac
s proj-raschka "--proj @3j" "-s q,k,v,projected" @0c -- $ex/raschka/inputs.csv = = $ex/raschka/sa_v1.json
s proj-mha-cross "--proj @4j" "-s q,k,v,projected" "--heads 2" @0c @1c -- $ex/mha/xq.csv $ex/mha/xkv.csv = = $ex/mha/layer.json
s proj-bundle-x "-e" @0j -- $cli/proj-bundle-holds-x-and-its-layer/bundle.json
s proj-stdin-layer "--proj -" @0c -- $ex/raschka/inputs.csv = = = = $ex/raschka/sa_v1.json
s rope-explain "-e" "--rope" "--rope-style interleaved" @0j -- $ex/t3s4.json
s rope-grad "--rope 500000" "--grad @4j" "-s q_rot,k_rot" @0j -- $ex/t3s4.json = = = $ex/t3s4-do.csv
s sinks-explain "-e" "--sinks @4c" @0j -- $ac = = = $ex/sink0.txt
s sinks-bad "--sinks @3j" @0j -- $ac = = $ex/t3s4.json

# ---------------------------------------------------------------- packed
# sequences, used keys, the lse's conventions, .npz in and out, JSON Lines
printf '0,1,3\n' >"$tmp/cu013"
printf '[1, 0]\n[0, 1]\n[1, 1]\n' >"$tmp/k3.jsonl"
printf '[1, 1, 0]\n[0, 1, 1]\n[1, 0, 1]\n' >"$tmp/mask33.jsonl"
ck=$cli/check-several-stages-from-npz
# ref.npz with a byte of its first member's numbers changed: its CRC fails
cp $ck/ref.npz "$tmp/crc.npz"
printf '\377' | dd of="$tmp/crc.npz" bs=1 seek=200 conv=notrunc 2>/dev/null
pl=$cli/proj-layer-from-npz
lse=$cli/lse-base-and-masked-conventions
s varlen-two-sequences "--cu-seqlens-q 0,1,3" "--cu-seqlens-k 0,1,3" --causal @0j @1j @2j -- $tmp/k3 $tmp/k3 $tmp/v3
s varlen-empty-sequence "--cu-seqlens-q 0,0,2" "--cu-seqlens-k 0,1,3" "--align bottom-right" @0j @1j @2j -- $tmp/q2 $tmp/k3 $tmp/v3
s varlen-offsets-file "--cu-seqlens-q @1c" "--cu-seqlens-k 0,1,3" @0j @0j @0j -- $tmp/k3 $tmp/cu013
s varlen-bad-offsets "--cu-seqlens-q 2,0" "--cu-seqlens-k 0,1,3" @0j @0j @0j -- $tmp/k3
s varlen-offsets-not-a-file "--cu-seqlens-q 0,1,3" "--cu-seqlens-k 0,x" @0j @0j @0j -- $tmp/k3
s seqused-k-cache "--seqused-k 1" --causal "--align bottom-right" "-s output,lse" @0j @1j @2j -- $tmp/q2 $tmp/k3 $tmp/v3
s seqused-k-packed "--cu-seqlens-q 0,1,3" "--cu-seqlens-k 0,1,3" "--seqused-k 1,2" @0j @0j @0j -- $tmp/k3
s seqused-k-too-many "--seqused-k 9" @0j @1j @2j -- $tmp/q2 $tmp/k3 $tmp/v3
s lse-base-2-masked-inf "--lse-base 2" "--lse-masked inf" "-s output,lse" --causal "--align bottom-right" @0c @1c @2c -- $lse/q.csv $lse/k.csv $lse/v.csv
s lse-like-flash-check "--like flash" "--lse-base 2" "--check @4j" "-s lse" --causal "--align bottom-right" @0c @1c @2c -- $lse/q.csv $lse/k.csv $lse/v.csv = $lse/kernel-lse.json
s lse-bad-base "--lse-base 10" "--lse-masked 0" @0j -- $ac
s npz-out-file "-f npz" "-o @O" "-s all" @0j -- $ac
s npz-out-stdout "-f npz" "-s output,lse" "--npy-dtype f4" @0j -- $ac
s npz-out-kept-on-error "-o @O" @0j @1j @2j -- $cli/shape-mismatch-q-and-k-columns/q.json $cli/shape-mismatch-q-and-k-columns/k.json $cli/shape-mismatch-q-and-k-columns/v.json
s npz-out-full "-f npz" !full @0j -- $ac
s check-npz "--layout bhsd" "--heads 2" "--kv-heads 1" --causal "--align bottom-right" "--grad @3y" "--check @4z" @0y @1y @2y -- $ck/q.npy $ck/k.npy $ck/v.npy $ck/do.npy $ck/ref.npz
s check-npz-bad "--layout bhsd" "--heads 2" "--kv-heads 1" --causal "--grad @3y" "--check @4z" @0y @1y @2y -- $ck/q.npy $ck/k.npy $ck/v.npy $ck/do.npy $ck/bad.npz
s check-npz-truncated "--check @4z" @0j -- $ac = = = tests/bad/npz-truncated.npz
s check-npz-crc "--layout bhsd" "--heads 2" "--kv-heads 1" --causal "--align bottom-right" "--grad @3y" "--check @4z" @0y @1y @2y -- $ck/q.npy $ck/k.npy $ck/v.npy $ck/do.npy $tmp/crc.npz
s proj-npz "--proj @3z" -e @0j -- $pl/x.json = = $pl/layer.npz
s proj-npz-compressed "--proj @4z" @0j -- $pl/x.json = = = $pl/layer-compressed.npz
s proj-npz-no-wk "--proj @3z" @0j -- $pl/x.json = = $pl/no-wk.npz
s npz-operand @0z @0j @0j -- $pl/layer.npz
s jsonl-operands @0l @1l @0l -- $tmp/k3.jsonl $tmp/k3.jsonl
s jsonl-self-mask "--self @0l" "-m @3l" -- $tmp/k3.jsonl = = $tmp/mask33.jsonl
