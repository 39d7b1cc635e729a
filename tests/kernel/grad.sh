#!/bin/sh
# grad.sh ATTN - attn --grad --check --emulate on backward passes written
# for the test in NumPy (grad_kernel.py, which says how it computes
# them): FlashAttention-2's backward in float32 and in bfloat16, with
# GQA and a softcap.  The right one passes --check of grad_q, grad_k,
# grad_v and lse against the emulated baseline of its precision (within
# --factor 2 of that baseline's error); each planted bug fails the
# stage it breaks, exit 1, by the factor criterion, and leaves the
# others passing:
#
#   dk-nosum    dK of one query head, not summed over the KV head's heads
#   dk-noscale  dK without the scale
#   nocapgrad   dS without the softcap's derivative (dQ and dK)
#   lse-shift   softmax_lse off by +0.02
#   lse-scale   softmax_lse times 1.005
#   dv-head     dV of one KV head times 1.02, beside a KV head whose dO
#               is 4 times the others': --check-by head (the default)
#               fails it, naming that head; --check-by tensor, whose
#               bound the loud head's baseline sets, passes it
#
# The kernel keeps softmax_lse in float32 in either precision, as the
# emulation does: a bf16 baseline's lse rounded to bf16 would err by up
# to 0.016 at lse of 4 to 5, and pass both lse bugs.
#
# Without NumPy the suite is skipped with a notice, as npy.sh is.
set -u
. "$(dirname "$0")/../harness.sh"
. "$here/../python.sh"
if [ -z "$py" ]; then
	echo "grad-kernel: SKIPPED: no Python with NumPy (Debian: apt-get" \
	    "install python3-numpy)"
	exit 0
fi

# case PREC MODE STAGE STATUS [BY]: the kernel in PREC and MODE, its
# STAGE (lse, or grad_q, grad_k, grad_v as q, k, v) checked with
# --check-by BY (head by default); STATUS 0 wants the pass line, 1 the
# factor's FAIL line, by head naming the head of MODE's bug where it
# has one in a single head.
case_() {
	prec=$1 mode=$2 want=$4 by=${5:-head}
	case $3 in
	lse) stage=lse file=lse.npy ;;
	*) stage=grad_$3 file=d$3.npy ;;
	esac
	why=
	if ! "$py" "$here/grad_kernel.py" "$mode" "$prec" "$work" \
	    2>"$work/err"; then
		why="grad_kernel.py failed: $(cat "$work/err")"
	else
		(cd "$work" && "$bin" --grad do.npy --softcap 3 --emulate \
		    "$prec" --check-by "$by" --check "$file" -s "$stage" q.npy \
		    k.npy v.npy >report 2>err)
		st=$?
		[ "$st" = "$want" ] || why="exit $st, want $want"
		[ -s "$work/err" ] && why="$why; stderr: $(cat "$work/err")"
		if [ "$want" = 0 ]; then
			re='^pass$'
		elif [ "$by" = tensor ]; then
			re="^FAIL: the largest error is [0-9.e+]+ times the emulated $prec baseline's, more than --factor 2$"
		else
			case $mode in
			dv-head) at='batch 1, head 2' ;;
			*) at='batch [12], head [1-4]' ;;
			esac
			re="^FAIL: the largest error of $at is [0-9.e+]+ times its emulated $prec baseline's, more than --factor 2 \\([1-8] of [48] \\(batch, head\\) pairs over\\)$"
		fi
		grep -Eq -- "$re" "$work/report" ||
		    why="$why; no line matches '$re'"
	fi
	verdict "$prec $mode $stage" "$why"
	[ -n "$why" ] && sed 's/^/    /' "$work/report" 2>/dev/null
}

for prec in fp32 bf16; do
	for stage in q k v lse; do
		case_ $prec good $stage 0
	done
	case_ $prec dk-nosum k 1
	case_ $prec dk-nosum q 0
	case_ $prec dk-noscale k 1
	case_ $prec dk-noscale v 0
	case_ $prec nocapgrad q 1
	case_ $prec nocapgrad k 1
	case_ $prec nocapgrad v 0
	case_ $prec lse-shift lse 1
	case_ $prec lse-shift k 0
	case_ $prec lse-scale lse 1
	case_ $prec lse-scale lse 1 tensor
done
case_ bf16 dv-head v 1
case_ bf16 dv-head v 0 tensor
case_ bf16 dv-head k 0

tally grad-kernel
