/*
 * test_winpath.c - the portable half of the Windows source (winpath.h):
 * UTF-16 names to WTF-8 and back (non-BMP characters, lone high and low
 * surrogates, mixtures, and every invalid form refused so that the mapping
 * stays a bijection), native paths to the stored form and back (drives,
 * shares, \\?\ prefixes, long paths), FILETIMEs before 1970 and after 2262,
 * the synthesised modes, reparse data and stream names as Windows gives them
 * (which Wine cannot make), and the exclude globs against fnmatch(3).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <fnmatch.h>

#include <cmocka.h>

#include "winpath.h"

/* The code units of the ASCII-or-\uXXXX string a (a test's shorthand), in w; returns the count. */
static size_t units(uint16_t *w, const char *a)
{
	size_t k = 0;
	while (*a) {
		unsigned v;
		if (a[0] == '\\' && a[1] == 'u' && sscanf(a + 2, "%4x", &v) == 1) {
			w[k++] = (uint16_t)v;
			a += 6;
		} else {
			w[k++] = (unsigned char)*a++;
		}
	}
	w[k] = 0;
	return k;
}

/* Checks that the n units at w give the WTF-8 bytes want (wlen) and come back from them. */
static void check_round_trip(const uint16_t *w, size_t n, const char *want, size_t wlen)
{
	size_t len, back_len;
	char *s = fidx_wtf8_of_utf16(w, n, &len);
	assert_non_null(s);
	assert_int_equal(len, wlen);
	assert_memory_equal(s, want, wlen);
	assert_int_equal(s[len], '\0');
	uint16_t *back = fidx_utf16_of_wtf8(s, len, &back_len);
	assert_non_null(back);
	assert_int_equal(back_len, n);
	assert_memory_equal(back, w, n * sizeof(*w));
	assert_int_equal(back[n], 0);
	free(back);
	free(s);
}

static void test_wtf8_valid(void **state)
{
	(void)state;
	uint16_t w[64];
	size_t n;
	n = units(w, "plain.txt");
	check_round_trip(w, n, "plain.txt", 9);
	n = units(w, "\\u00e9\\u20ac"); /* é € */
	check_round_trip(w, n, "\xc3\xa9\xe2\x82\xac", 5);
	n = units(w, "\\ud83d\\ude00"); /* U+1F600, a pair: one 4-byte sequence */
	check_round_trip(w, n, "\xf0\x9f\x98\x80", 4);
	n = units(w, "\\udbff\\udfff"); /* U+10FFFF */
	check_round_trip(w, n, "\xf4\x8f\xbf\xbf", 4);
	n = units(w, "\\ud800"); /* a lone high surrogate */
	check_round_trip(w, n, "\xed\xa0\x80", 3);
	n = units(w, "\\udc00"); /* a lone low surrogate */
	check_round_trip(w, n, "\xed\xb0\x80", 3);
	n = units(w, "a\\ud800b"); /* lone high among ASCII */
	check_round_trip(w, n, "a\xed\xa0\x80" "b", 5);
	n = units(w, "\\udc00\\ud800"); /* low then high: two lone ones, not a pair */
	check_round_trip(w, n, "\xed\xb0\x80\xed\xa0\x80", 6);
	n = units(w, "\\ud800\\ud800\\ude00"); /* a lone high, then a pair */
	check_round_trip(w, n, "\xed\xa0\x80\xf0\x90\x88\x80", 7);
	n = units(w, "\\ud83d\\ude00\\udc00x"); /* a pair, then a lone low */
	check_round_trip(w, n, "\xf0\x9f\x98\x80\xed\xb0\x80x", 8);
	n = units(w, "x\\ud83d"); /* a high surrogate cut at the end */
	check_round_trip(w, n, "x\xed\xa0\xbd", 4);
	n = units(w, "\\u007f\\u0080\\u07ff\\u0800\\uffff"); /* the edges of each length */
	check_round_trip(w, n, "\x7f\xc2\x80\xdf\xbf\xe0\xa0\x80\xef\xbf\xbf", 11);
	check_round_trip(w, 0, "", 0);
	/* Every single unit, and every pair, goes there and back. */
	for (uint32_t u = 1; u <= 0xffff; u++) {
		w[0] = (uint16_t)u;
		char buf[8];
		size_t k = fidx_wtf8_put(buf, w, 1), back_len;
		uint16_t *back = fidx_utf16_of_wtf8(buf, k, &back_len);
		assert_non_null(back);
		assert_int_equal(back_len, 1);
		assert_int_equal(back[0], u);
		free(back);
	}
}

