/*
 * read.c - the front of the readers: guess a format and dispatch to the
 * reader for it (array.c frees what they return).
 *
 * Guessing never fails: the extension wins when it names a format, else
 * the first bytes decide (JSON, JSON Lines, .npy, an array as NumPy or
 * PyTorch print it), and anything else is text whose data lines pick the separator
 * (guess_text).  A wrong guess is then
 * reported by the reader, with a position, which says more than "unknown
 * format".
 */
#include <stdio.h>
#include <string.h>

#include "internal.h"

/* The extension of the last path component of name ("" when none). */
static const char *
extension(const char *name, size_t *elen)
{
	const char *base, *dot;

	*elen = 0;
	if (name == NULL)
		return "";
	base = strrchr(name, '/');
	base = base != NULL ? base + 1 : name;
	dot = strrchr(base, '.');
	if (dot == NULL || dot == base)
		return "";
	*elen = strlen(dot + 1);
	return dot + 1;
}

/* Whether buf[i] is a blank: a space or a tab. */
static int
blank(const char *buf, size_t i)
{
	return buf[i] == ' ' || buf[i] == '\t';
}

/*
 * How a line buf[ls, le) with no comma says it is separated: 1 for tabs
 * alone (TSV), 0 for any white space, -1 when both read it the same.
 * They differ only where spaces and no tab stand between two words
 * (outside quotes): TSV keeps them inside a field, white space splits
 * there.  Then a line without a tab is white space; one with a tab is
 * TSV when splitting it on all white space leaves a word that is no
 * number after its first (a label "New York", a header "first name"),
 * and white space when only numbers are left (a column-aligned "1  0\t1").
 */
static int
line_separation(const char *buf, size_t ls, size_t le)
{
	size_t i, j, w, n, words = 0;
	int tab = 0, spaced = 0, text = 0, q;
	double x;

	for (i = ls; i < le; i = j) {
		if (blank(buf, i)) {
			for (j = i; j < le && blank(buf, j); j++)
				tab |= buf[j] == '\t';
			if (i > ls && j < le && memchr(buf + i, '\t', j - i) ==
			    NULL)
				spaced = 1;
			continue;
		}
		/* A word; blanks inside quotes separate nothing, and a
		 * quoted number is a number. */
		for (j = i, q = 0; j < le && (q || !blank(buf, j)); j++)
			q ^= buf[j] == '"';
		w = i;
		n = j - i;
		if (n >= 2 && buf[i] == '"' && buf[j - 1] == '"') {
			w++;
			n -= 2;
		}
		if (words++ > 0 && attn_parse_number(buf + w, n, &x) != 0 &&
		    !attn_word_is(buf + w, n, "true") &&
		    !attn_word_is(buf + w, n, "false"))
			text = 1;
	}
	if (!spaced)
		return -1;
	return tab && text;
}

/*
 * Which separator the text in buf uses.  Its first data line (blank
 * lines and '#' comments are skipped, as the text reader skips them)
 * chooses CSV when it has a comma.  Otherwise the text is white space
 * (numpy.loadtxt's default: any run of blanks and tabs), unless the first
 * line that tells them apart (line_separation) says tabs alone separate.
 */
static enum attn_format
guess_text(const char *buf, size_t len)
{
	size_t i = attn_bom_len(buf, len), end, le;
	const char *nl;
	int first = 1, sep;

	for (; i < len; i = end + 1) {
		nl = memchr(buf + i, '\n', len - i);
		end = nl != NULL ? (size_t)(nl - buf) : len;
		le = end > i && buf[end - 1] == '\r' ? end - 1 : end;
		while (i < le && blank(buf, i))
			i++;
		if (i == le || buf[i] == '#')
			continue;
		if (first && memchr(buf + i, ',', le - i) != NULL)
			return ATTN_FMT_CSV;
		first = 0;
		if ((sep = line_separation(buf, i, le)) >= 0)
			return sep ? ATTN_FMT_TSV : ATTN_FMT_TEXT;
	}
	return ATTN_FMT_TEXT;
}

/* Whether buf[i] is white space between tokens of JSON or of a print. */
static int
space_at(const char *buf, size_t i)
{
	return blank(buf, i) || buf[i] == '\r' || buf[i] == '\n';
}

/*
 * Whether the text at buf[i] == '[' is an array as NumPy prints it (str:
 * blanks between elements) rather than JSON, which puts a comma between
 * elements, and writes neither a bare point (1., 1.e+00), nor nan, inf,
 * True or False, nor "...".  The first element, or the separator after
 * it, tells; "[[5]]", which shows neither, reads the same both ways and
 * is JSON, as is anything with a string.
 */
