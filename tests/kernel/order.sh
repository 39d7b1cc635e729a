#!/bin/sh
# order.sh ATTN - attn --emulate's two orders of the scale against
# FlashAttention's attention_ref in PyTorch (order_ref.py, which says how
# it computes it): --emulate-order q is attention_ref(upcast=False) and k
# is attention_ref(upcast=False, reorder_ops=True), the baseline of
# FlashAttention's tests, bit for bit: output and weights, and grad_q,
# grad_k and grad_v of its backward (autograd's, with FlashAttention's
# delta), in bfloat16 and float16, with grouped and multi-query heads,
# causal masks and a softcap (forward only).  --like flash, which
# chooses k, is the k run of the bfloat16 cases.  Each case also asks
# that the two references differ, so that an order swapped is a
# failure, not a pass.
#
# Without PyTorch (Debian: apt-get install python3-torch) the suite is
# skipped with a notice, as grad.sh is without NumPy.
set -u
. "$(dirname "$0")/../harness.sh"
py=
for p in /usr/bin/python3 python3; do
	if command -v "$p" >/dev/null 2>&1 &&
	    "$p" -c 'import numpy, torch' >/dev/null 2>&1; then
		py=$p
		break
	fi
done
if [ -z "$py" ]; then
	echo "order-kernel: SKIPPED: no Python with PyTorch and NumPy" \
	    "(Debian: apt-get install python3-torch)"
	exit 0
fi

if ! "$py" "$here/order_ref.py" make "$work" 2>"$work/err"; then
	verdict "order_ref.py" "it failed: $(cat "$work/err")"
	tally order-kernel
	exit 1
fi

tab=$(printf '\t')
: >"$work/runs"
# run NAME PREC ORDER OPTION..: case NAME emulated in PREC with
# OPTION.., its stages written for order_ref.py to hold to
# attention_ref's ORDER (a line of $work/runs), or its failure counted.
run() {
	name=$1 prec=$2 order=$3
	shift 3
	label="$name: --emulate $prec $* is attention_ref's order $order"
	i=$(wc -l <"$work/runs")
	if (cd "$work" && "$bin" --layout bshd --emulate "$prec" "$@" \
	    -s "$stages" -o "run$i.npz" "$name-q.npy" "$name-k.npy" \
	    "$name-v.npy" 2>err); then
		printf '%s\t%s\t%s\t%s\n' "$label" "$name" "$order" \
		    "$work/run$i.npz" >>"$work/runs"
	else
		verdict "$label" "exit $?: $(cat "$work/err")"
	fi
}

"$py" "$here/order_ref.py" cases >"$work/cases" || exit 1
while read -r name prec causal cap grad; do
	set --
	[ "$causal" = 1 ] && set -- --causal --align bottom-right
	[ "$cap" != 0.0 ] && set -- "$@" --softcap "$cap"
	stages=output,weights
	if [ "$grad" = 1 ]; then
		set -- "$@" --grad "$name-do.npy"
		stages=$stages,grad_q,grad_k,grad_v
	fi
	run "$name" "$prec" q "$@"
	run "$name" "$prec" k --emulate-order k "$@"
	[ "$prec" = bf16 ] && run "$name" "$prec" k --like flash "$@"
	# the references differ, so the two orders are told apart
	why=
	for s in out attn; do
		if "$py" -c 'import numpy as np, sys
a, b = np.load(sys.argv[1]), np.load(sys.argv[2])
sys.exit(0 if np.array_equal(a, b, equal_nan=True) else 1)' \
		    "$work/$name-${s}_q.npy" "$work/$name-${s}_k.npy"; then
			why="$why ${s}_q.npy and ${s}_k.npy are the same"
		fi
	done
	verdict "$name: the orders differ" "$why"
done <"$work/cases"

# every run written against its reference, in one Python
"$py" "$here/order_ref.py" compare "$work" "$work/runs" >"$work/verdicts" ||
    verdict "order_ref.py compare" "it failed"
while IFS=$tab read -r label why; do
	verdict "$label" "$why"
done <"$work/verdicts"

tally order-kernel
