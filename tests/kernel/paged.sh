#!/bin/sh
# paged.sh ATTN - paged KV caches (attn(1), PAGED KV CACHES) against the
# same keys gathered into contiguous K and V: for each case of
# paged.py (FlashAttention's block table, int32 and int64, with and
# without --key-leftpad; FlashInfer's three lists in nhd and hnd; GQA
# and MQA; causal bottom-right, a window, packed queries), every stage
# of a paged run, the backward ones too, is the contiguous run's byte
# for byte, in .npz and in JSON, and its output and gradients are
# PyTorch's (paged.py torch: a gather by a loop over the pages, then
# scaled_dot_product_attention and autograd in float64) within 1e-12.
# Every page no table names, and every row of a page not in use, holds
# nan, so a run that read one would differ.
#
# Without NumPy the suite is skipped with a notice, as grad.sh is;
# without PyTorch (Debian: python3-torch) the PyTorch cases alone.
set -u
. "$(dirname "$0")/../harness.sh"
. "$here/../python.sh"
if [ -z "$py" ]; then
	echo "paged-kernel: SKIPPED: no Python with NumPy (Debian: apt-get" \
	    "install python3-numpy)"
	exit 0
fi
torch=1
"$py" -c 'import torch' >/dev/null 2>&1 || torch=

if ! "$py" "$here/paged.py" make "$work" >"$work/cases" 2>"$work/err"; then
	verdict "paged.py make" "it failed: $(cat "$work/err")"
	tally "paged-kernel"
	exit
fi
while read -r name; do
	dir=$work/$name
	for f in npz json; do
		why=
		# shellcheck disable=SC2046
		(cd "$dir" && "$bin" $(cat paged.args) -s all -f $f \
		    -o paged.$f q.npy kc.npy vc.npy 2>err) ||
		    why="the paged run failed: $(cat "$dir/err")"
		# shellcheck disable=SC2046
		(cd "$dir" && "$bin" $(cat contig.args) -s all -f $f \
		    -o contig.$f q.npy k.npy v.npy 2>err) ||
		    why="$why; the contiguous run failed: $(cat "$dir/err")"
		[ -z "$why" ] && ! cmp -s "$dir/paged.$f" "$dir/contig.$f" &&
		    why="the paged run's stages differ from the gathered keys'"
		verdict "$name ($f): paged = gathered" "$why"
	done
	if [ -z "$torch" ]; then
		skip_case "$name: PyTorch" "no PyTorch (Debian: python3-torch)"
		continue
	fi
	why=
	"$py" "$here/paged.py" torch "$dir" >"$work/report" 2>&1 ||
	    why=$(cat "$work/report")
	verdict "$name: paged = PyTorch's gather and SDPA" "$why"
done <"$work/cases"
tally "paged-kernel"