static int
looks_printed(const char *buf, size_t len, size_t i)
{
	static const char *const printed[] = {
		"nan", "inf", "-inf", "True", "False", "..."
	};
	size_t j, k;

	for (;;) {
		while (i < len && space_at(buf, i))
			i++;
		if (i >= len || buf[i] == ',' || buf[i] == '"')
			return 0;
		if (buf[i] == '[') {
			i++;
			continue;
		}
		if (buf[i] == ']') {
			/* "]\n [": rows one under another with no comma */
			for (i++; i < len && space_at(buf, i); i++)
				;
			if (i < len && buf[i] == '[')
				return 1;
			continue;
		}
		for (j = i; j < len && !space_at(buf, j) && buf[j] != ',' &&
		    buf[j] != '[' && buf[j] != ']'; j++)
			;
		for (k = 0; k < sizeof printed / sizeof printed[0]; k++)
			if (j - i == strlen(printed[k]) &&
			    memcmp(buf + i, printed[k], j - i) == 0)
				return 1;
		for (k = i + 1; k < j; k++)
			if (buf[k] == '.' && (k + 1 == j || buf[k + 1] == 'e' ||
			    buf[k + 1] == 'E'))
				return 1;
		for (i = j; i < len && space_at(buf, i); i++)
			;
		if (i < len && buf[i] != ']' && buf[i] != ',')
			return 1;	/* blanks, then another element */
	}
}

/*
 * Whether the JSON at buf[i] == '[' is JSON Lines: the array that starts
 * there ends on its line, with nothing but blanks after it, and another
 * line that is not blank follows.  A JSON array over several lines ends
 * none of them but its last, and one on a line alone is JSON; so only a
 * file with a second line has its first line scanned, not one of a
 * single line however long.  Returns the end of the first line (> i), or
 * 0 when it is not.
 */
static size_t
json_lines(const char *buf, size_t len, size_t i)
{
	const char *nl = memchr(buf + i, '\n', len - i);
	size_t end, j, depth = 0;
	int quoted = 0;

	if (nl == NULL)
		return 0;
	end = (size_t)(nl - buf);
	for (j = end + 1; j < len && space_at(buf, j); j++)
		;
	if (j == len)
		return 0;
	for (j = i; j < end; j++) {
		if (quoted) {
			if (buf[j] == '\\')
				j++;
			else if (buf[j] == '"')
				quoted = 0;
		} else if (buf[j] == '"') {
			quoted = 1;
		} else if (buf[j] == '[') {
			depth++;
		} else if (buf[j] == ']' && depth > 0 && --depth == 0) {
			break;
		}
	}
	if (j == end)
		return 0;
	for (j++; j < end && space_at(buf, j); j++)
		;
	return j == end ? end : 0;
}

/*
 * The content decides: a .npy by its magic; JSON, JSON Lines
 * (json_lines) or a printed array when it starts with '[' (looks_printed),
 * a printed array when it starts with array( or tensor(, or (after
 * Python's comments and imports) with the code that makes one (x = torch.tensor(,
 * x = np.array(, or an assignment of any other call, which the reader
 * quotes as unknown code), JSON with '{';
 * else text (guess_text).  .txt names
 * text but not its separator (numpy.savetxt writes spaces by default and
 * commas when asked) nor whether it holds a pasted print, so the content
 * decides for it too, but for '{'.
 */
enum attn_format
attn_format_guess(const char *name, const char *buf, size_t len)
{
	const char *ext;
	size_t elen, i, nl;
	int txt, code;

	ext = extension(name, &elen);
	if (attn_word_is(ext, elen, "json"))
		return ATTN_FMT_JSON;
	if (attn_word_is(ext, elen, "jsonl") ||
	    attn_word_is(ext, elen, "ndjson"))
		return ATTN_FMT_JSONL;
	if (attn_word_is(ext, elen, "csv"))
		return ATTN_FMT_CSV;
	if (attn_word_is(ext, elen, "tsv"))
		return ATTN_FMT_TSV;
	if (attn_word_is(ext, elen, "npy"))
		return ATTN_FMT_NPY;
	txt = attn_word_is(ext, elen, "txt");

	if (!txt && attn_is_npy(buf, len))
		return ATTN_FMT_NPY;
	i = attn_bom_len(buf, len);
	while (i < len && space_at(buf, i))
		i++;
	if (attn_repr_call(buf, len, attn_repr_start(buf, len, i), &code) != 0)
		return ATTN_FMT_REPR;
	/* Rows one under another are NumPy's print, but at the top level,
	 * each a whole array on its line, JSON Lines, unless that line looks
	 * printed itself. */
	if (i < len && buf[i] == '[' && (nl = json_lines(buf, len, i)) != 0)
		return looks_printed(buf, nl, i) ? ATTN_FMT_REPR :
		    ATTN_FMT_JSONL;
	if (i < len && buf[i] == '[')
		return looks_printed(buf, len, i) ? ATTN_FMT_REPR :
		    ATTN_FMT_JSON;
	if (!txt && i < len && buf[i] == '{')
		return ATTN_FMT_JSON;
	if (!txt && attn_is_npy(buf + i, len - i))
		return ATTN_FMT_NPY;
	return guess_text(buf, len);
}

