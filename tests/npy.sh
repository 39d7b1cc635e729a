#!/bin/sh
# npy.sh ATTN - attn against NumPy itself: tests/npy_test.py (which says
# what it checks) run by an interpreter that imports numpy.
#
# The interpreter is tests/python.sh's choice.  Without NumPy anywhere
# the suite is skipped with a notice that names the package, and passes:
# `make check` installs it, so CI never skips.
set -u

bin=$1
case $bin in /*) ;; *) bin=$(pwd)/$bin ;; esac
here=$(cd "$(dirname "$0")" && pwd)

. "$here/python.sh"
[ -n "$py" ] && exec "$py" "$here/npy_test.py" "$bin"
echo "npy: SKIPPED: no Python with NumPy (Debian: apt-get install" \
    "python3-numpy); attn was not checked against numpy.save/numpy.load," \
    "nor the man page's numpy.loadtxt example"
exit 0
