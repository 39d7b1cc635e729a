/*
 * fuzz_jsonl.c - libFuzzer harness for the JSON Lines reader, through
 * attn_read_array with ATTN_FMT_JSONL (and AUTO, which guesses it from a
 * name .jsonl or .ndjson, or from a first line that is one array with
 * more lines after it).
 *
 * Input: byte 0 chooses the reader flags (bits 0-1: none, finite, bool,
 * bias) and how the format is found (bits 2-3: named JSONL, AUTO with
 * "fuzz.jsonl", AUTO with "fuzz.ndjson", AUTO with "-"); the rest is the
 * text, handed over without a terminating NUL.
 *
 * Besides what fuzz_check.h asserts of every reader: an error's column
 * lies inside its line (or just past its end); and, since each line is
 * read by the JSON reader, what the lines read as is what one JSON array
 * holding them reads as: the lines that are not blank, joined by commas
 * inside [ and ], read by attn_read_array with ATTN_FMT_JSON, give the
 * same shape and the same numbers.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "attn.h"
#include "attn_io.h"
#include "fuzz_check.h"

static const unsigned flag_choice[4] = {
	0, ATTN_READ_FINITE, ATTN_READ_BOOL, ATTN_READ_BIAS
};

static const char *const names[4] = {
	"fuzz.jsonl", "fuzz.jsonl", "fuzz.ndjson", "-"
};

/* Bytes of line (from 1) of buf[0..len), without its '\n'. */
static size_t
line_length(const char *buf, size_t len, size_t line)
{
	size_t i = 0, start;

	for (; line > 1 && i < len; i++)
		if (buf[i] == '\n')
			line--;
	for (start = i; i < len && buf[i] != '\n'; i++)
		;
	return i - start;
}

/* Whether buf[ls, le) holds only spaces and tabs (the reader's blank
 * line). */
static int
blank(const char *buf, size_t ls, size_t le)
{
	for (; ls < le; ls++)
		if (buf[ls] != ' ' && buf[ls] != '\t')
			return 0;
	return 1;
}

/* The lines of buf[0..len) that are not blank (a BOM, a '\r' before the
 * '\n' left out), joined by commas inside [ and ]: malloc'd, its length
 * in *n. */
static char *
as_json_array(const char *buf, size_t len, size_t *n)
{
	char *j = malloc(len + 3);
	size_t i = 0, end, le, k = 0;

	if (j == NULL)
		abort();
	if (len >= 3 && memcmp(buf, "\xef\xbb\xbf", 3) == 0)
		i = 3;
	j[k++] = '[';
	for (; i < len; i = end + 1) {
		const char *nl = memchr(buf + i, '\n', len - i);

		end = nl != NULL ? (size_t)(nl - buf) : len;
		le = end > i && buf[end - 1] == '\r' ? end - 1 : end;
		if (blank(buf, i, le))
			continue;
		if (k > 1)
			j[k++] = ',';
		memcpy(j + k, buf + i, le - i);
		k += le - i;
	}
	j[k++] = ']';
	*n = k;
	return j;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct attn_array a, b;
	struct attn_error err;
	enum attn_format fmt;
	enum attn_status st;
	const char *buf, *name;
	unsigned flags;
	size_t len, jlen;
	char *json;

	if (size < 1 || size > 4096)
		return 0;
	flags = flag_choice[data[0] & 3];
	fmt = (data[0] & 12) == 0 ? ATTN_FMT_JSONL : ATTN_FMT_AUTO;
	name = names[(data[0] >> 2) & 3];
	buf = (const char *)data + 1;
	len = size - 1;

	memset(&err, 0, sizeof err);
	st = attn_read_array(name, buf, len, fmt, flags, &a, &err);
	if (st != ATTN_OK) {
		fuzz_check_error(st, &err, name, buf, len);
		if (err.line > 0 && err.col > line_length(buf, len,
		    err.line) + 1)
			fuzz_fail("error column past the end of its line",
			    &err);
		if (a.data != NULL)
			fuzz_fail("a failed read left data behind", &err);
		attn_array_free(&a);
		return 0;
	}
	fuzz_check_array(&a, flags, len);
	if (fmt == ATTN_FMT_AUTO && attn_format_guess(name, buf, len) !=
	    ATTN_FMT_JSONL) {
		/* Another format that AUTO read: its own harness's. */
		attn_array_free(&a);
		return 0;
	}
	if (a.ndim < 2 || a.ndim > 3)
		fuzz_fail("JSON Lines read as neither a matrix nor a stack",
		    NULL);
	json = as_json_array(buf, len, &jlen);
	memset(&err, 0, sizeof err);
	if (attn_read_array("fuzz.json", json, jlen, ATTN_FMT_JSON, flags,
	    &b, &err) != ATTN_OK)
		fuzz_fail("lines that read as JSON Lines fail as one JSON "
		    "array", &err);
	if (!fuzz_same_array(&a, &b))
		fuzz_fail("JSON Lines and one JSON array of the lines differ "
		    "in shape or in a number", NULL);
	attn_array_free(&b);
	free(json);
	attn_array_free(&a);
	return 0;
}
