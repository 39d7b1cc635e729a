#!/bin/sh
# run.sh ATTN [ATTN_MPI] - the matrix: every printer on every stage in
# every layout; with ATTN_MPI (and mpirun), a sample of it through
# attn-mpi too.
#
# Not a sample but each combination of
#
#   layout    2-D with --heads 2 --kv-heads 1 (T 3 > S 2); 3-D, 2 batches,
#             --heads 2 (T 2 < S 3); 4-D bhsd, B 2, H 2, G 1 (T 2 < S 3);
#             4-D bshd, B 2, H 2, G 2 (T 3 > S 2); 2-D with --layout bhsd,
#             --heads 4 --kv-heads 2 and V's columns named by its csv
#             header (T 2 < S 3): B and H over 1 wherever the inputs
#             have them, T != S everywhere; and 4-D bhsd with heads of
#             d = 32 for the npy and npz writers and --check of what
#             they wrote (rows long enough to be written where they lie);
#   variant   the forward stages; --causal; --grad (the backward ones);
#             --grad with --bias and --sinks (bias as read and
#             grad_bias, in the bias's shape: 1 x S, B x 1 x S,
#             1 x H x T x S, B x H x T x 1 or T x S by layout, and
#             grad_sinks besides), also emulated;
#             --proj with W_O, --rope and --grad (q, k, v, q_rot, k_rot
#             and projected besides); --rope (q, k and v, the operands
#             as read, besides q_rot and k_rot); --sinks;
#             --alibi-slopes (H, or B x H), causal with --grad, and
#             emulated; --dropout-p with --dropout-mask (booleans, or
#             S_dmask's signs, in every shape a mask broadcasts from),
#             causal with --grad, and emulated in bf16 with --grad;
#             --lse-base 2
#             --lse-masked inf (causal, bottom-right); --emulate fp16,
#             alone and with --grad; --emulate bf16 --emulate-order k
#             with --softcap and --grad, and --like flash --emulate
#             fp32 (k chosen) with --causal; --emulate fp8-e4m3, and fp8-e5m2
#             with --descale-q, -k and -v; descale factors alone; packed sequences (--cu-seqlens-q/-k,
#             --seqused-k per sequence) in 2-D and --seqused-k per batch
#             in 3-D, with --causal, --alibi and --grad; attn softmax
#             from the scaled logits of 3-D and 4-D runs; d2l's valid_lens
#             (--valid-lens) per batch and query row in 3-D and per batch
#             in 4-D bhsd, with --grad; paged KV caches, K and V of 4-D
#             bshd as a block table's pages with --key-leftpad, causal,
#             and of bhsd as FlashInfer's hnd pages with a window, both
#             with --grad;
#   printer   for each stage of the variant, npy (-o) and csv --header;
#             for all of them at once (-s all), a table (with --stats
#             and --heatmap), csv, csv --header, tsv --header and json
#             (with --stats), txt (-o) and npz (-o, float64 and
#             --npy-dtype f4); -f html (with --stats);
#             --explain (with --stats and --heatmap); --explain
#             --arithmetic; --stats as a table, csv, json and txt (-o);
#             --heatmap; --svg FILE; the heatmap, the SVG and the page
#             with --color-range max and row; --check of the forward and
#             backward stages at once (a table, JSON; from attn's -f json
#             and from its -f npz), passing and failing, and against
#             an emulated baseline by head, by tensor and by sequence,
#
# run under LC_ALL=C and timeout 20.  A case passes when the exit status
# is the one wanted, standard error holds no sanitizer report (make check
# runs the suite again under ASan and UBSan) and is otherwise empty (but
# for the warning that rows may attend no key), or
# for a refusal one "attn:" line (and the usage synopsis) with nothing
# on standard output; what was printed is there (an .npy starts with its
# magic, a .npz with a zip's, an SVG holds <svg, a .txt is numbers a
# space apart); and the
# rows and columns of each stage in tables, csv and tsv --header, the
# page and --explain carry the labels whose they are (labels.awk:
# queries are Q.., keys K..; a stage whose rows are keys never shows a
# query's label).
#
# With ATTN_MPI, every MPI_EVERY-th case (13 unless set; 1: all) runs
# again as `mpirun -q -n 2 ATTN_MPI`, in a second column, and passes
# when its status, standard output, standard error and files written
# are attn's, byte for byte (attn(1), "Beyond one machine: attn-mpi");
# every other one of them with its Q as a .npy (judge_mpi).
#
# The combinations attn refuses are listed, each with its status, in
# refuse() and after the variants below; any other refusal, like a
# crash, fails.  The inputs are made by attn gen and nested into JSON by
# awk; the cases run in $jobs workers at once (ATTN_MATRIX_JOBS, by
# default the CPUs online).
set -u