/*
 * s[0..n) as a Python string literal, into out (size bytes) with its NUL:
 * in single quotes, or double quotes when s holds a single one and no
 * double; backslashes and the quote escaped, control and format
 * characters written as Python reads them (\xHH, \uHHHH, \UHHHHHHHH),
 * so that what a message suggests runs as printed and moves no cursor.
 * Returns -1 when it does not fit.
 */
static int
py_literal(char *out, size_t size, const char *s, size_t n)
{
	const char q = memchr(s, '\'', n) != NULL && memchr(s, '"', n) == NULL ?
	    '"' : '\'';
	size_t i = 0, k = 0, w, el;
	char e[16];
	long c;

	if (size < 3)
		return -1;
	out[k++] = q;
	for (; i < n; i += w) {
		w = attn_utf8_char(s + i, n - i, &c);
		if (c == q || c == '\\')
			snprintf(e, sizeof e, "\\%c", (int)c);
		else if (c < 0)		/* no character: its byte */
			snprintf(e, sizeof e, "\\x%02X",
			    (unsigned)(unsigned char)s[i]);
		else if (attn_char_is_control(c) || attn_char_is_format(c))
			snprintf(e, sizeof e, c < 0x100 ? "\\x%02lX" : c < 0x10000 ?
			    "\\u%04lX" : "\\U%08lX", c);
		else
			snprintf(e, sizeof e, "%.*s", (int)w, s + i);
		if ((el = strlen(e)) + 2 > size - k)
			return -1;
		memcpy(out + k, e, el);
		k += el;
	}
	out[k++] = q;
	out[k] = '\0';
	return 0;
}

/* Whether s[0..n) is a plain file name to suggest saving to: letters,
 * digits, '_', '-' and '.', not starting with '.'. */
static int
plain_name(const char *s, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (!((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= 'A' &&
		    s[i] <= 'Z') || (s[i] >= '0' && s[i] <= '9') ||
		    strchr("_-.", s[i]) != NULL) || s[i] == '\0')
			return 0;
	return n > 0 && s[0] != '.';
}

/*
 * What to do with a .npz given where one array goes: numpy.save of the
 * archive's first array (key[0..klen), the first member's name less
 * .npy) from the file as named, each a Python literal, whole, after the
 * archive's arrays (names, escaped; NULL when libzip could not list
 * them, or could not be loaded).  The message holds ATTN_MSG_MAX
 * bytes: what does not fit goes, the list first, then the array's name
 * as the file saved to, then the command (never cut), which standard
 * input has none of.
 */
static enum attn_status
npz_advice(const char *name, const char *names, const char *key,
    size_t klen, struct attn_error *err)
{
	char path[ATTN_MSG_MAX], k[ATTN_MSG_MAX], to[ATTN_MSG_MAX];
	char msg[ATTN_MSG_MAX];
	int n, t, lit;

	lit = name != NULL && strcmp(name, "<stdin>") != 0 &&
	    py_literal(path, sizeof path, name, strlen(name)) == 0 &&
	    py_literal(k, sizeof k, key, klen) == 0;
	snprintf(to, sizeof to, "'%.*s.npy'", (int)klen, key);
	for (t = names != NULL ? 0 : 1; lit && t < 3; t++) {
		n = snprintf(msg, sizeof msg, "a NumPy .npz archive%s%s, not "
		    "one array: save the one you want as .npy, e.g. "
		    "numpy.save(%s, numpy.load(%s)[%s])", t == 0 ?
		    " of arrays " : "", t == 0 ? names : "", t < 2 &&
		    plain_name(key, klen) ? to : "'array.npy'", path, k);
		if (n > 0 && (size_t)n < sizeof msg)
			return attn_error_set(err, ATTN_ERR_DATA, name, 0, 0,
			    "%s", msg);
	}
	return attn_error_set(err, ATTN_ERR_DATA, name, 0, 0, "a NumPy .npz "
	    "archive%s%s, not one array: save the one you want as .npy with "
	    "numpy.save", names != NULL ? " of arrays " : "", names != NULL ?
	    names : "");
}

