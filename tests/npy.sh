#!/bin/sh
# npy.sh ATTN - attn against NumPy itself: tests/npy_test.py (which says
# what it checks) run by an interpreter that imports numpy.
#
# The python3 first on PATH may lack NumPy (a pyenv one, say), so the
# Debian interpreter /usr/bin/python3 (package python3-numpy) is tried
# first.  Without NumPy anywhere the suite is skipped with a notice that
# names the package, and passes: `make check` installs it, so CI never
# skips.
set -u

bin=$1
case $bin in /*) ;; *) bin=$(pwd)/$bin ;; esac
here=$(cd "$(dirname "$0")" && pwd)

for py in /usr/bin/python3 python3 python; do
	if command -v "$py" >/dev/null 2>&1 &&
	    "$py" -c 'import numpy' >/dev/null 2>&1; then
		exec "$py" "$here/npy_test.py" "$bin"
	fi
done
echo "npy: SKIPPED: no Python with NumPy (Debian: apt-get install" \
    "python3-numpy); attn was not checked against numpy.save/numpy.load," \
    "nor the man page's numpy.loadtxt example"
exit 0
