/*
 * check_error.c - errors as values (attn_error_set, attn_error_at,
 * attn_error_at_byte), the one helper that turns byte offsets into lines
 * and columns, and attn_error_position, which writes either kind of
 * position after a file name.
 *
 * Positions are pinned by a table of buffers and offsets: lines end at
 * "\n" only, so CRLF counts once; a leading BOM is invisible; a UTF-8
 * character is one column however many bytes it takes.
 */
#include <string.h>

#include "internal.h"
#include "suites.h"

/* One attn_pos_from_offset case: buffer (len bytes), offset, expected result. */
struct pos_case {
	const char *buf;
	size_t len;
	size_t offset;
	size_t line, col;
};

#define BUF(s) s, sizeof s - 1

static const struct pos_case pos_cases[] = {
	/* plain lines */
	{ BUF(""), 0, 1, 1 },
	{ BUF("ab\ncd"), 0, 1, 1 },
	{ BUF("ab\ncd"), 1, 1, 2 },
	{ BUF("ab\ncd"), 2, 1, 3 },	/* on the newline itself */
	{ BUF("ab\ncd"), 3, 2, 1 },
	{ BUF("ab\ncd"), 4, 2, 2 },
	{ BUF("ab\ncd"), 5, 2, 3 },	/* just past the end */
	{ BUF("\n\n\nx"), 3, 4, 1 },
	/* CRLF: the CR is a character of its line, the LF ends it */
	{ BUF("a\r\nb"), 1, 1, 2 },
	{ BUF("a\r\nb"), 3, 2, 1 },
	{ BUF("1,2\r\n3,4\r\n5"), 10, 3, 1 },
	/* a BOM at the start is not counted */
	{ BUF("\xEF\xBB\xBF" "ab"), 3, 1, 1 },
	{ BUF("\xEF\xBB\xBF" "ab"), 4, 1, 2 },
	{ BUF("\xEF\xBB\xBF" "ab"), 1, 1, 1 },	/* inside the BOM */
	{ BUF("\xEF\xBB\xBF" "a\nb"), 5, 2, 1 },
	/* elsewhere U+FEFF is an ordinary character */
	{ BUF("a\xEF\xBB\xBF" "b"), 4, 1, 3 },
	/* UTF-8 characters of 2, 3 and 4 bytes count once */
	{ BUF("\xC3\xA9" "1"), 2, 1, 2 },
	{ BUF("\xE2\x82\xAC" "x"), 3, 1, 2 },
	{ BUF("\xF0\x9F\x98\x80" "x"), 4, 1, 2 },
	{ BUF("\xC3\xA9\xC3\xA9,x\n\xE2\x82\xAC,y"), 11, 2, 3 },
	/* an offset past the end is taken as the end */
	{ BUF("ab\nc"), 100, 2, 2 },
	{ BUF("ab\n"), 4, 2, 1 },
	{ BUF(""), 7, 1, 1 },
};

#define NPOS_CASES (int)(sizeof pos_cases / sizeof pos_cases[0])

START_TEST(offsets_become_lines_and_columns)
{
	const struct pos_case *pc = &pos_cases[_i];
	size_t line = 0, col = 0;

	attn_pos_from_offset(pc->buf, pc->len, pc->offset, &line, &col);
	ck_assert_uint_eq(line, pc->line);
	ck_assert_uint_eq(col, pc->col);
}
END_TEST

START_TEST(error_set_fills_every_field)
{
	static const char file[] = "q.csv";
	struct attn_error err;
	enum attn_status st;

	memset(&err, 0, sizeof err);
	st = attn_error_set(&err, ATTN_ERR_DATA, file, 3, 7, "bad %s in row %d",
	    "number", 3);
	ck_assert_int_eq(st, ATTN_ERR_DATA);
	ck_assert_int_eq(err.status, ATTN_ERR_DATA);
	ck_assert_ptr_eq(err.file, file);
	ck_assert_uint_eq(err.line, 3);
	ck_assert_uint_eq(err.col, 7);
	ck_assert_str_eq(err.msg, "bad number in row 3");
}
END_TEST

START_TEST(error_set_without_position_leaves_zeros)
{
	struct attn_error err;

	memset(&err, 0xA5, sizeof err);
	attn_error_set(&err, ATTN_ERR_NOMEM, NULL, 0, 0, "out of memory");
	ck_assert_int_eq(err.status, ATTN_ERR_NOMEM);
	ck_assert_ptr_null(err.file);
	ck_assert_uint_eq(err.line, 0);
	ck_assert_uint_eq(err.col, 0);
	ck_assert_int_eq(err.has_offset, 0);
	ck_assert_uint_eq(err.offset, 0);
	ck_assert_str_eq(err.msg, "out of memory");
}
END_TEST

