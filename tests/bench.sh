#!/bin/sh
# bench.sh ATTN BENCH_COMPUTE BENCH_SPAWN - `make bench` in miniature
# (bench/bench.py at n = 32, the kernel at 64, --emulate at 32, the
# backward at 32 (with PyTorch's peer when the Python has it),
# self-attention at 128, numbers 256 rows at a time, one run each), so
# that the benchmark cannot rot between the times someone runs it:
#
#   0. bench-spawn, which times every run, passes on its command's exit
#      status and reports the command's own peak RSS, not its own;
#      bench/busiest.sh passes the status on and reports a busy
#      thread's CPU time;
#   1. it prints the table: the kernel's instruction set (and with --as
#      avx2, AVX2's on every side), the processor, the FMA peak of each
#      instruction set and NumPy's dgemm as a fraction of its own, a
#      row for each input format (and for PyTorch, where the Python has
#      it), each with attn ahead of its peer or not, the kernel as a
#      fraction of the peak at d = 64 and 128 (beside NumPy's dgemm),
#      its rate's fall with n, the whole run from .npy against it, where
#      one thread's cycles go (bench-compute -t, which also gives three
#      rates and runs on one thread only), the
#      backward row, the backward's kernels against the peak, --emulate
#      against the forward, a paged run against the forward, the number
#      figures, the large run from CSV and from .npy, attn's start-up,
#      the Python module's rows (3 cases, the backward at 32); and keeps
#      it in table.txt;
#   2. an attn whose output is not NumPy's (a wrapper adding --scale 0.5)
#      fails it, naming the rows that disagree;
#   3. an attn that fails on JSON stops it with attn's own message;
#   4. at n = 1 no rate or time prints as zero, and a figure measured as
#      zero all the same stops it, named, never divided by.
#
# Needs a Python with NumPy (make test-deps installs it); without one the
# suite is skipped with a notice, as npy.sh is.
set -u
. "$(dirname "$0")/harness.sh"

