#!/bin/sh
# cycles.sh BUILD DIR... - the files of each DIR (lib, cli) depend on
# each other without a circle.
#
# The graph is one of files: A -> B when A calls or reads a symbol that B
# defines (nm -u of A's object against nm --defined-only of B's, both in
# BUILD/DIR/), or includes B's header (cc -MM: B.h is B.c's header; a
# header with no .c of its own, lib/internal.h or lib/attn.h, holds no
# code and is no node).  Only edges inside one DIR count: lib/ never
# includes cli/, and cli/'s calls into lib/ go one way.  A cycle is a
# strongly connected component of more than one file; each is printed
# with the edges that tie it and what each edge takes (the symbols, or
# the header), and fails the test.
set -u

build=$1
shift
top=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d) || exit 1
trap 'rm -rf "$work"' EXIT
# The macros make passes (the version, libzip's soname) defined, so that
# the files that insist on them list their headers without an #error.
cflags="-I$top/lib $(pkg-config --cflags libcjson 2>/dev/null)
    -DATTN_VERSION=\"\" -DATTN_LIBZIP=\"\""
fail=0

# The edges of dir $1, "FROM TO WHY" a line, into $work/edges.
edges() {
	dir=$1
	: >"$work/defs"
	: >"$work/uses"
	: >"$work/incs"
	for src in "$top/$dir"/*.c "$top/$dir"/*.cc; do
		[ -f "$src" ] || continue
		file=${src##*/}
		obj=$build/$dir/${file%.*}.o
		if [ ! -f "$obj" ]; then
			echo "FAIL cycles: $obj is not built"
			return 1
		fi
		nm -g --defined-only "$obj" | awk -v f="$file" \
		    'NF == 3 { print $3, f }' >>"$work/defs"
		nm -u "$obj" | awk -v f="$file" '{ print f, $NF }' \
		    >>"$work/uses"
		case $src in *.cc) cc=${CXX:-c++} ;; *) cc=${CC:-cc} ;; esac
		# shellcheck disable=SC2086
		(cd "$top" && $cc $cflags -MM "$dir/$file") |
		    tr ' \\' '\n\n' | sed -n "s|^$dir/\([^/]*\.h\)\$|\1|p" |
		    awk -v f="$file" '{ print f, $1 }' >>"$work/incs"
	done
	ls "$top/$dir" >"$work/files"
	awk '
	FILENAME ~ /files$/ { have[$1] = 1; next }
	FILENAME ~ /defs$/ { def[$1] = $2; next }
	FILENAME ~ /uses$/ {
		if (($2 in def) && def[$2] != $1) add($1, def[$2], $2)
		next
	}
	{	# an include: the header of a module, or no node
		m = $2; sub(/\.h$/, ".c", m)
		if ((m in have) && m != $1) add($1, m, "#include " $2)
	}
	function add(a, b, why, k) {
		k = a " " b
		if (!(k in n)) { order[++count] = k; n[k] = 0 }
		if (n[k]++ < 6) w[k] = w[k] (n[k] > 1 ? ", " : "") why
		else if (n[k] == 7) w[k] = w[k] ", ..."
	}
	END { for (i = 1; i <= count; i++) print order[i], w[order[i]] }
	' "$work/files" "$work/defs" "$work/uses" "$work/incs" >"$work/edges"
}

# The strongly connected components of more than one node of the edges
# (Tarjan), each as "cycle N: FILES" and its edges inside it.
cycles() {
	awk '
	{
		a = $1; b = $2; why = $0
		sub(/^[^ ]+ [^ ]+ /, "", why)
		if (!(a in seen)) { seen[a] = 1; node[++nn] = a }
		if (!(b in seen)) { seen[b] = 1; node[++nn] = b }
		succ[a, ++ns[a]] = b
		reason[a, b] = why
	}
	function visit(v,    i, w) {
		index_[v] = low[v] = ++counter
		stack[++sp] = v; on[v] = 1
		for (i = 1; i <= ns[v]; i++) {
			w = succ[v, i]
			if (!(w in index_)) {
				visit(w)
				if (low[w] < low[v]) low[v] = low[w]
			} else if (on[w] && index_[w] < low[v]) {
				low[v] = index_[w]
			}
		}
		if (low[v] == index_[v]) {
			size = 0
			do {
				w = stack[sp--]; on[w] = 0
				member[++size] = w; comp[w] = v
			} while (w != v)
			if (size > 1) report(v)
		}
	}
	function report(root,    i, j, list, a) {
		list = ""
		for (i = size; i >= 1; i--) list = list " " member[i]
		printf "cycle %d: %d files:%s\n", ++found, size, list
		for (i = size; i >= 1; i--) {
			a = member[i]
			for (j = 1; j <= ns[a]; j++)
				if (comp[succ[a, j]] == root)
					printf "  %s -> %s: %s\n", a,
					    succ[a, j], reason[a, succ[a, j]]
		}
	}
	END {
		for (i = 1; i <= nn; i++)
			if (!(node[i] in index_)) visit(node[i])
		exit found > 0
	}' "$work/edges"
}

for arg in "$@"; do
	edges "$arg" || { fail=1; continue; }
	count=$(wc -l <"$work/edges")
	if cycles >"$work/out"; then
		echo "cycles: $arg/: no cycle in $count edges"
	else
		echo "FAIL cycles: $arg/ has circles among its files:"
		sed 's/^/  /' "$work/out"
		fail=1
	fi
done
exit $fail
