# labels.awk - whose labels the rows and columns of printed stages carry.
#
#   awk -v mode=text|delim|html [-v stage=NAME] [-v sep=,] -f labels.awk FILE
#
# The matrix (run.sh) names queries Q.. and keys K.. (--query-labels,
# --key-labels), so a label's first letter says whose it is.  attn(1)'s
# tables of stages say what each stage's rows and columns run over: the
# rows of k, v, k_rot, grad_k and grad_v are the S keys (S x d_k, S x d_v),
# every other stage's the T queries, and the columns of the T x S stages
# are the keys.  Each row and key column of each stage found must carry
# such a label; a stage not named here (the statistics, the heatmap) is
# skipped.  bias and grad_bias have the bias's shape: their rows are the
# queries or one row named by the stage, their columns the keys or one
# named so;
# grad_sinks is one row named grad_sinks of a column a head, h1...
# Where a stage is found:
#
#   text   tables (-f table, --explain, --arithmetic): its title line,
#          "NAME[, batch B][, head H] = FORMULA   [LEGEND = RxC]", the
#          column labels under it, then a row a line, each starting with
#          its label, up to a blank line, an indented line (worked
#          arithmetic), "check:" or "(" (an elided table's note);
#   delim  csv or tsv --header: "# NAME DIMS" (or -v stage for one stage
#          of one block), the header row, then a row a line, the first
#          field its label;
#   html   -f html: <section id="NAME">, its <th scope="row"> and
#          <th scope="col"> cells (the statistics' tables skipped).
#
# Prints the first mismatch, or that no row was labelled, and exits 1.

BEGIN {
	split("k v k_rot grad_k grad_v", a, " ")
	for (i in a)
		keyrows[a[i]] = 1
	split("q q_rot scores scaled weights dropped output projected lse " \
	    "mask grad_weights delta grad_scaled grad_q", a, " ")
	for (i in a)
		queryrows[a[i]] = 1
	split("scores scaled weights dropped mask grad_weights grad_scaled", a,
	    " ")
	for (i in a)
		keycols[a[i]] = 1
	if (sep == "")
		sep = ","
	cur = mode == "delim" ? stage : ""
	state = mode == "delim" ? "head" : "none"
	bad = 0
	rows = 0
}

function fail(msg) {
	if (!bad)
		printf "line %d: %s\n", NR, msg
	bad = 1
}

# The first letter of the labels of the rows of stage s, or "" when s
# is not a stage this script knows.
function rowletter(s) {
	return (s in keyrows) ? "K" : (s in queryrows) ? "Q" : ""
}

function row(label) {
	if (cur == "bias" || cur == "grad_bias" || cur == "grad_sinks") {
		rows++
		whose = cur == "grad_sinks" ? "one, named so" : "queries or one"
		if (label != cur && (cur == "grad_sinks" || substr(label, 1, 1) != "Q"))
			fail(sprintf("row '%s' of %s: its rows are %s", label, cur, whose))
		return
	}
	if (rowletter(cur) == "")
		return
	rows++
	if (substr(label, 1, 1) != rowletter(cur))
		fail(sprintf("row '%s' of %s: its rows are %s", label, cur,
		    rowletter(cur) == "K" ? "keys" : "queries"))
}

function col(label) {
	if ((cur in keycols) && substr(label, 1, 1) != "K")
		fail(sprintf("column '%s' of %s: its columns are keys", label,
		    cur))
	if ((cur == "bias" || cur == "grad_bias") && label != cur &&
	    substr(label, 1, 1) != "K")
		fail(sprintf("column '%s' of %s: its columns are keys or one",
		    label, cur))
	if (cur == "grad_sinks" && label !~ /^h[0-9]+$/)
		fail(sprintf("column '%s' of grad_sinks: its columns are heads", label))
}

mode == "text" {
	if ($0 ~ /^[a-z_]+(, batch [0-9]+)?(, head [0-9]+)? = .*\[[^]]* = [0-9]+x[0-9]+\]$/) {
		cur = $1
		sub(/,$/, "", cur)
		state = "head"
		next
	}
	if (state == "head") {
		for (i = 1; i <= NF; i++)
			col($i)
		state = "rows"
		next
	}
	if (state == "rows") {
		if ($0 == "" || $0 ~ /^[ (]/ || $0 ~ /^check:/)
			state = "none"
		else
			row($1)
	}
	next
}

mode == "delim" {
	if ($0 ~ /^# /) {
		cur = $2
		state = "head"
		next
	}
	n = split($0, f, sep)
	if (state == "head") {
		for (i = 2; i <= n; i++)
			col(f[i])
		state = "rows"
		next
	}
	row(f[1])
	next
}

mode == "html" {
	if (match($0, /<section id="[a-z_]+">/))
		cur = substr($0, RSTART + 13, RLENGTH - 15)
	if ($0 ~ /<table class="stats">/)
		skip = 1
	if (skip) {
		if ($0 ~ /<\/table>/)
			skip = 0
		next
	}
	s = $0
	while (match(s, /<th scope="row">[^<]*<\/th>/)) {
		row(substr(s, RSTART + 16, RLENGTH - 21))
		s = substr(s, RSTART + RLENGTH)
	}
	s = $0
	while (match(s, /<th scope="col">[^<]*<\/th>/)) {
		col(substr(s, RSTART + 16, RLENGTH - 21))
		s = substr(s, RSTART + RLENGTH)
	}
}

END {
	if (!bad && rows == 0)
		fail("no labelled row of a stage found")
	exit bad
}
