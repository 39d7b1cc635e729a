# python.sh - sourced: sets py to a Python that imports numpy, or to ""
# when there is none.  The python3 first on PATH may lack NumPy (a pyenv
# one, say), so Debian's interpreter /usr/bin/python3 (package
# python3-numpy) is tried first.  tests/npy.sh, tests/bench.sh and
# bench/run.sh use it.
py=
for p in /usr/bin/python3 python3 python; do
	if command -v "$p" >/dev/null 2>&1 &&
	    "$p" -c 'import numpy' >/dev/null 2>&1; then
		py=$p
		break
	fi
done
