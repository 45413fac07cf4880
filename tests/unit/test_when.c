/*
 * test_when.c - WHEN arguments and ISO times of the query commands: dates in
 * UTC and local time, ages from a given now, dates outside the int64
 * nanosecond range saturating (they used to overflow: UBSan stopped
 * `fidx find --newer 9999-01-01`), strict field widths, impossible dates
 * refused, and the ISO text of times before 1970 and at the range's ends.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>

#include <cmocka.h>

#include "when.h"

#define S 1000000000LL

/* Parses s with now_ns; fails the test unless it parses. */
static int64_t when(const char *s, int64_t now_ns)
{
	int64_t ns = 12345;
	if (fidx_when_parse(s, now_ns, &ns) != 0)
		fail_msg("'%s' refused", s);
	return ns;
}

static void test_dates(void **state)
{
	(void)state;
	assert_int_equal(when("1970-01-01Z", 0), 0);
	assert_int_equal(when("2023-11-14T22:13:20Z", 0), 1700000000 * S);
	assert_int_equal(when("2023-11-14 22:13Z", 0), 1699999980 * S);
	assert_int_equal(when("2024-02-29Z", 0), 1709164800 * S);
	assert_int_equal(when("1969-12-31T23:59:59Z", 0), -1 * S);
	/* Local time: a fixed zone five hours east of UTC. */
	setenv("TZ", "XST-5", 1);
	tzset();
	assert_int_equal(when("1970-01-01T05:00", 0), 0);
	assert_int_equal(when("1970-01-01", 0), -5 * 3600 * S);
}

static void test_outside_the_range(void **state)
{
	(void)state;
	/* int64 ns end in 2262 and begin in 1677: beyond, the ends. */
	assert_true(when("9999-12-31T23:59:59Z", 0) == INT64_MAX);
	assert_true(when("2263-01-01Z", 0) == INT64_MAX);
	assert_true(when("0000-01-01Z", 0) == INT64_MIN);
	assert_true(when("1000-01-01", 0) == INT64_MIN);
	assert_int_equal(when("2262-04-11T23:47:16Z", 0), 9223372036 * S);
	assert_int_equal(when("1677-09-21T00:12:44Z", 0), -9223372036 * S);
}

static void test_ages(void **state)
{
	(void)state;
	int64_t now = 1700000000 * S + 123;
	assert_int_equal(when("0s", now), now);
	assert_int_equal(when("30s", now), now - 30 * S);
	assert_int_equal(when("15m", now), now - 900 * S);
	assert_int_equal(when("12h", now), now - 12 * 3600 * S);
	assert_int_equal(when("7d", now), now - 7 * 86400 * S);
	assert_int_equal(when("2w", now), now - 14 * 86400 * S);
	/* Ages before 1677: the start of time, not an overflow. */
	assert_true(when("126500d", now) == INT64_MIN);
	assert_int_equal(when("100000d", now), now - 100000LL * 86400 * S);
	assert_int_equal(when("126400d", now), (int64_t)((uint64_t)now - 126400ULL * 86400 * S));
	assert_true(when("99999999999999999999999d", now) == INT64_MIN);
	assert_true(when("18446744073709551615s", INT64_MIN) == INT64_MIN);
	assert_int_equal(when("0w", INT64_MIN), INT64_MIN);
}

static void test_refused(void **state)
{
	(void)state;
	const char *bad[] = {
		"", "yesterday", "7", "7x", "7dd", "-1d", "+1d", " 7d", "d",
		"2024-02-30", "2023-02-29", "2024-13-01", "2024-00-10", "2024-01-00", "2024-01-32",
		"2024-1-01", "2024-01-1", "24-01-01", " 999-01-01", "+202-01-01", "-999-01-01",
		"2024-01-01T", "2024-01-01T1:00", "2024-01-01T24:00", "2024-01-01T10:60",
		"2024-01-01T10:00:", "2024-01-01T10:00:60", "2024-01-01T10:00:5", "2024-01-01ZZ",
		"2024-01-01 ", "2024-01-01x", "2024/01/01",
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		int64_t ns = 777;
		errno = 0;
		if (fidx_when_parse(bad[i], 0, &ns) != -1)
			fail_msg("'%s' accepted", bad[i]);
		assert_int_equal(errno, EINVAL);
		assert_int_equal(ns, 777);
	}
}

static void test_iso(void **state)
{
	(void)state;
	char buf[FIDX_WHEN_ISO];
	assert_string_equal(fidx_when_iso(0, buf), "1970-01-01T00:00:00.000000000Z");
	assert_string_equal(fidx_when_iso(1700000000 * S + 123456789, buf),
			    "2023-11-14T22:13:20.123456789Z");
	assert_string_equal(fidx_when_iso(-1, buf), "1969-12-31T23:59:59.999999999Z");
	assert_string_equal(fidx_when_iso(INT64_MAX, buf), "2262-04-11T23:47:16.854775807Z");
	assert_string_equal(fidx_when_iso(INT64_MIN, buf), "1677-09-21T00:12:43.145224192Z");
	assert_int_equal(fidx_when_seconds(-1), -1);
	assert_int_equal(fidx_when_seconds(-S), -1);
	assert_int_equal(fidx_when_seconds(S - 1), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_dates),
		cmocka_unit_test(test_outside_the_range),
		cmocka_unit_test(test_ages),
		cmocka_unit_test(test_refused),
		cmocka_unit_test(test_iso),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
