#!/bin/sh
# run.sh BUILD [QUICK] - what `make bench` runs: bench/bench.py (which
# says what it measures) on BUILD/attn and BUILD/bench-compute, each
# process timed by BUILD/bench-spawn, with
# BUILD/bench-numbers when the build has it.  QUICK non-empty (make bench
# BENCH_QUICK=1) runs the fast subset; QUICK "compute" (make bench
# BENCH_QUICK=compute) only the kernel alone.  BENCH_AS=avx2 in
# the environment (make bench BENCH_AS=avx2) measures an AVX-512 machine
# as an AVX2 one (bench/bench.py --as says how).
#
# The NumPy side runs on the Python tests/python.sh finds; without one,
# attn is measured alone and the table says so.
set -eu

build=$1
quick=${2:-}
here=$(cd "$(dirname "$0")" && pwd)

. "$here/../tests/python.sh"
driver=${py:-python3}

set -- --attn "$build/attn" --compute "$build/bench-compute" \
    --spawn "$build/bench-spawn" --work "$build/bench"
[ -x "$build/bench-numbers" ] && set -- "$@" --numbers "$build/bench-numbers"
[ -n "$py" ] && set -- "$@" --python "$py"
[ -n "${BENCH_AS:-}" ] && set -- "$@" --as "$BENCH_AS"
case $quick in
'') ;;
compute) set -- "$@" --compute-only ;;
*) set -- "$@" --quick ;;
esac
exec "$driver" "$here/bench.py" "$@"
