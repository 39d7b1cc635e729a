#!/bin/sh
# run.sh ATTN FAKE - attn --check on a float32 kernel written here
# (fake_kernel.c, built by the Makefile as FAKE), right and wrong in the
# ways kernels go wrong: the right one passes against the fp32 emulation,
# each wrong one fails, exit 1, with a report that names the worst
# element and why (and, for the layout mix-up, what FILE matches); the
# same for its backward pass's dK, with and without the GQA sum.
#
# Each case: MODE, the exit status wanted, then extended regular
# expressions that lines of the report must match, one a line.
set -u

. "$(dirname "$0")/../harness.sh"
fake=$2
case $fake in /*) ;; *) fake=$(pwd)/$fake ;; esac

# check MODE[:FILE] STATUS [ARGS...] -- REGEX...: run the kernel in MODE,
# then attn --check FILE (out.npy by default) ARGS on its inputs.
check() {
	mode=${1%%:*} file=out.npy want=$2
	case $1 in *:*) file=${1#*:} ;; esac
	shift 2
	args=
	while [ $# -gt 0 ] && [ "$1" != -- ]; do
		args="$args $1"
		shift
	done
	[ $# -gt 0 ] && shift
	why=
	if ! "$fake" "$mode" "$work" 2>"$work/err"; then
		why="fake_kernel $mode failed: $(cat "$work/err")"
	else
		# shellcheck disable=SC2086
		(cd "$work" && "$bin" --check "$file" $args q.npy k.npy \
		    v.npy >report 2>err)
		st=$?
		[ "$st" = "$want" ] || why="exit $st, want $want"
		[ -s "$work/err" ] && why="$why; stderr: $(cat "$work/err")"
		for re in "$@"; do
			grep -Eq -- "$re" "$work/report" ||
			    why="$why; no line matches '$re'"
		done
	fi
	verdict "$mode$args" "$why"
	[ -n "$why" ] && sed 's/^/    /' "$work/report" 2>/dev/null
}

# FlashAttention's loop in float32: within twice the naive float32
# kernel's error, though summed in another order.
check good 0 --emulate fp32 -- '^pass$' \
    '^  factor          max abs error .* <= 2 \* .* \+ atol'
# The same result is too far off for allclose's defaults: the logits of
# about 100 cost float32 digits, which is what the baseline measures.
check good 1 -- '^FAIL: [0-9]+ of 512 elements fail \|a - b\| <= atol'
# exp of logits past 88 overflows float32: inf / inf is nan.
check nomax 1 --emulate fp32 -- \
    '^  worst element   batch 1, head 1, row 2, column 1 \(file\[0, 0, 1, 0\]\): attn [-0-9.e]+, file nan$' \
    '^FAIL: [0-9]+ elements are nan or inf on one side only, the first at batch 1, head 1, row 2, column 1; the largest error of batch 1, head 1 is inf times'
check scale 1 --emulate fp32 -- \
    '^  worst element   batch [12], head [1-4], row [1-4], column [0-9]+ \(file\[[0-9, ]+\]\): attn ' \
    "^FAIL: the largest error of batch [12], head [1-4] is [0-9.e+]+ times its emulated fp32 baseline's, more than --factor 2 \\([0-9] of 8 \\(batch, head\\) pairs over\\)$"
# Written B x T x H x D where B x H x T x D was asked for (T = H).
check layout 1 --emulate fp32 -- '^  worst element   batch ' \
    "^  hint: out\.npy matches attn's output laid out as --layout bshd: does the kernel write that layout\?$"
check gqa 1 --emulate fp32 -- '^  worst element   batch ' \
    '^FAIL: the largest error of batch [12], head [1-4] is'
# The backward pass: dK of grouped-query heads within float32's error,
# and without the sum over the query heads that share a KV head.
check dk:dk.npy 0 --grad do.npy -s grad_k --rtol 1e-4 --atol 1e-5 -- \
    '^check grad_k \[B x G x S x d_k = 2x2x37x16\] against dk\.npy$' '^pass$'
check dk-nosum:dk.npy 1 --grad do.npy -s grad_k --rtol 1e-4 --atol 1e-5 -- \
    '^  worst element   batch [12], head [12], row [0-9]+, column [0-9]+ \(file\[[0-9, ]+\]\): attn ' \
    '^FAIL: [0-9]+ of 2368 elements fail [|]a - b[|] <= atol [+] rtol[*][|]attn[|]$'
# The report as JSON, for CI.
check nomax 1 --emulate fp32 -f json -- '^  "pass": false$' \
    '^  "worst": \{"batch": 1, "head": 1, "row": 2, "column": 1, "index": \[0, 0, 1, 0\], "attn": [-0-9.e]+, "file": "nan"\},$' \
    '^  "fails": \["nonfinite", "factor"\],$'
check good 0 --emulate fp32 -f json -- '^  "pass": true$' '"baseline": \{"emulate": "fp32"'

tally kernel
