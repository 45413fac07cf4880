/*
 * test_export.c - the writers export.c gives every format: integers at
 * their limits, hex, ISO 8601 times (against gmtime_r over four centuries,
 * before 1970 included), ls -l mode strings, and the strict UTF-8 test that
 * decides what XML can carry.  Each writes into an fmemopen() buffer.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "export.h"
#include "json.h"

/* What a writer call put into a memory stream, as a string. */
struct sink {
	char buf[256];
	FILE *f;
};

static void sink_open(struct sink *s)
{
	memset(s->buf, 0, sizeof(s->buf));
	s->f = fmemopen(s->buf, sizeof(s->buf), "w");
	assert_non_null(s->f);
}

static const char *sink_text(struct sink *s)
{
	fclose(s->f);
	return s->buf;
}

static void test_integers(void **state)
{
	(void)state;
	static const struct {
		int64_t v;
		const char *want;
	} cases[] = {
		{0, "0"}, {7, "7"}, {-1, "-1"}, {1234567890123, "1234567890123"},
		{INT64_MAX, "9223372036854775807"}, {INT64_MIN, "-9223372036854775808"},
	};
	struct sink s;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		sink_open(&s);
		export_put_i64(s.f, cases[i].v);
		assert_string_equal(sink_text(&s), cases[i].want);
	}
	sink_open(&s);
	export_put_u64(s.f, UINT64_MAX);
	assert_string_equal(sink_text(&s), "18446744073709551615");
	/* A negative stored ino reads as its two's complement. */
	sink_open(&s);
	export_put_u64(s.f, (uint64_t)INT64_C(-2));
	assert_string_equal(sink_text(&s), "18446744073709551614");
}

static void test_hex(void **state)
{
	(void)state;
	unsigned char d[70];
	char want[141];
	for (size_t i = 0; i < sizeof(d); i++) {
		d[i] = (unsigned char)(i * 37 + 5);
		snprintf(want + 2 * i, 3, "%02x", d[i]);
	}
	struct sink s;
	sink_open(&s);
	fidx_write_hex(s.f, d, sizeof(d)); /* longer than one 64-byte chunk */
	assert_string_equal(sink_text(&s), want);
}

/* The ISO text of ns by gmtime_r, as the writer must give it. */
static void iso_ref(int64_t ns, char out[64])
{
	int64_t rem = ns % 1000000000;
	int64_t sec = ns / 1000000000 - (rem < 0);
	long frac = (long)(rem < 0 ? rem + 1000000000 : rem);
	time_t t = (time_t)sec;
	struct tm tm;
	assert_non_null(gmtime_r(&t, &tm));
	size_t n = strftime(out, 64, "%Y-%m-%dT%H:%M:%S", &tm);
	snprintf(out + n, 64 - n, ".%09ldZ", frac);
}

static void test_iso_times(void **state)
{
	(void)state;
	struct sink s;
	char want[64];
	/* Fixed points: the epoch, just before it, leap days, the ends of int64 ns. */
	static const int64_t fixed[] = {
		0, -1, 1, 999999999, -1000000000, 951782400000000000 /* 2000-02-29 */,
		-2203891200000000001 /* 1900-02-28T23:59:59.999999999 */,
		4107542400123456789 /* 2100-02-28 */, INT64_MAX, INT64_MIN,
	};
	for (size_t i = 0; i < sizeof(fixed) / sizeof(fixed[0]); i++) {
		sink_open(&s);
		export_put_iso(s.f, fidx_time_of_ns(fixed[i]));
		iso_ref(fixed[i], want);
		assert_string_equal(sink_text(&s), want);
	}
	/* Every 997,001st second (about 11.5 days) over the whole range, so that
	   the writer's cached day is missed and crossed, with scattered fractions. */
	for (int64_t sec = -9223372036LL; sec < 9223372036LL; sec += 997001) {
		int64_t ns = sec * 1000000000 + (int64_t)((uint64_t)sec * 2654435761u % 1000000000);
		sink_open(&s);
		export_put_iso(s.f, fidx_time_of_ns(ns));
		iso_ref(ns, want);
		assert_string_equal(sink_text(&s), want);
	}
}

static void test_perms(void **state)
{
	(void)state;
	static const struct {
		uint32_t mode;
		char type;
		const char *want;
	} cases[] = {
		{0100644, 'r', "rrw-r--r--"}, {040755, 'd', "drwxr-xr-x"},
		{0104755, 'r', "rrwsr-xr-x"}, {0102644, '-', "-rw-r-Sr--"},
		{041777, 'd', "drwxrwxrwt"}, {041776, 'd', "drwxrwxrwT"},
		{0106000, 'r', "r--S--S---"}, {0120777, 'l', "lrwxrwxrwx"},
	};
	struct sink s;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		sink_open(&s);
		export_put_perms(s.f, cases[i].type, cases[i].mode);
		assert_string_equal(sink_text(&s), cases[i].want);
	}
}

static void test_utf8_for_xml(void **state)
{
	(void)state;
	static const struct {
		const char *s;
		size_t want;
	} cases[] = {
		{"a", 1}, {"\x01", 1}, {"\xc3\xa9", 2}, {"\xe2\x82\xac", 3},
		{"\xf0\x9f\x98\x80", 4}, {"\xf4\x8f\xbf\xbf", 4} /* U+10FFFF */,
		{"\xef\xbf\xbd", 3} /* U+FFFD */,
		{"\xc0\xaf", 0}, {"\xc1\xbf", 0}, {"\xe0\x80\xaf", 0}, {"\xe0\x9f\xbf", 0},
		{"\xf0\x8f\xbf\xbf", 0} /* overlong */,
		{"\xed\xa0\x80", 0}, {"\xed\xbf\xbf", 0} /* surrogates */,
		{"\xf4\x90\x80\x80", 0}, {"\xf5\x80\x80\x80", 0} /* beyond U+10FFFF */,
		{"\xef\xbf\xbe", 0}, {"\xef\xbf\xbf", 0} /* not XML characters */,
		{"\x80", 0}, {"\xff", 0}, {"\xc3", 0}, {"\xe2\x82", 0} /* truncated */,
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		assert_int_equal(export_utf8_char((const unsigned char *)cases[i].s), cases[i].want);
}

static void test_formats_table(void **state)
{
	(void)state;
	static const char *const names[] = {"csv", "jsonl", "sha256sum", "md5sum", "sha1sum",
					    "sha512sum", "hashdeep", "body", "dfxml"};
	assert_int_equal(export_nformats, sizeof(names) / sizeof(names[0]));
	for (size_t i = 0; i < export_nformats; i++) {
		const struct export_format *f = export_format_find(names[i]);
		assert_non_null(f);
		assert_string_equal(f->name, names[i]);
		assert_non_null(f->row);
		/* A checksum list names its digest and reads regular files only. */
		assert_int_equal(f->digest >= 0, strstr(names[i], "sum") != NULL);
		assert_int_equal(f->types != 0, f->digest >= 0 || !strcmp(names[i], "hashdeep"));
		if (f->types)
			assert_int_equal(f->types, FIDX_TYPE_FILE);
	}
	assert_null(export_format_find("xml"));
	assert_null(export_format_find(""));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_integers),
		cmocka_unit_test(test_hex),
		cmocka_unit_test(test_iso_times),
		cmocka_unit_test(test_perms),
		cmocka_unit_test(test_utf8_for_xml),
		cmocka_unit_test(test_formats_table),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
