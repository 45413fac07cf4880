/*
 * test_visible.c - visible.c: a name made visible for a screen, in the
 * C.UTF-8 locale and in the C locale: each kind of unit escaped as the
 * table of visible.h says, widths by wcwidth (a CJK character is two
 * columns, a combining mark none), and a cut never inside a unit.
 */
#include <locale.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "visible.h"

/* Asserts that s is shown as want in want_width columns, whole. */
static void shows(const char *s, const char *want, int want_width)
{
	char out[256];
	int w = -1;
	size_t used = fidx_visible(s, 1000, out, sizeof(out), &w);
	assert_int_equal(used, strlen(s));
	assert_string_equal(out, want);
	assert_int_equal(w, want_width);
	assert_int_equal(fidx_visible_width(s), want_width);
}

static void test_utf8_locale(void **state)
{
	(void)state;
	if (!setlocale(LC_CTYPE, "C.UTF-8"))
		skip();
	assert_true(fidx_visible_utf8());
	shows("plain.txt", "plain.txt", 9);
	shows("a\nb\tc\rd\\e", "a\\nb\\tc\\rd\\\\e", 13);
	shows("esc\x1b]0;x\x07", "esc\\x1b]0;x\\x07", 15);
	shows("del\x7f", "del\\x7f", 7);
	shows("bad\xff\xfe", "bad\\xff\\xfe", 11);
	shows("\xc3(", "\\xc3(", 5);                    /* a truncated sequence */
	shows("c1\xc2\x9b", "c1\\xc2\\x9b", 10);         /* U+009B, a C1 control (CSI) */
	shows("caf\xc3\xa9", "caf\xc3\xa9", 4);          /* é */
	shows("\xe6\x97\xa5\xe6\x9c\xac", "\xe6\x97\xa5\xe6\x9c\xac", 4); /* 日本: wide */
	shows("e\xcc\x81", "e\xcc\x81", 1);             /* e + combining acute */
	shows("\xcc\x81x", "\\xcc\\x81x", 9);            /* a combining mark with nothing before */
	shows("a\xe2\x80\xaetxt", "a\\u{202e}txt", 12);  /* right-to-left override */
}

static void test_c_locale(void **state)
{
	(void)state;
	setlocale(LC_CTYPE, "C");
	assert_false(fidx_visible_utf8());
	shows("caf\xc3\xa9", "caf\\xc3\\xa9", 11);
	shows("ok\n", "ok\\n", 4);
}

static void test_cut(void **state)
{
	(void)state;
	char out[64];
	int w;
	if (!setlocale(LC_CTYPE, "C.UTF-8"))
		skip();
	/* Never inside an escape: "ab\x1b" at 5 columns shows "ab" (the escape needs 4). */
	size_t used = fidx_visible("ab\x1bz", 5, out, sizeof(out), &w);
	assert_int_equal(used, 2);
	assert_string_equal(out, "ab");
	assert_int_equal(w, 2);
	/* Never half a wide character. */
	used = fidx_visible("a\xe6\x97\xa5", 2, out, sizeof(out), &w);
	assert_int_equal(used, 1);
	assert_int_equal(w, 1);
	/* Nor past the buffer: 12 bytes hold "aaaa\\x1b" and its NUL, not the next unit. */
	used = fidx_visible("aaaa\x1b\x1b", 100, out, 12, &w);
	assert_string_equal(out, "aaaa\\x1b");
	assert_int_equal(used, 5);
	setlocale(LC_CTYPE, "C");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_utf8_locale),
		cmocka_unit_test(test_c_locale),
		cmocka_unit_test(test_cut),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