# No leak check at each of the matrix's 2500 exits: LeakSanitizer's
# check at exit would be a good part of the suite's CPU time.  Leaks are
# looked for where each printer, stage and reader runs: the CLI and
# hostile-input suites under LeakSanitizer, the unit suite, and valgrind
# (make check-valgrind).  The matrix looks for crashes, undefined
# behaviour, statuses and labels.
ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0
export ASAN_OPTIONS

. "$(dirname "$0")/../harness.sh"
mpi=
if [ $# -gt 1 ] && command -v mpirun >/dev/null 2>&1; then
	case $2 in /*) mpi=$2 ;; *) mpi=$(pwd)/$2 ;; esac
	if [ "$(id -u)" -eq 0 ]; then
		export OMPI_ALLOW_RUN_AS_ROOT=1 \
		    OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
	fi
fi
every=${MPI_EVERY:-13}
jobs=${ATTN_MATRIX_JOBS:-$(getconf _NPROCESSORS_ONLN 2>/dev/null || echo 2)}
cases=$work/cases
: >"$cases"

# ------------------------------------------------------------- inputs

# The rows of a csv nested into a JSON array of dims "$1" and rows:
# "2 3" makes a 2 x 3 x C array of six csv rows.
nest() {
	awk -F, -v dims="$1" '
	BEGIN { n = split(dims, d, " ") }
	{ row[NR] = "[" $0 "]" }
	END {
		cnt = NR
		for (k = n; k >= 1; k--) {
			m = 0
			for (i = 1; i <= cnt; i += d[k]) {
				s = "["
				for (j = 0; j < d[k]; j++)
					s = s (j ? "," : "") row[i + j]
				row[++m] = s "]"
			}
			cnt = m
		}
		print row[1]
	}'
}

seed=0
# A seeded array of dims "$2" (outer dims, then rows and columns) into
# the JSON file $1.
array() {
	seed=$((seed + 1))
	file=$1
	# shellcheck disable=SC2086 # the dims are words
	set -- $2
	rows=1 outer=
	while [ $# -gt 1 ]; do
		rows=$((rows * $1))
		outer="$outer $1"
		shift
	done
	"$bin" gen "${rows}x$1" --seed $seed -f csv | nest "$outer" \
	    >"$work/$file"
	# Q and XQ as .npy too, the same numbers (attn-mpi reads them by
	# rows)
	case $file in
	*-q.json | *-xq.json) "$bin" gen "$(echo $outer $1 | tr ' ' x)" --seed $seed \
	    -f npy -o "$work/${file%.json}.npy" ;;
	esac
}

# A projection layer, W_Q d x H*d_k, W_K and W_V d x G*d_k, W_O
# H*d_v x d_out, all 2-D, as --proj reads it.
layer() {
	file=$work/$1
	printf '{"W_Q": %s,\n"W_K": %s,\n"W_V": %s,\n"W_O": %s}\n' \
	    "$("$bin" gen "3x$2" --seed 101 -f csv | nest 3)" \
	    "$("$bin" gen "3x$3" --seed 102 -f csv | nest 3)" \
	    "$("$bin" gen "3x$3" --seed 103 -f csv | nest 3)" \
	    "$("$bin" gen "$2x3" --seed 104 -f csv | nest "$2")" >"$file"
}

# The inputs of layout $1 (2d, 3d, bhsd, bshd, 2dl): B $2 batches, H $3
# heads sharing G $4 KV heads, T $5 queries, S $6 keys, d_k = d_v = 2 a
# head.  Q, K, V and dO as the layout has them (4-D in its order, else
# [B x] rows x heads*d), dO for embeddings ([B x] T x H*d_v, which have
# no head dim), XQ and XKV of 3 columns each, and the layer.
inputs() {
	l=$1 B=$2 H=$3 G=$4 T=$5 S=$6
	b=
	[ "$B" -gt 1 ] && b="$B "
	case $l in
	bhsd) q="$B $H $T 2" k="$B $G $S 2" ;;
	bshd) q="$B $T $H 2" k="$B $S $G 2" ;;
	*) q="$b$T $((H * 2))" k="$b$S $((G * 2))" ;;
	esac
	array "$l-q.json" "$q"
	array "$l-k.json" "$k"
	array "$l-v.json" "$k"
	array "$l-do.json" "$q"
	array "$l-do-proj.json" "$b$T $((H * 2))"
	array "$l-xq.json" "$b$T 3"
	array "$l-xkv.json" "$b$S 3"
	layer "$l-layer.json" $((H * 2)) $((G * 2))
}

inputs 2d 1 2 1 3 2
inputs 3d 2 2 2 2 3
inputs bhsd 2 2 1 2 3
inputs bshd 2 2 2 3 2
# A bias of each broadcast shape, one a layout, for grad_bias.
array 2d-bias.json "1 2"
array 3d-bias.json "2 1 3"
array bhsd-bias.json "1 2 2 3"
array bshd-bias.json "2 2 3 1"
array 2dl-bias.json "2 3"
# d2l's 2-D valid_lens (--valid-lens), B x T for 3-D: batch 1's first
# query sees no key.
echo '[[0, 3], [2, 1]]' >"$work/3d-lens.json"
# 2-D given --layout bhsd (printed 4-D), and V's csv header naming its
# columns: a, b for KV head 1, c, d for KV head 2.
inputs 2dl 1 4 2 2 3
{ echo a,b,c,d; "$bin" gen 3x4 --seed 99 -f csv; } >"$work/2dl-v.csv"
# The sinks: a logit for each query head.
echo '0.5 -0.25' >"$work/sinks-2.txt"
echo '0.5 -0.25 0 1' >"$work/sinks-4.txt"
# A kernel's ALiBi slopes: one a query head, and B x H for two batches.
echo '0.5 0.125' >"$work/slopes-2.txt"
echo '1 0.5 0.25 0.125' >"$work/slopes-4.txt"
echo '[[0.5, 0.125], [2, 0.25]]' >"$work/slopes-2x2.json"
# Paged caches: bshd's K and V (2 x 2 x 2 x D) as FlashAttention's cache
# of 2 pages of 2 keys, named in reverse; bhsd's (2 x 1 x 3 x D) as
# FlashInfer's hnd cache of 2 pages of 3, batch 2's last page holding 2.
echo '[[1], [0]]' >"$work/paged-table.json"
echo '[0, 1, 2]' >"$work/paged-indptr.json"
echo '[1, 0]' >"$work/paged-indices.json"
echo '[3, 2]' >"$work/paged-last.json"
# Dropout masks: booleans T x S for 2-D, and as S_dmask (normal numbers,
# the negative ones dropped) B x H x T x S, B x 1 x 1 x S broadcast, and
# 1 x H x T x S for 2-D laid out bhsd.
echo '[[true, false], [true, true], [false, true]]' >"$work/2d-dropout.json"
array 3d-dropout.json "2 2 2 3"
array bhsd-dropout.json "2 2 2 3"
array bshd-dropout.json "2 1 1 2"
array 2dl-dropout.json "1 4 2 3"
printf '\223NUMPY' >"$work/magic"
printf 'PK\003\004' >"$work/zip-magic"

# ------------------------------------------------------------- cases

# A case: the status wanted, how to check what it printed (none, text,
# delim, tsv, html, npy, npz, txt, svg; fails: the report of a failed
# check), the stage it prints alone (for delim), and attn's arguments
# (words without blanks, run from the worker's directory, inputs under
# ../).
add() {
	want=$1 check=$2 stage=$3
	shift 3
	echo "$want|$check|$stage|$*" >>"$cases"
}

# The combinations attn refuses (a usage error, 64): npy holds one
# stage, not all of them, nor the statistics' table, which npz does not
# hold either; the heatmap is drawn as a table only.
refuse() {
	add 64 none - "$@" -s all -f npy -o out.npy
	add 64 none - "$@" --stats -f npy -o out.npy
	add 64 none - "$@" -s all --stats -o out.npz
	add 64 none - "$@" --heatmap -f csv
}

# Every printer of variant "$@" (options and operands, labels added)
# on the stages $stages: each stage alone where a stage alone is printed
# otherwise (npy; a csv of one block has no comment line), all of them
# at once in every format that takes several, with the statistics after
# them, and each printer that is not a format alone.  The page and
# --arithmetic exit $page (0, or 64 where the variant refuses them).
page=0
printers() {
	for s in $stages; do
		add 0 npy "$s" "$@" -s "$s" -o out.npy
		add 0 delim "$s" "$@" -s "$s" -f csv --header
	done
	add 0 text - "$@" -s all --stats --heatmap
	add 0 none - "$@" -s all --stats -f csv
	add 0 delim - "$@" -s all --stats -f csv --header
	add 0 tsv - "$@" -s all --stats -f tsv --header
	add 0 none - "$@" -s all --stats -f json
	add 0 txt - "$@" -s all -o out.txt
	add 0 npz - "$@" -s all -o out.npz
	add 0 npz - "$@" -s all -f npz --npy-dtype f4 -o out.npz
	add $page html - "$@" --stats -f html
	add 0 text - "$@" --explain --stats --heatmap
	add $page text - "$@" --explain --arithmetic
	add 0 none - "$@" --stats
	add 0 none - "$@" --stats -f csv
	add 0 none - "$@" --stats -f json
	add 0 file - "$@" --stats -o out.txt
	add 0 none - "$@" --heatmap
	add 0 svg - "$@" --svg out.svg
	for range in max row; do
		add 0 none - "$@" --heatmap --color-range $range
		add 0 svg - "$@" --svg out.svg --color-range $range
		add $page html - "$@" -f html --color-range $range
	done
	refuse "$@"
}

forward="scores scaled weights output lse mask"
backward="grad_weights delta grad_scaled grad_q grad_k grad_v"
for l in 2d 3d bhsd bshd 2dl; do
	qkv="../$l-q.json ../$l-k.json ../$l-v.json"
	sinks=../sinks-2.txt
	case $l in
	2d) opt="--heads 2 --kv-heads 1" ;;
	3d) opt="--heads 2" ;;
	bhsd) opt="--layout bhsd" ;;
	bshd) opt="--layout bshd" ;;
	2dl)
		opt="--heads 4 --kv-heads 2 --layout bhsd"
		qkv="../$l-q.json ../$l-k.json ../$l-v.csv"
		sinks=../sinks-4.txt ;;
	esac
	case $l in
	2d | bshd) labels="--query-labels Qa,Qb,Qc --key-labels Ka,Kb" ;;
	*) labels="--query-labels Qa,Qb --key-labels Ka,Kb,Kc" ;;
	esac
	dout=../$l-do.json
	stages=$forward
	printers $opt $labels $qkv
	printers $opt $labels --causal $qkv
	stages="$forward $backward"
	printers $opt $labels --grad $dout $qkv
	# Embeddings have no head dim: the heads come from --heads.
	case $l in
	bhsd) popt="--heads 2 --kv-heads 1 --layout bhsd" ;;
	bshd) popt="--heads 2 --layout bshd" ;;
	*) popt=$opt ;;
	esac
	stages="q k v q_rot k_rot projected $forward $backward"
	printers $popt $labels --proj ../$l-layer.json --rope \
	    --grad ../$l-do-proj.json ../$l-xq.json ../$l-xkv.json
	# q, k and v without a layer: the operands as read
	stages="q k v q_rot k_rot $forward"
	printers $opt $labels --rope $qkv
	stages=$forward
	printers $opt $labels --sinks $sinks $qkv
	# ALiBi with a kernel's slopes (H; B x H where there are two
	# batches), causal, forward and backward, and emulated
	slopes=../slopes-2.txt
	case $l in
	2dl) slopes=../slopes-4.txt ;;
	3d | bhsd | bshd) slopes=../slopes-2x2.json ;;
	esac
	stages="$forward $backward"
	printers $opt $labels --alibi-slopes $slopes --causal --grad $dout \
	    $qkv
	stages=$forward
	printers $opt $labels --alibi-slopes $slopes --emulate bf16 $qkv
	# dropout with a given mask, forward and backward (the page and
	# --arithmetic refuse it)
	stages="$forward dropped $backward"
	page=64
	printers $opt $labels --dropout-p 0.25 \
	    --dropout-mask ../$l-dropout.json --causal --grad $dout $qkv
	printers $opt $labels --dropout-p 0.25 \
	    --dropout-mask ../$l-dropout.json --emulate bf16 --grad $dout $qkv
	page=0
	# FlashAttention 3's fp8 forward has no dropout
	add 64 none - $opt --dropout-p 0.25 --dropout-mask ../$l-dropout.json \
	    --emulate fp8-e4m3 $qkv
	# a broadcast bias as read, its gradient and the sinks'
	stages="bias $forward $backward grad_bias grad_sinks"
	printers $opt $labels --grad $dout --bias ../$l-bias.json \
	    --sinks $sinks $qkv
	printers $opt $labels --emulate fp16 --grad $dout \
	    --bias ../$l-bias.json --sinks $sinks $qkv
	stages=$forward
	# lse as kernels store it, with rows that may attend no key (T > S
	# aligned bottom-right) where the layout has them
	printers $opt $labels --causal --align bottom-right --lse-base 2 \
	    --lse-masked inf $qkv
	printers $opt $labels --emulate fp16 $qkv
	printers $opt $labels --emulate fp8-e4m3 $qkv
	printers $opt $labels --emulate fp8-e5m2 --descale-q 0.5 \
	    --descale-k 2 --descale-v 0.25 $qkv
	printers $opt $labels --descale-q 0.5 --descale-v 4 $qkv
	stages="$forward $backward"
	printers $opt $labels --emulate fp16 --grad $dout $qkv
	# the scale on k (--emulate-order), given and chosen by --like
	# flash; refused without an emulation that scales an operand
	printers $opt $labels --emulate bf16 --emulate-order k --softcap 2 \
	    --grad $dout $qkv
	stages=$forward
	printers $opt $labels --like flash --emulate fp32 --causal $qkv
	add 64 none - $opt --emulate-order k $qkv
	add 64 none - $opt --emulate fp8-e4m3 --emulate-order k $qkv
	stages="$forward $backward"
	# --check of several stages from a JSON object keyed by stage
	# (attn's own -f json of them), as a table and as JSON; against the
	# causal ones it fails (exit 1), after the hints are tried
	all=output,lse,grad_q,grad_k,grad_v
	mkdir -p "$work/ref"
	(cd "$work/ref" &&
	    "$bin" $opt --grad $dout -s $all -f json $qkv >../$l-ref.json &&
	    "$bin" $opt --grad $dout --causal -s $all -f json $qkv \
	    >../$l-ref-causal.json) || exit 1
	add 0 none - $opt --grad $dout --check ../$l-ref.json $qkv
	add 0 none - $opt --grad $dout --check ../$l-ref.json -f json $qkv
	add 1 fails - $opt --grad $dout --check ../$l-ref-causal.json $qkv
	add 1 fails - $opt --grad $dout --check ../$l-ref-causal.json -f json \
	    -s output,grad_k $qkv
	# against an emulated baseline, each (batch, head) held to its own
	# (--check-by head, the default) and the whole stage (tensor)
	add 0 none - $opt --grad $dout --emulate fp32 --check ../$l-ref.json $qkv
	add 0 none - $opt --grad $dout --emulate bf16 --check-by tensor \
	    --check ../$l-ref.json -f json $qkv
	add 0 none - $opt --grad $dout --emulate bf16 --emulate-order k \
	    --check ../$l-ref.json $qkv
	add 1 fails - $opt --grad $dout --emulate fp16 --check \
	    ../$l-ref-causal.json -f json $qkv
	add 1 fails - $opt --grad $dout --emulate fp16 --check-by tensor \
	    --check ../$l-ref-causal.json $qkv
	# grad_q's numbers named grad_v (a failing row, of the wrong shape
	# where T x H*d_k is not S x G*d_v) and grad_v's named dV (not
	# checked, near dv)
	sed -e 's/"grad_v"/"dV"/' -e 's/"grad_q"/"grad_v"/' \
	    "$work/$l-ref.json" >"$work/$l-ref-misnamed.json" || exit 1
	add 1 fails - $opt --grad $dout --check ../$l-ref-misnamed.json $qkv
	add 1 fails - $opt --grad $dout --check ../$l-ref-misnamed.json \
	    -f json $qkv
	# the same stages from attn's own .npz of them
	(cd "$work/ref" &&
	    "$bin" $opt --grad $dout -s $all -o ../$l-ref.npz $qkv &&
	    "$bin" $opt --grad $dout --causal -s $all -o ../$l-ref-causal.npz \
	    $qkv) || exit 1
	add 0 none - $opt --grad $dout --check ../$l-ref.npz -s $all $qkv
	add 1 fails - $opt --grad $dout --check ../$l-ref-causal.npz -s $all \
	    $qkv
	# and of grad_bias and grad_sinks beside them
	reduce="--grad $dout --bias ../$l-bias.json --sinks $sinks"
	all=output,grad_q,grad_bias,grad_sinks
	(cd "$work/ref" &&
	    "$bin" $opt $reduce -s $all -f json $qkv >../$l-ref-bias.json &&
	    "$bin" $opt $reduce --causal -s $all -f json $qkv \
	    >../$l-ref-bias-causal.json) || exit 1
	add 0 none - $opt $reduce --check ../$l-ref-bias.json $qkv
	add 0 none - $opt $reduce --check ../$l-ref-bias.json -f json $qkv
	add 1 fails - $opt $reduce --check ../$l-ref-bias-causal.json $qkv
	add 1 fails - $opt $reduce --check ../$l-ref-bias-causal.json -f json \
	    -s grad_bias,grad_sinks $qkv
	# packed sequences (2-D, one batch: two sequences of 2 and 1
	# queries, 1 key each) and used keys per batch (3-D, two batches
	# of 3 keys, 2 and 3 of them used), forward and backward
	stages="$forward $backward"
	case $l in
	2d)
		packed="--cu-seqlens-q 0,2,3 --cu-seqlens-k 0,1,2 --seqused-k 1,1"
		printers $opt $labels $packed --causal --alibi --rope --grad \
		    $dout $qkv
		# --check by (sequence, head) against an emulated baseline
		(cd "$work/ref" && "$bin" $opt $packed --alibi --grad $dout \
		    -s output,lse,grad_q,grad_k,grad_v -f json $qkv \
		    >../$l-ref-packed.json) || exit 1
		add 0 none - $opt $packed --alibi --grad $dout --emulate fp32 \
		    --check ../$l-ref-packed.json -f json $qkv
		add 1 fails - $opt $packed --alibi --grad $dout --emulate fp16 \
		    --check ../$l-ref.json $qkv ;;
	3d)
		printers $opt $labels --seqused-k 2,3 --causal \
		    --align bottom-right --alibi --grad $dout $qkv
		printers $opt $labels --valid-lens ../3d-lens.json \
		    --grad $dout $qkv ;;
	bhsd)
		printers $opt $labels --valid-lens 1,3 --causal --grad $dout \
		    $qkv ;;
	esac
	# paged KV caches, forward and backward (the gathered keys)
	case $l in
	bshd)
		printers $opt $labels --block-table ../paged-table.json \
		    --seqused-k 2,2 --key-leftpad 0,1 --causal \
		    --align bottom-right --grad $dout $qkv ;;
	bhsd)
		printers $opt $labels --kv-indptr ../paged-indptr.json \
		    --kv-indices ../paged-indices.json \
		    --kv-last-page-len ../paged-last.json --kv-layout hnd \
		    --window 1,0 --grad $dout $qkv ;;
	esac
	# printers that do not go together: a page or --explain shows every
	# stage, --header is csv's and tsv's, npy and npz need a stage to
	# write
	add 64 none - $opt $labels -f html -s weights $qkv
	add 64 none - $opt $labels --explain -f csv $qkv
	add 64 none - $opt $labels --header -f txt $qkv
	add 64 none - $opt $labels --svg out.svg -f npy $qkv
	add 64 none - $opt $labels --svg out.svg -f npz $qkv
done

# Heads of d = 32 in bhsd: the npy and npz writers put each row of a
# stage whose heads lie apart (output, the grads) where it lies, not
# through a flat copy, from runs of 32 numbers (print_npy.c); --check
# reads what they wrote back against the same computation, and against
# a causal one fails.
array bhsdw-q.json "1 2 3 32"
array bhsdw-k.json "1 2 2 32"
array bhsdw-v.json "1 2 2 32"
array bhsdw-do.json "1 2 3 32"
wide="--layout bhsd --grad ../bhsdw-do.json ../bhsdw-q.json ../bhsdw-k.json
    ../bhsdw-v.json"
all=output,lse,grad_q,grad_k,grad_v
# shellcheck disable=SC2086 # the options are words
(cd "$work/ref" && "$bin" $wide -s $all -o ../bhsdw-ref.npz &&
    "$bin" $wide -s grad_k -o ../bhsdw-dk.npy) || exit 1
for s in output grad_q grad_k grad_v; do
	add 0 npy "$s" $wide -s "$s" -o out.npy
done
add 0 npz - $wide -s $all -o out.npz
add 0 npz - $wide -s $all --npy-dtype f4 -o out.npz
add 0 none - $wide --check ../bhsdw-ref.npz -s $all
add 0 none - $wide --check ../bhsdw-dk.npy -s grad_k
add 1 fails - --causal $wide --check ../bhsdw-ref.npz -s $all

# attn softmax: the scaled logits of a 3-D run (B 2, T 2, S 3), with its
# V and without, and 4-D bhsd ones (B 2, H 2) with a V split likewise:
# every stage it has, to each writer, with rules that follow the
# scaling; --explain and the page, which start from Q and K, refused.
array sm4-v.json "2 2 3 2"
(cd "$work/ref" && "$bin" -s scaled -o ../sm3-scaled.npy ../3d-q.json \
    ../3d-k.json ../3d-v.json && "$bin" --heads 2 -s scaled \
    -o ../sm4-scaled.npy ../3d-q.json ../3d-k.json ../3d-v.json) || exit 1
labels="--query-labels Qa,Qb --key-labels Ka,Kb,Kc"
for sm in "../sm3-scaled.npy ../3d-v.json" ../sm3-scaled.npy \
    "--layout bhsd --sinks ../sinks-2.txt ../sm4-scaled.npy ../sm4-v.json"; do
	stages="scores scaled weights lse mask"
	case $sm in *v.json) stages="$stages output" ;; esac
	for s in $stages; do
		add 0 npy "$s" softmax $labels --causal -s "$s" -o out.npy $sm
		add 0 delim "$s" softmax $labels --valid-lens 1,3 -s "$s" \
		    -f csv --header $sm
	done
	add 0 text - softmax $labels --causal -s all --stats --heatmap $sm
	add 0 none - softmax $labels --softcap 2 -s all -f json $sm
	add 0 npz - softmax $labels -s all -o out.npz $sm
	add 0 svg - softmax $labels --svg out.svg $sm
	add 64 none - softmax $labels --explain $sm
	add 64 none - softmax $labels -f html $sm
done

# ------------------------------------------------------------- running

# Why the case just run (status $st, files out and err in the current
# directory) fails, or nothing.
judge() {
	if [ "$st" -eq 124 ]; then
		echo "timed out after 20 s (a hang?)"
		return
	fi
	if grep -q -e Sanitizer -e 'runtime error' err; then
		echo "sanitizer: $(grep -m 1 -e ERROR -e 'runtime error' err)"
		return
	fi
	if [ "$st" != "$want" ]; then
		echo "exit $st, expected $want: $(head -n 1 err)"
		return
	fi
	# a check that fails (exit 1): its report, and nothing on stderr
	if [ "$want" = 1 ] && [ "$check" = fails ]; then
		[ -s out ] || echo "a failed check printed no report"
		[ -s err ] && echo "standard error: $(head -n 1 err)"
		grep -q -e FAIL -e '"pass": false' out ||
		    echo "a failed check's report says no FAIL"
		return
	fi
	if [ "$want" != 0 ]; then
		if [ -s out ]; then
			echo "refused, but printed on standard output"
		elif [ "$(grep -c '^attn: ' err)" != 1 ] ||
		    ! head -n 1 err | grep -q '^attn: '; then
			echo "refused without one attn: line: $(head -c 200 err)"
		fi
		return
	fi
	# the one warning a run may give: rows that may attend no key
	if grep -v -q '^attn: warning: [0-9]* quer[a-z]* may attend no key' \
	    err; then
		echo "standard error: $(head -n 1 err)"
		return
	fi
	case $check in
	npy)
		cmp -s -n 6 out.npy ../magic || echo "out.npy is not an .npy"
		return ;;
	npz)
		cmp -s -n 4 out.npz ../zip-magic || echo "out.npz is not a zip"
		return ;;
	svg)
		grep -q '<svg' out.svg || echo "out.svg holds no <svg"
		return ;;
	file)
		[ -s out.txt ] || echo "out.txt is empty"
		return ;;
	txt)
		awk '/^# / { next } { for (i = 1; i <= NF; i++)
		    if ($i !~ /^-?([0-9.]+(e[-+][0-9]+)?|inf|nan)$/) {
		    print "out.txt: not a number: " $i; exit } }' out.txt
		[ -s out.txt ] || echo "out.txt is empty"
		return ;;
	esac
	if [ ! -s out ]; then
		echo "nothing on standard output"
		return
	fi
	case $check in
	# awk's own errors too are the case's failure, not a pass
	text | delim | html)
		awk -v mode="$check" -v stage="$stage" -f "$here/labels.awk" \
		    out 2>&1 || [ $? -eq 1 ] || echo "labels.awk failed"
		;;
	tsv)
		awk -v mode=delim -v sep='	' -f "$here/labels.awk" out 2>&1 ||
		    [ $? -eq 1 ] || echo "labels.awk failed"
		;;
	esac
}

# What attn's run of the case wrote (standard output and error, and the
# files), which the second column compares its own with.
outputs='out err out.npy out.npz out.txt out.svg'

# Why attn-mpi's run of the case (attn's outputs moved into attn/)
# differs from attn's, or nothing.  Standard input is not the case
# list's: mpirun would pass that to rank 0.
# Every other case of the sample whose Q (or a layer's XQ) is a JSON file
# (which rank 0 alone reads) reads it from a .npy instead, which each
# process reads by rows (in place, or folded from bhsd): the same
# numbers, so attn's outputs, where attn's run did not end on an error
# (whose line would name the file).
judge_mpi() {
	case "$st:$((num / every % 2)):$args" in
	[01]:1:*-q.json* | [01]:1:*-xq.json*)
		why=$(mpi_like "$(echo "$args" |
		    sed 's/-\(x\{0,1\}\)q\.json/-\1q.npy/')")
		[ -n "$why" ] && why="with Q as .npy: $why" ;;
	*) why=$(mpi_like "$args") ;;
	esac
	echo "$why"
}

# Why attn-mpi's run of args $1 differs from attn's run of the case, or
# nothing.
mpi_like() {
	rm -f out.npy out.npz out.txt out.svg
	# shellcheck disable=SC2086 # args are words
	timeout 60 mpirun -q --oversubscribe -n 2 "$mpi" $1 \
	    </dev/null >out 2>err
	mst=$?
	if grep -q -e Sanitizer -e 'runtime error' err; then
		echo "sanitizer: $(grep -m 1 -e ERROR -e 'runtime error' err)"
	elif [ "$mst" != "$st" ]; then
		echo "exit $mst, attn's $st: $(head -n 1 err)"
	else
		for f in $outputs; do
			if [ -e "attn/$f" ] && [ -e "$f" ]; then
				cmp -s "attn/$f" "$f" && continue
				echo "$f is not attn's"
				return
			elif [ -e "attn/$f" ] || [ -e "$f" ]; then
				echo "$f written by one of attn and attn-mpi alone"
				return
			fi
		done
	fi
}

# Worker $1 of $jobs: every case whose line number is $1 modulo $jobs,
# in a directory of its own; a line of failures.$1 for each failure, a
# line of done.$1 for each case.
worker() {
	mkdir "$work/w$1" "$work/w$1/attn"
	cd "$work/w$1" || exit 1
	awk -v n="$jobs" -v w="$1" 'NR % n == w { print NR "|" $0 }' \
	    "$cases" |
	while IFS='|' read -r num want check stage args; do
		rm -f out.npy out.npz out.txt out.svg
		# shellcheck disable=SC2086 # args are words
		timeout 20 "$bin" $args >out 2>err
		st=$?
		why=$(judge)
		[ -n "$why" ] && echo "FAIL attn $args: $why" >>"$work/failures.$1"
		if [ -z "$why" ] && [ -n "$mpi" ] && [ $((num % every)) -eq 0 ]
		then
			for f in $outputs; do
				rm -f "attn/$f"	# (set -f: no patterns)
				[ -e "$f" ] && mv "$f" attn/
			done
			why=$(judge_mpi)
			[ -n "$why" ] && echo "FAIL attn-mpi -n 2 $args: $why" \
			    >>"$work/failures.$1"
			echo >>"$work/mpi.$1"
		fi
		echo >>"$work/done.$1"
	done
}

set -f	# the arguments hold no patterns
w=0
while [ $w -lt "$jobs" ]; do
	worker $w &
	w=$((w + 1))
done
wait
set +f
total=$(wc -l <"$cases")
ran=$(cat "$work"/done.* | wc -l)
fail=$(cat "$work"/failures.* 2>/dev/null | wc -l)
pass=$((ran - fail))
cat "$work"/failures.* 2>/dev/null
if [ "$ran" -ne "$total" ]; then
	echo "FAIL matrix: $ran of $total combinations ran"
	fail=$((fail + 1))
fi
echo "matrix: $total combinations, $jobs at a time${mpi:+; $(cat \
    "$work"/mpi.* 2>/dev/null | wc -l) of them through attn-mpi -n 2 too}"
tally matrix