/* Checks that the n bytes at s are refused as not WTF-8. */
static void check_refused(const char *s, size_t n)
{
	errno = 0;
	assert_null(fidx_utf16_of_wtf8(s, n, NULL));
	assert_int_equal(errno, EILSEQ);
}

static void test_wtf8_invalid(void **state)
{
	(void)state;
	/* A pair written as two 3-byte sequences (CESU-8): the pair has its own form. */
	check_refused("\xed\xa0\xbd\xed\xb8\x80", 6);
	check_refused("a\xed\xa0\x80\xed\xb0\x80z", 8);
	check_refused("\x80", 1);                  /* a stray continuation byte */
	check_refused("\xc3", 1);                  /* cut short */
	check_refused("\xe2\x82", 2);
	check_refused("\xf0\x9f\x98", 3);
	check_refused("\xc0\xaf", 2);              /* overlong '/' */
	check_refused("\xc1\xbf", 2);
	check_refused("\xe0\x9f\xbf", 3);          /* overlong 3-byte */
	check_refused("\xf0\x8f\xbf\xbf", 4);      /* overlong 4-byte */
	check_refused("\xf4\x90\x80\x80", 4);      /* above U+10FFFF */
	check_refused("\xf5\x80\x80\x80", 4);
	check_refused("\xff", 1);
	check_refused("\xe2\x28\xa1", 3);          /* a bad continuation */
	check_refused("ok\xed\xa0", 4);            /* a surrogate cut short */
	/* The length counts: a sequence cut by n is refused even if more bytes follow. */
	check_refused("\xc3\xa9", 1);
}

/* Checks that native path a (shorthand of units()) is stored as want and comes back as native. */
static void check_path(const char *a, const char *want, const char *native)
{
	uint16_t w[2048], expect[2048];
	size_t n = units(w, a), len, back_len;
	char *s = fidx_win_stored_path(w, n, &len);
	assert_non_null(s);
	assert_string_equal(s, want);
	assert_int_equal(len, strlen(want));
	uint16_t *back = fidx_win_native_path(s, len, &back_len);
	assert_non_null(back);
	size_t en = units(expect, native);
	assert_int_equal(back_len, en);
	assert_memory_equal(back, expect, en * sizeof(*back));
	assert_int_equal(back[back_len], 0);
	/* The native path the reverse gives is stored as the same path again. */
	char *again = fidx_win_stored_path(back, back_len, NULL);
	assert_non_null(again);
	assert_string_equal(again, want);
	free(again);
	free(back);
	free(s);
}

static void test_paths(void **state)
{
	(void)state;
	check_path("C:\\", "/C:", "\\\\?\\C:\\");
	check_path("C:", "/C:", "\\\\?\\C:\\");
	check_path("c:\\Users\\x", "/C:/Users/x", "\\\\?\\C:\\Users\\x");
	check_path("C:\\Users\\x\\", "/C:/Users/x", "\\\\?\\C:\\Users\\x");
	check_path("C:/Users//x", "/C:/Users/x", "\\\\?\\C:\\Users\\x");
	check_path("\\\\?\\C:\\x", "/C:/x", "\\\\?\\C:\\x");
	check_path("\\\\?\\C:\\", "/C:", "\\\\?\\C:\\");
	check_path("\\\\server\\share", "//server/share", "\\\\?\\UNC\\server\\share\\");
	check_path("\\\\server\\share\\d", "//server/share/d", "\\\\?\\UNC\\server\\share\\d");
	check_path("\\\\?\\UNC\\server\\share\\d\\e", "//server/share/d/e",
		   "\\\\?\\UNC\\server\\share\\d\\e");
	check_path("\\\\?\\unc\\server\\share", "//server/share", "\\\\?\\UNC\\server\\share\\");
	/* Names keep what Win32 paths would trim, and streams their colon. */
	check_path("\\\\?\\C:\\a \\b.\\ c", "/C:/a /b./ c", "\\\\?\\C:\\a \\b.\\ c");
	check_path("C:\\a\\file.txt:s", "/C:/a/file.txt:s", "\\\\?\\C:\\a\\file.txt:s");
	/* Names in WTF-8: a pair, a lone high, a lone low surrogate. */
	check_path("C:\\\\ud83d\\ude00\\\\ud800\\\\udc00", "/C:/\xf0\x9f\x98\x80/\xed\xa0\x80/\xed\xb0\x80",
		   "\\\\?\\C:\\\\ud83d\\ude00\\\\ud800\\\\udc00");
	/* Over MAX_PATH, and over 1,000 units. */
	char native[1600], stored[1600], back[1600];
	strcpy(native, "C:");
	strcpy(stored, "/C:");
	strcpy(back, "\\\\?\\C:");
	for (int i = 0; i < 130; i++) {
		strcat(native, "\\dirname10");
		strcat(stored, "/dirname10");
		strcat(back, "\\dirname10");
	}
	assert_true(strlen(native) > 1000);
	check_path(native, stored, back);
}