START_TEST(error_at_byte_keeps_the_offset_for_binary_files)
{
	struct attn_error err;
	enum attn_status st;

	memset(&err, 0xA5, sizeof err);
	st = attn_error_at_byte(&err, ATTN_ERR_DATA, "q.npy", 0,
	    "not a .npy file: it starts with %s", "PK");
	ck_assert_int_eq(st, ATTN_ERR_DATA);
	ck_assert_int_eq(err.status, ATTN_ERR_DATA);
	ck_assert_str_eq(err.file, "q.npy");
	ck_assert_uint_eq(err.line, 0);
	ck_assert_uint_eq(err.col, 0);
	/* offset 0 is a position too: has_offset says it applies */
	ck_assert_int_eq(err.has_offset, 1);
	ck_assert_uint_eq(err.offset, 0);
	ck_assert_str_eq(err.msg, "not a .npy file: it starts with PK");
	/* a later error without an offset clears it */
	attn_error_set(&err, ATTN_ERR_IO, "q.npy", 0, 0, "read error");
	ck_assert_int_eq(err.has_offset, 0);
	ck_assert_int_eq(attn_error_at_byte(NULL, ATTN_ERR_DATA, "f", 3, "z"),
	    ATTN_ERR_DATA);
}
END_TEST

/* What attn_error_position writes after the file name. */
static const struct {
	size_t line, col;
	int has_offset;
	size_t offset;
	const char *text;
} where_cases[] = {
	{ 3, 2, 0, 0, ":3:2" },
	{ 1, 1, 0, 0, ":1:1" },
	{ 0, 0, 1, 0, ": byte 0" },
	{ 0, 0, 1, 4096, ": byte 4096" },
	{ 0, 0, 0, 0, "" },
	/* a line wins over an offset (text readers never set both) */
	{ 7, 9, 1, 12, ":7:9" },
};

#define NWHERE (int)(sizeof where_cases / sizeof where_cases[0])

START_TEST(position_text_follows_the_file_name)
{
	struct attn_error err;
	char buf[64], small[4];
	size_t n, want = strlen(where_cases[_i].text);

	memset(&err, 0, sizeof err);
	err.line = where_cases[_i].line;
	err.col = where_cases[_i].col;
	err.has_offset = where_cases[_i].has_offset;
	err.offset = where_cases[_i].offset;
	n = attn_error_position(buf, sizeof buf, &err);
	ck_assert_str_eq(buf, where_cases[_i].text);
	ck_assert_uint_eq(n, want);
	/* as snprintf: the whole length, whatever fits */
	memset(small, 'x', sizeof small);
	ck_assert_uint_eq(attn_error_position(small, sizeof small, &err),
	    want);
	ck_assert_uint_eq(strlen(small), want < 3 ? want : 3);
	ck_assert_uint_eq(attn_error_position(NULL, 0, &err), want);
}
END_TEST

START_TEST(error_set_truncates_a_long_message)
{
	struct attn_error err;
	char long_word[2 * ATTN_MSG_MAX];

	memset(long_word, 'x', sizeof long_word - 1);
	long_word[sizeof long_word - 1] = '\0';
	memset(&err, 0, sizeof err);
	attn_error_set(&err, ATTN_ERR_DATA, NULL, 0, 0, "%s", long_word);
	ck_assert_uint_eq(strlen(err.msg), ATTN_MSG_MAX - 1);
	ck_assert_int_eq(err.msg[0], 'x');
}
END_TEST

START_TEST(error_at_turns_the_offset_into_a_position)
{
	static const char buf[] = "\xEF\xBB\xBF" "1,2\r\n3,\xC3\xA9x";
	struct attn_error err;
	enum attn_status st;

	memset(&err, 0, sizeof err);
	/* offset of 'x': BOM (3) + "1,2\r\n" (5) + "3," (2) + e-acute (2) */
	st = attn_error_at(&err, ATTN_ERR_DATA, "k.csv", buf, sizeof buf - 1, 12,
	    "not a number: %s", "\xC3\xA9x");
	ck_assert_int_eq(st, ATTN_ERR_DATA);
	ck_assert_int_eq(err.status, ATTN_ERR_DATA);
	ck_assert_str_eq(err.file, "k.csv");
	ck_assert_uint_eq(err.line, 2);
	ck_assert_uint_eq(err.col, 4);
	ck_assert_str_eq(err.msg, "not a number: \xC3\xA9x");
}
END_TEST

START_TEST(a_null_error_struct_is_allowed)
{
	ck_assert_int_eq(attn_error_set(NULL, ATTN_ERR_IO, "f", 1, 1, "x %d", 1),
	    ATTN_ERR_IO);
	ck_assert_int_eq(attn_error_at(NULL, ATTN_ERR_DATA, "f", "ab", 2, 1, "y"),
	    ATTN_ERR_DATA);
}
END_TEST

Suite *
error_suite(void)
{
	Suite *s = suite_create("error");
	TCase *tc = tcase_create("positions");

	tcase_add_loop_test(tc, offsets_become_lines_and_columns, 0,
	    NPOS_CASES);
	suite_add_tcase(s, tc);

	tc = tcase_create("errors");
	tcase_add_test(tc, error_set_fills_every_field);
	tcase_add_test(tc, error_set_without_position_leaves_zeros);
	tcase_add_test(tc, error_set_truncates_a_long_message);
	tcase_add_test(tc, error_at_turns_the_offset_into_a_position);
	tcase_add_test(tc, a_null_error_struct_is_allowed);
	tcase_add_test(tc, error_at_byte_keeps_the_offset_for_binary_files);
	tcase_add_loop_test(tc, position_text_follows_the_file_name, 0,
	    NWHERE);
	suite_add_tcase(s, tc);
	return s;
}