compute=$2
case $compute in /*) ;; *) compute=$(pwd)/$compute ;; esac
spawn=$3
case $spawn in /*) ;; *) spawn=$(pwd)/$spawn ;; esac
bench=$here/../bench/bench.py

. "$here/python.sh"
if [ -z "$py" ]; then
	echo "bench: SKIPPED: no Python with NumPy (Debian:" \
	    "apt-get install python3-numpy)"
	exit 0
fi

# bench.py at the smallest sizes, attn being $1; output in $work/$2;
# more options after them.  PyTorch, slow to start, only in the first.
small() {
	a=$1
	o=$2
	shift 2
	"$py" "$bench" --attn "$a" --compute "$compute" --spawn "$spawn" \
	    --work "$work/w" \
	    --python "$py" --sizes 32 --compute-sizes 64 --big 128 \
	    --grad-sizes 32 --dgemm 64 --numbers-rows 256 --emulate-sizes 32 \
	    --paged-sizes 32 --compute-d 64,128 \
	    --runs 1 --torch-sizes 0 --py-cases 3 --py-grad 32 "$@" \
	    >"$work/$o.out" 2>"$work/$o.err"
}

# Fail case $1 unless the file $2 has a line matching the regex $3.
has() {
	if grep -Eq "$3" "$2"; then verdict "$1" ""; else
		verdict "$1" "no line matching '$3' in $(cat "$2")"; fi
}

# 0. The launcher: a status passed on, a child's 64 MiB seen, and a
# small child's peak not this shell's or Python's.
"$spawn" "$work/sp" sh -c 'exit 3'
s=$?
if [ "$s" -eq 3 ] && grep -Eq '^[0-9]+\.[0-9]{6} [0-9]+ [0-9]+\.[0-9]{6}$' "$work/sp"; then
	verdict "bench-spawn passes the status on" ""
else verdict "bench-spawn passes the status on" "exit $s: $(cat "$work/sp")"; fi
# bench/busiest.sh: the status passed on, and the CPU time of a
# command's one busy thread read while it runs: all of it the busiest's.
busiest="$here/../bench/busiest.sh"
sh "$busiest" sh -c 'exit 3' 2>"$work/bu"
s=$?
if [ "$s" -eq 3 ] && grep -Eq '^wall [0-9.]+ cpu [0-9.]+ busiest [0-9.]+ threads [0-9]+$' "$work/bu"; then
	verdict "busiest.sh passes the status on" ""
else verdict "busiest.sh passes the status on" "exit $s: $(cat "$work/bu")"; fi
sh "$busiest" sh -c 'i=0; while [ $i -lt 400000 ]; do i=$((i + 1)); done' \
    2>"$work/bb"
if awk '{ exit !($4 >= 0.1 && $6 == $4 && $8 == 1) }' "$work/bb"; then
	verdict "busiest.sh reports a thread's CPU time" ""
else verdict "busiest.sh reports a thread's CPU time" "$(cat "$work/bb")"; fi
"$spawn" "$work/big" "$py" -c 'b = bytearray(64 << 20)'
"$spawn" "$work/small" sh -c ':'
big=$(cut -d' ' -f2 "$work/big")
small=$(cut -d' ' -f2 "$work/small")
if [ "$big" -ge 65536 ] && [ "$small" -lt 16384 ]; then
	verdict "bench-spawn reports the command's peak RSS" ""
else verdict "bench-spawn reports the command's peak RSS" \
    "64 MiB child: $big KiB, sh -c ':': $small KiB"; fi

# bench-compute's loops are ATTN_ISA's when it names one, as attn's are.
if ATTN_ISA=c "$compute" -r 1 8 | grep -q '^isa c$'; then
	verdict "bench-compute follows ATTN_ISA" ""
else verdict "bench-compute follows ATTN_ISA" \
    "$(ATTN_ISA=c "$compute" -r 1 8 2>&1)"; fi

# bench-compute -p: the plain C loop's peak with four times as many
# threads as CPUs is no more than twice the peak with one a CPU (the
# threads that cannot run at once are not counted as cores).
n=$("$compute" -p -r 1 | sed -n 's/^threads //p')
one=$("$compute" -p -r 1 | sed -n 's/^peak c //p')
four=$("$compute" -p -j $((4 * n)) -r 1 | sed -n 's/^peak c //p')
if awk -v a="$one" -v b="$four" 'BEGIN { exit !(a > 0 && b > 0 && b < 2 * a) }'
then verdict "bench-compute -p counts no more threads than CPUs" ""
else verdict "bench-compute -p counts no more threads than CPUs" \
    "$n threads: $one GFLOP/s, $((4 * n)): $four"; fi

# bench-compute -t: the three steps, each a rate, on one thread only.
t=$("$compute" -t -r 1 -d 16 300)
if printf '%s\n' "$t" | grep -Eq '^threads 1$' &&
    printf '%s\n' "$t" | awk '$1 == "tiles" && $2 == 384 && $3 > 0 &&
    $4 > 0 && $5 > 0 && NF == 5 { ok = 1 } END { exit !ok }'
then verdict "bench-compute -t: three rates over whole blocks" ""
else verdict "bench-compute -t: three rates over whole blocks" "$t"; fi
if "$compute" -t -j 2 8 >/dev/null 2>&1; then
	verdict "bench-compute -t refuses more than one thread" "exit 0"
else verdict "bench-compute -t refuses more than one thread" ""; fi

# 1. The table.
if small "$bin" ok --torch-sizes 32 --compute-sizes 32,64; then
	verdict "a small run succeeds" ""
else verdict "a small run succeeds" "exit $?: $(cat "$work/ok.err")"; fi
has "attn's start-up" "$work/ok.out" \
    "^start-up: attn --explain data/examples/apple-cheese.json, medians of 21 runs: wall [0-9.]+ ms \(<= 5 ms (met|MISSED by [0-9]+%)\), CPU [0-9.]+ ms \(<= 2 ms (met|MISSED by [0-9]+%)\)\$"
has "the kernel's instruction set" "$work/ok.out" \
    "^attn threads: [0-9]+, kernel instruction set: (c|avx2|avx512);"
if lscpu 2>/dev/null | grep -q '^CPU family:'; then
	has "the processor's family and model" "$work/ok.out" \
	    "^attn .* bench, .*\(family [0-9]+, model [0-9]+\), "
fi
has "the FMA peak of each instruction set" "$work/ok.out" \
    "^FMA peak, [0-9]+ threads at once \(bench/peak\.c\), GFLOP/s: ((avx512|avx2) [0-9.]+, )*c [0-9.]+\$"
has "NumPy's dgemm as a fraction of its peak" "$work/ok.out" \
    "^NumPy's dgemm \(64 x 64 by 64 x 64, 2 n\^3 flops, [A-Za-z0-9]+ kernels\): [0-9.]+ GFLOP/s = [0-9.]+ of the (avx512|avx2|c) peak\$"
rows="csv json npy"
"$py" -c 'import torch' 2>/dev/null && rows="$rows torch"
for fmt in $rows; do
	has "a row for $fmt" "$work/ok.out" \
	    "^$fmt +32 +[0-9.]+ +[0-9.]+ +[0-9.]+x  (json/csv [0-9.]+ <= 1.2 (met|MISSED by [0-9]+%)|>= 1x (met|MISSED by [0-9]+%)) .* [0-9.]+e-[0-9]+\$"
done
has "json beside csv" "$work/ok.out" "^json .* json/csv [0-9.]+ <= 1.2 "
has "the kernel as a fraction of the peak, beside dgemm" "$work/ok.out" \
    "^  n = +64  d = +64  attn +[0-9.]+, by CPU time +[0-9.]+ = [0-9.]+ of the peak \(>= 0.85 (met|MISSED by [0-9]+%)\)   NumPy's attention +[0-9.]+ \(attn [0-9.]+x\)   attn/dgemm [0-9.]+\$"
has "the kernel at d = 128" "$work/ok.out" \
    "^  n = +64  d = 128  attn +[0-9.]+, by CPU time +[0-9.]+ = [0-9.]+ of the peak \(>= 0.85 (met|MISSED by [0-9]+%)\)\$"
has "the kernel's rate with n" "$work/ok.out" \
    "^  d = +64: the rate at n = 64 over n = 32: [0-9.]+ \(>= 0.95 (met|MISSED by [0-9]+%)\)\$"
has "the whole run from .npy against the kernel" "$work/ok.out" \
    "^  n = +32  the whole run from .npy: [0-9.e-]+ s, [0-9.e-]+ s of CPU; the kernel alone [0-9.e-]+ s, [0-9.e-]+ s of CPU: the whole run at [0-9.]+ of the kernel's rate, by CPU time [0-9.]+ \(>= 0.9 (met|MISSED by [0-9]+%)\)\$"
has "where one thread's cycles go, at d = 64 and 128" "$work/ok.out" \
    "^  d = +(64|128): Q K\\^T [0-9.]+ and P V [0-9.]+ on a block in the caches; a block's scores, softmax and P V [0-9.]+; the kernel on one thread at n = [0-9]+, every block fetched for every task, [0-9.]+\$"
has "--emulate beside the forward" "$work/ok.out" \
    "^  n = +32  forward +[0-9.]+ s   --emulate bf16 +[0-9.]+ s = [0-9.]+x \\(<= 3x (met|MISSED by [0-9]+%)\\)   --emulate fp32 "
has "--check by head beside by tensor" "$work/ok.out" \
    "^  n = +32  --check --emulate bf16 of output: by head +[0-9.]+ s, by tensor +[0-9.]+ s = [0-9.]+x\$"
has "the paged run beside the forward" "$work/ok.out" \
    "^  n = +32  forward +[0-9.]+ s   paged, 4 pages of 8 +[0-9.]+ s = [0-9.]+x \\(<= 1.2x (met|MISSED by [0-9]+%)\\)\$"
has "numbers parsed and printed" "$work/ok.out" \
    "^numbers, attn end to end .*, CPU time\): parse -?[0-9]+ ns/number, print -?[0-9]+"
has "the backward row" "$work/ok.out" \
    "^ +32 +[0-9.]+ +[0-9.]+ +[0-9.]+x  <= 3x "
has "the five stages' --check beside the forward" "$work/ok.out" \
    "^ +32 +[0-9.]+ +[0-9.]+ +[0-9.]+x  <= 3x (met|MISSED by [0-9]+%) +[0-9.]+ +[0-9.]+x  <= 5x "
has "the backward's kernels alone, against the peak" "$work/ok.out" \
    "^  n = +32 +[0-9.]+ s +[0-9.]+ s +[0-9.]+x   forward +[0-9.]+ = [0-9.]+ of the peak   forward \+ backward +[0-9.]+ = [0-9.]+ of the peak \(>= 0.8 (met|MISSED by [0-9]+%)\)\$"
has "the backward's peer, or why not" "$work/ok.out" \
    "^peer: (PyTorch float64 autograd|no PyTorch in the Python found)"
has "the large run" "$work/ok.out" \
    "^n = 128 self-attention, .*: [0-9.]+ s, [0-9.]+ of the dgemm rate .*, peak RSS [0-9]+ MiB"
has "the large run from .npy against the kernel" "$work/ok.out" \
    "^n = 128 self-attention, .npy in and out:\$"
has "the large run's whole run against the kernel" "$work/ok.out" \
    "^  n = +128  the whole run from .npy: [0-9.e-]+ s, [0-9.e-]+ s of CPU; the kernel alone [0-9.e-]+ s, [0-9.e-]+ s of CPU: the whole run at [0-9.]+ of the kernel's rate, by CPU time [0-9.]+ \(>= 0.9 (met|MISSED by [0-9]+%)\)\$"
if cmp -s "$work/ok.out" "$work/w/table.txt"; then
	verdict "the table is kept in table.txt" ""; else
	verdict "the table is kept in table.txt" "it differs"; fi

# --only: the parts named, and no other.
if small "$bin" only --only grad; then
	verdict "--only grad succeeds" ""
	has "--only grad has the backward row" "$work/only.out" \
	    "^ +32 +[0-9.]+ +[0-9.]+ +[0-9.]+x  <= 3x "
	if grep -Eq "^(csv|json|npy) |^  n = +64  d|--emulate|^numbers|self-attention|^start-up" \
	    "$work/only.out"; then
		verdict "--only grad runs nothing else" "$(cat "$work/only.out")"
	else verdict "--only grad runs nothing else" ""; fi
else verdict "--only grad succeeds" "exit $?: $(cat "$work/only.err")"; fi

# --as avx2: every program it starts is told to take AVX2's loops, and
# the header says so (on an AVX-512 machine NumPy's loops would
# otherwise read AVX512_...).
if small "$bin" as --only compute --as avx2; then
	verdict "--as avx2 succeeds" ""
	has "--as avx2 prints the settings" "$work/as.out" \
	    "^measured as an AVX2 machine: ATEN_CPU_CAPABILITY=avx2 ATTN_ISA=avx2 (NPY_DISABLE_CPU_FEATURES='[^']*' )?OPENBLAS_CORETYPE=Haswell\$"
	has "--as avx2: attn on AVX2 or less" "$work/as.out" \
	    "^attn threads: [0-9]+, kernel instruction set: (c|avx2); .*; NumPy's loops: [a-zA-Z0-9_]+\$"
	if grep -q "NumPy's loops: AVX512" "$work/as.out"; then
		verdict "--as avx2: NumPy on AVX2 or less" "$(cat "$work/as.out")"
	else verdict "--as avx2: NumPy on AVX2 or less" ""; fi
	has "--as avx2: the kernel against dgemm on avx2 loops" "$work/as.out" \
	    "^compute alone \(.*, (c|avx2) loops\)"
else verdict "--as avx2 succeeds" "exit $?: $(cat "$work/as.err")"; fi

# 2. Outputs that disagree.
cat >"$work/scaled" <<EOF
#!/bin/sh
[ "\$1" = gen ] || [ "\$1" = --version ] || set -- --scale 0.5 "\$@"
exec "$bin" "\$@"
EOF
chmod +x "$work/scaled"
if small "$work/scaled" scaled; then
	verdict "outputs that disagree fail the bench" "it passed"
else
	has "outputs that disagree fail the bench" "$work/scaled.err" \
	    "^bench: attn and NumPy disagree by more than 1e-09: csv n=32: .*; json n=32: .*; npy n=32: .*; check n=32 failed"
fi

# 3. A run that fails.
cat >"$work/nojson" <<EOF
#!/bin/sh
case "\$*" in */q32.json*) echo "attn: no JSON today" >&2; exit 65 ;; esac
exec "$bin" "\$@"
EOF
chmod +x "$work/nojson"
if small "$work/nojson" nojson; then
	verdict "a failed run stops the bench" "it passed"