static void test_paths_refused(void **state)
{
	(void)state;
	const char *bad_native[] = {
		"relative\\x", "\\rooted", "x", "", "1:\\x", "C:x", "\\\\server", "\\\\server\\",
		"\\\\?\\relative", "C:\\a\\..\\b", "C:\\.\\b", "\\\\.\\C:\\x", "\\\\?\\UNC\\server",
	};
	for (size_t i = 0; i < sizeof(bad_native) / sizeof(bad_native[0]); i++) {
		uint16_t w[64];
		size_t n = units(w, bad_native[i]);
		errno = 0;
		assert_null(fidx_win_stored_path(w, n, NULL));
		assert_int_equal(errno, EINVAL);
	}
	const char *bad_stored[] = {
		"", "C:/x", "/c:/x", "/C:/", "/C:/x/", "/C:/x//y", "/C:/./y", "/C:/../y", "/C",
		"/C:x", "//server", "//server/", "//server//share", "///share", "/1:/x",
	};
	for (size_t i = 0; i < sizeof(bad_stored) / sizeof(bad_stored[0]); i++) {
		errno = 0;
		assert_null(fidx_win_native_path(bad_stored[i], strlen(bad_stored[i]), NULL));
		assert_int_equal(errno, EINVAL);
	}
	/* A name that is not WTF-8, and a NUL inside. */
	errno = 0;
	assert_null(fidx_win_native_path("/C:/\xed\xa0\x80\xed\xb0\x80", 10, NULL));
	assert_int_equal(errno, EILSEQ);
	errno = 0;
	assert_null(fidx_win_native_path("/C:/a\0b", 7, NULL));
	assert_int_equal(errno, EINVAL);
	uint16_t w[] = {'C', ':', '\\', 'a', 0, 'b'};
	errno = 0;
	assert_null(fidx_win_stored_path(w, 6, NULL));
	assert_int_equal(errno, EINVAL);
}

/* Checks that ticks are the time (sec, nsec) and back. */
static void check_time(int64_t ticks, int64_t sec, uint32_t nsec)
{
	struct fidx_time t = fidx_win_time(ticks);
	assert_int_equal(t.sec, sec);
	assert_int_equal(t.nsec, nsec);
	int64_t back = -1;
	if (ticks >= 0) {
		assert_true(fidx_win_ticks(t, &back));
		assert_int_equal(back, ticks);
	}
}

static void test_times(void **state)
{
	(void)state;
	check_time(116444736000000000LL, 0, 0);                /* 1970-01-01 */
	check_time(116444736000000001LL, 0, 100);
	check_time(116444735999999999LL, -1, 999999900);       /* 100 ns before 1970 */
	check_time(0, -11644473600LL, 0);                      /* 1601-01-01 */
	check_time(1, -11644473600LL, 100);
	/* 1900-01-01T00:00:00.1234567Z */
	check_time(94354848001234567LL, -2208988800LL, 123456700);
	/* 2262-04-12 and later: past int64 nanoseconds, still exact here. */
	check_time(208678464000000005LL, 9223372800LL, 500);
	check_time(INT64_MAX, INT64_MAX / 10000000 - 11644473600LL,
		   (uint32_t)(INT64_MAX % 10000000) * 100);
	check_time(1712345678912345678LL, 1712345678912345678LL / 10000000 - 11644473600LL,
		   (uint32_t)(1712345678912345678LL % 10000000) * 100);
	/* A FILETIME with its top bit set, read as negative: before 1601, rounded down. */
	check_time(-1, -11644473601LL, 999999900);
	int64_t ticks = 7;
	assert_false(fidx_win_ticks((struct fidx_time){.sec = 0, .nsec = 50}, &ticks));
	assert_false(fidx_win_ticks((struct fidx_time){.sec = -11644473601LL, .nsec = 0}, &ticks));
	assert_false(fidx_win_ticks((struct fidx_time){.sec = INT64_MAX / 2, .nsec = 0}, &ticks));
	assert_int_equal(ticks, 7);
}

