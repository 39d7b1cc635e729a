#!/bin/sh
# run.sh ATTN LIBATTN_SO [PYTEST ARGS] - the Python module's suite
# (tests/python/test_*.py) with pytest under Debian's /usr/bin/python3
# (python3-numpy, python3-pytest): the module of the source tree over
# LIBATTN_SO (ATTN_LIBRARY), beside ATTN, the program, for the runs made
# both ways.  Where LIBATTN_SO was built with AddressSanitizer, the
# interpreter is not: the sanitizer's runtime is preloaded (leaks are
# the interpreter's own, not looked for).  Skipped, with a notice, where
# Debian's Python lacks NumPy or pytest.
set -eu

here=$(cd "$(dirname "$0")" && pwd)
bin=$1
so=$2
shift 2
py=/usr/bin/python3
if ! "$py" -c 'import numpy, pytest' >/dev/null 2>&1; then
	echo "python-test: skipped: $py lacks NumPy or pytest" \
	    "(python3-numpy, python3-pytest; make test-deps installs them)"
	exit 0
fi
asan=$(ldd "$so" | awk '$1 ~ /^libasan\.so/ { print $3 }')
ATTN=$(cd "$(dirname "$bin")" && pwd)/${bin##*/}
ATTN_LIBRARY=$(cd "$(dirname "$so")" && pwd)/${so##*/}
export ATTN ATTN_LIBRARY
if [ -n "$asan" ]; then
	LD_PRELOAD=$asan
	ASAN_OPTIONS=detect_leaks=0:${ASAN_OPTIONS:-}
	export LD_PRELOAD ASAN_OPTIONS
fi
cd "$here"
# --capture=sys: pytest holds Python's sys.stderr, not the descriptor, so
# that a sanitizer's report, written to descriptor 2 as the process
# aborts, is seen.
PYTHONDONTWRITEBYTECODE=1 exec "$py" -m pytest -q -p no:cacheprovider \
    --capture=sys "$@" .