else
	has "a failed run stops the bench" "$work/nojson.err" \
	    "^bench: [^ ]*nojson [^ ]*/q32\\.json .*: exit 65\$"
	has "with attn's message" "$work/nojson.err" "^attn: no JSON today\$"
fi

# 4. Figures too small or too slow to print.  At n = 1 a rate is a few
# MFLOP/s and the backward's forward a few microseconds: each is printed
# with the digits that keep it above zero, as a run slowed down by a
# loaded machine is, and the table takes its ratios.
if small "$bin" tiny --only compute,grad --compute-sizes 1 --grad-sizes 1
then
	verdict "rates and times at n = 1 are not rounded to zero" ""
	has "the kernel beside dgemm at n = 1" "$work/tiny.out" \
	    "^  n = +1  d = +64  attn +[0-9.]+, by CPU time +[0-9.]+ = [0-9.]+ of the peak .* attn/dgemm [0-9.]+\$"
	has "the backward's kernels at n = 1" "$work/tiny.out" \
	    "^  n = +1 +[0-9.]+ s +[0-9.]+ s +[0-9.]+x   forward "
else verdict "rates and times at n = 1 are not rounded to zero" \
    "exit $?: $(cat "$work/tiny.err")"; fi

# A figure measured as zero all the same (here a Python whose NumPy
# side says 0 GFLOP/s) is reported, naming it, and never divided by.
cat >"$work/zero" <<EOF
#!/bin/sh
if [ "\$2" = compute ]; then
	shift 3
	for n; do echo "\$n 0"; done
	exit 0
fi
exec "$py" "\$@"
EOF
chmod +x "$work/zero"
if small "$bin" zero --only compute --python "$work/zero"; then
	verdict "a rate of zero fails the bench" "it passed"
else
	has "a rate of zero fails the bench" "$work/zero.err" \
	    "^bench: NumPy's attention at n = 64: measured 0 GFLOP/s, which is no measurement\$"
	if grep -q Traceback "$work/zero.err"; then
		verdict "a rate of zero is not divided by" "$(cat "$work/zero.err")"
	else verdict "a rate of zero is not divided by" ""; fi
fi

tally bench