static void test_modes(void **state)
{
	(void)state;
	assert_int_equal(fidx_win_mode(0x20, false), 0100644);       /* ARCHIVE */
	assert_int_equal(fidx_win_mode(0x80, false), 0100644);       /* NORMAL */
	assert_int_equal(fidx_win_mode(0x21, false), 0100444);       /* READONLY */
	assert_int_equal(fidx_win_mode(0x10, false), 0040755);       /* DIRECTORY */
	assert_int_equal(fidx_win_mode(0x11, false), 0040755);       /* a read-only folder */
	assert_int_equal(fidx_win_mode(0x410, true), 0120777);       /* a junction */
	assert_int_equal(fidx_win_mode(0x420, true), 0120777);       /* a file symlink */
}

/* Appends the 16-bit little-endian v at b + *k. */
static void put16(unsigned char *b, size_t *k, unsigned v)
{
	b[(*k)++] = (unsigned char)v;
	b[(*k)++] = (unsigned char)(v >> 8);
}

/*
 * Builds a REPARSE_DATA_BUFFER of tag (a symlink's has flags) with the
 * substitute name sub and the print name print (shorthands of units()) in
 * b; returns its length.
 */
static size_t reparse_buf(unsigned char *b, uint32_t tag, const char *sub, const char *print)
{
	uint16_t ws[256], wp[256];
	size_t ns = units(ws, sub), np = units(wp, print), k = 0;
	bool symlink = tag == 0xA000000Cu;
	size_t data = 8 + (symlink ? 4 : 0) + 2 * (ns + np);
	put16(b, &k, tag & 0xffff);
	put16(b, &k, tag >> 16);
	put16(b, &k, (unsigned)data);
	put16(b, &k, 0);
	put16(b, &k, 0);                    /* the substitute name first ... */
	put16(b, &k, (unsigned)(2 * ns));
	put16(b, &k, (unsigned)(2 * ns));   /* ... then the print name */
	put16(b, &k, (unsigned)(2 * np));
	if (symlink) {
		put16(b, &k, 1);            /* SYMLINK_FLAG_RELATIVE */
		put16(b, &k, 0);
	}
	for (size_t i = 0; i < ns; i++)
		put16(b, &k, ws[i]);
	for (size_t i = 0; i < np; i++)
		put16(b, &k, wp[i]);
	return k;
}

static void test_reparse(void **state)
{
	(void)state;
	unsigned char b[1024];
	struct fidx_win_reparse rp;
	/* A relative file symlink: the print name. */
	size_t n = reparse_buf(b, 0xA000000Cu, "plain.txt", "plain.txt");
	assert_int_equal(fidx_win_reparse_parse(b, n, &rp), 0);
	assert_int_equal(rp.tag, 0xA000000Cu);
	assert_true(rp.name_surrogate);
	assert_false(rp.volume);
	assert_string_equal(rp.target, "plain.txt");
	assert_int_equal(rp.target_len, 9);
	free(rp.target);
	/* A junction without a print name: the substitute name, a lone surrogate kept. */
	n = reparse_buf(b, 0xA0000003u, "\\??\\C:\\x\\ud800", "");
	assert_int_equal(fidx_win_reparse_parse(b, n, &rp), 0);
	assert_true(rp.name_surrogate);
	assert_false(rp.volume);
	assert_string_equal(rp.target, "\\??\\C:\\x\xed\xa0\x80");
	free(rp.target);
	/* A volume mount point. */
	n = reparse_buf(b, 0xA0000003u, "\\??\\Volume{0b1c2d3e-0000-0000-0000-100000000000}\\", "");
	assert_int_equal(fidx_win_reparse_parse(b, n, &rp), 0);
	assert_true(rp.volume);
	free(rp.target);
	/* WSL's symlink: UTF-8 after a version. */
	unsigned char lx[] = {0x1d, 0, 0, 0xa0, 9, 0, 0, 0, 2, 0, 0, 0, '.', '.', '/', 'a', 0xc3};
	assert_int_equal(fidx_win_reparse_parse(lx, sizeof(lx), &rp), 0);
	assert_true(rp.name_surrogate);
	assert_int_equal(rp.target_len, 5);
	assert_memory_equal(rp.target, "../a\xc3", 5);
	free(rp.target);
	/* Another tag (dedup, not a name surrogate): no target. */
	unsigned char dedup[] = {0x13, 0, 0, 0x80, 0, 0, 0, 0};
	assert_int_equal(fidx_win_reparse_parse(dedup, sizeof(dedup), &rp), 0);
	assert_false(rp.name_surrogate);
	assert_null(rp.target);
	/* Names outside the data, a header cut short. */
	n = reparse_buf(b, 0xA000000Cu, "target", "target");
	assert_int_equal(fidx_win_reparse_parse(b, n - 4, &rp), 0); /* print name cut: substitute */
	assert_string_equal(rp.target, "target");
	free(rp.target);
	assert_int_equal(fidx_win_reparse_parse(b, 22, &rp), 0);    /* both cut */
	assert_null(rp.target);
	b[14] = 0xff;                                               /* print length past the end */
	b[15] = 0x7f;
	assert_int_equal(fidx_win_reparse_parse(b, n, &rp), 0);
	assert_string_equal(rp.target, "target");
	free(rp.target);
	errno = 0;
	assert_int_equal(fidx_win_reparse_parse(b, 7, &rp), -1);
	assert_int_equal(errno, EINVAL);
}