/*
 * A zip archive is no input attn reads as an operand, whatever its name
 * says: a NumPy .npz (numpy.savez writes a zip whose entries are .npy
 * files, the first named in the header at offset 30, its length at 26),
 * whose arrays are named so that the user can pick one, or another zip,
 * most likely a spreadsheet (.xlsx, .ods).  Say which and what to do,
 * rather than read its bytes as text.  An empty archive starts with the
 * end-of-directory record, PK\5\6.  A file named .npz that is no zip
 * (empty, or other bytes before the archive, which numpy.load refuses
 * too) is named as such, where --check reads it as one array; one that
 * is a .npy is read as one.
 */
static enum attn_status
zip_fault(const char *name, const char *buf, size_t len,
    struct attn_error *err)
{
	const unsigned char *u = (const unsigned char *)buf;
	const char *ext;
	char p[ATTN_PREVIEW_MAX + 4], names[160];
	struct attn_error scratch;
	size_t elen, n = 0;
	int zip, npy = 0;

	zip = attn_is_zip(buf, len);
	if (zip && u[2] == 3 && len >= 30) {
		n = (size_t)u[26] | (size_t)u[27] << 8;
		npy = n >= 4 && n <= len - 30 &&
		    attn_word_is(buf + 30 + n - 4, 4, ".npy");
	}
	ext = extension(name, &elen);
	if (!zip && attn_word_is(ext, elen, "npz")) {
		if (attn_is_npy(buf, len))
			return ATTN_OK;		/* a .npy, renamed */
		attn_text_preview(p, 16, buf, len);
		return len == 0 ? attn_error_set(err, ATTN_ERR_DATA, name, 0,
		    0, "an empty file, not a .npz archive (a zip of .npy "
		    "files, as numpy.savez writes)") : attn_error_set(err,
		    ATTN_ERR_DATA, name, 0, 0, "named .npz but no zip archive: "
		    "it starts with '%s', where a .npz (a zip of .npy files, "
		    "as numpy.savez writes) starts with PK", p);
	}
	if (!zip)
		return ATTN_OK;
	if (npy)	/* numpy.load's key: the name less ".npy" exactly */
		return npz_advice(name, attn_npz_names(name, buf, len, names,
		    sizeof names, &scratch) == ATTN_OK ? names : NULL, buf + 30,
		    memcmp(buf + 30 + n - 4, ".npy", 4) == 0 ? n - 4 : n, err);
	if (attn_word_is(ext, elen, "npz"))
		return attn_error_set(err, ATTN_ERR_DATA, name, 0, 0, u[2] == 5 ?
		    "a .npz archive with no arrays" : "a zip archive whose "
		    "first member is no .npy array: not a .npz as numpy.savez "
		    "writes one (a spreadsheet or a document: .xlsx, .ods, "
		    ".docx?)");
	return attn_error_set(err, ATTN_ERR_DATA, name, 0, 0,
	    "a zip archive, not a matrix (a spreadsheet's .xlsx or "
	    ".ods?): save the sheet as CSV");
}

enum attn_status
attn_read_array(const char *name, const char *buf, size_t len,
    enum attn_format fmt, unsigned flags, struct attn_array *out,
    struct attn_error *err)
{
	return attn_read_array_threads(name, buf, len, fmt, flags, 1, out,
	    err);
}

enum attn_status
attn_read_array_threads(const char *name, const char *buf, size_t len,
    enum attn_format fmt, unsigned flags, size_t threads,
    struct attn_array *out, struct attn_error *err)
{
	enum attn_status st;

	memset(out, 0, sizeof *out);
	if ((st = zip_fault(name, buf, len, err)) != ATTN_OK)
		return st;
	if (fmt == ATTN_FMT_AUTO)
		fmt = attn_format_guess(name, buf, len);
	switch (fmt) {
	case ATTN_FMT_JSON:
		return attn_read_json(name, buf, len, flags, out, err);
	case ATTN_FMT_CSV:
	case ATTN_FMT_TSV:
	case ATTN_FMT_TEXT:
		return attn_read_text(name, buf, len, fmt, flags, threads != 0 ?
		    threads : attn_cpu_count(), out, err);
	case ATTN_FMT_REPR:
		return attn_read_repr(name, buf, len, flags, out, err);
	case ATTN_FMT_JSONL:
		return attn_read_jsonl(name, buf, len, flags, out, err);
	case ATTN_FMT_NPY:
		return attn_read_npy(name, buf, len, flags, out, err);
	case ATTN_FMT_AUTO:
		break;
	}
	return attn_error_set(err, ATTN_ERR_INTERNAL, name, 0, 0,
	    "unknown input format %d", (int)fmt);
}