static void test_stream_names(void **state)
{
	(void)state;
	uint16_t w[64];
	size_t len = 99;
	assert_true(fidx_win_stream_name(w, units(w, ":s:$DATA"), &len));
	assert_int_equal(len, 1);
	assert_true(fidx_win_stream_name(w, units(w, ":Zone.Identifier:$DATA"), &len));
	assert_int_equal(len, 15);
	assert_true(fidx_win_stream_name(w, units(w, ":\\ud83d\\ude00:$DATA"), &len));
	assert_int_equal(len, 2);
	assert_false(fidx_win_stream_name(w, units(w, "::$DATA"), &len));
	assert_false(fidx_win_stream_name(w, units(w, ":s:$INDEX_ALLOCATION"), &len));
	assert_false(fidx_win_stream_name(w, units(w, "s:$DATA"), &len));
	assert_false(fidx_win_stream_name(w, units(w, ":a:b:$DATA"), &len));
	assert_false(fidx_win_stream_name(w, units(w, ":$DATA"), &len));
	assert_false(fidx_win_stream_name(w, 0, &len));
}

static void test_globs(void **state)
{
	(void)state;
	const char *patterns[] = {
		"*.o", "*", "?", ".git", "a*b", "a*b*c", "*a", "[abc]x", "[!abc]x", "[^a]",
		"[a-c]*", "[]]", "[!]]", "\\*", "a\\?", "[", "[a", "x[", "build/cache", "*/cache",
		"b*/c*e", "**/x", "a?c", "[a-]", "[-a]", "*.tar.gz", "d/*", "d/*/e", "",
	};
	const char *strings[] = {
		"x.o", "x.c", ".o", "", "a", "ab", "abc", "aXbYc", "ax", "bx", "dx", "]", "[",
		"*", "a?", "ab?", "x[", "[a", ".git", "build/cache", "src/cache", "b/cache",
		"build/x/cache", "a/x", "x", "abc/x", "a/c", "-", "f.tar.gz", "d/e", "d/x/e",
		"d/x/y/e", "a/b", "cache",
	};
	for (size_t i = 0; i < sizeof(patterns) / sizeof(patterns[0]); i++)
		for (size_t j = 0; j < sizeof(strings) / sizeof(strings[0]); j++)
			for (int pathname = 0; pathname < 2; pathname++) {
				bool want = fnmatch(patterns[i], strings[j],
						    pathname ? FNM_PATHNAME : 0) == 0;
				bool got = fidx_win_glob_match(patterns[i], strings[j], pathname);
				if (want != got)
					fail_msg("'%s' against '%s' (pathname %d): fnmatch %d, ours %d",
						 patterns[i], strings[j], pathname, want, got);
			}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_wtf8_valid),
		cmocka_unit_test(test_wtf8_invalid),
		cmocka_unit_test(test_paths),
		cmocka_unit_test(test_paths_refused),
		cmocka_unit_test(test_times),
		cmocka_unit_test(test_modes),
		cmocka_unit_test(test_reparse),
		cmocka_unit_test(test_stream_names),
		cmocka_unit_test(test_globs),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
