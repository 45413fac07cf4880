/*
 * test_when.c - WHEN arguments and ISO times of the query commands, and the
 * times of timestamp.h: dates in UTC and local time, ages from a given now
 * (saturating at the start of time instead of overflowing), strict field
 * widths, impossible dates refused, the ISO text of times before 1970, after
 * 2262 (where int64 nanoseconds end) and beyond 9999, the exact nanosecond
 * text of any time, and the conversions to and from int64 nanoseconds at
 * both ends of their range.
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

#include "timestamp.h"
#include "when.h"

/* A time of sec seconds and nsec nanoseconds. */
static struct fidx_time T(int64_t sec, uint32_t nsec)
{
	return (struct fidx_time){.sec = sec, .nsec = nsec};
}

/* Parses s with now; fails the test unless it parses. */
static struct fidx_time when(const char *s, struct fidx_time now)
{
	struct fidx_time t = T(12345, 6);
	if (fidx_when_parse(s, now, &t) != 0)
		fail_msg("'%s' refused", s);
	return t;
}

/* Asserts that a and b are the same time. */
#define assert_time(a, b)                                                      \
	do {                                                                   \
		struct fidx_time a_ = (a), b_ = (b);                           \
		assert_int_equal(a_.sec, b_.sec);                              \
		assert_int_equal(a_.nsec, b_.nsec);                            \
	} while (0)

static void test_dates(void **state)
{
	(void)state;
	struct fidx_time zero = T(0, 0);
	assert_time(when("1970-01-01Z", zero), T(0, 0));
	assert_time(when("2023-11-14T22:13:20Z", zero), T(1700000000, 0));
	assert_time(when("2023-11-14 22:13Z", zero), T(1699999980, 0));
	assert_time(when("2024-02-29Z", zero), T(1709164800, 0));
	assert_time(when("1969-12-31T23:59:59Z", zero), T(-1, 0));
	/* Beyond the int64 nanoseconds of 1677..2262: exact, no saturation. */
	assert_time(when("2400-01-01Z", zero), T(13569465600, 0));
	assert_time(when("9999-12-31T23:59:59Z", zero), T(253402300799, 0));
	assert_time(when("1000-01-01Z", zero), T(-30610224000, 0));
	/* Local time: a fixed zone five hours east of UTC. */
	setenv("TZ", "XST-5", 1);
	tzset();
	assert_time(when("1970-01-01T05:00", zero), T(0, 0));
	assert_time(when("1970-01-01", zero), T(-5 * 3600, 0));
}

static void test_ages(void **state)
{
	(void)state;
	struct fidx_time now = T(1700000000, 123);
	assert_time(when("0s", now), now);
	assert_time(when("30s", now), T(1700000000 - 30, 123));
	assert_time(when("15m", now), T(1700000000 - 900, 123));
	assert_time(when("12h", now), T(1700000000 - 12 * 3600, 123));
	assert_time(when("7d", now), T(1700000000 - 7 * 86400, 123));
	assert_time(when("2w", now), T(1700000000 - 14 * 86400, 123));
	assert_time(when("126500d", now), T(1700000000 - 126500LL * 86400, 123));
	/* Ages before the first second there is: that second, not an overflow. */
	assert_time(when("99999999999999999999999d", now), T(INT64_MIN, 0));
	assert_time(when("18446744073709551615s", T(INT64_MIN, 0)), T(INT64_MIN, 0));
	assert_time(when("0w", T(INT64_MIN, 0)), T(INT64_MIN, 0));
	assert_time(when("106751991167301d", T(0, 0)), T(INT64_MIN, 0));
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
		struct fidx_time t = T(777, 7);
		errno = 0;
		if (fidx_when_parse(bad[i], T(0, 0), &t) != -1)
			fail_msg("'%s' accepted", bad[i]);
		assert_int_equal(errno, EINVAL);
		assert_time(t, T(777, 7));
	}
}

static void test_iso(void **state)
{
	(void)state;
	char buf[FIDX_WHEN_ISO];
	static const struct {
		struct fidx_time t;
		const char *iso;
	} cases[] = {
		{{0, 0}, "1970-01-01T00:00:00.000000000Z"},
		{{1700000000, 123456789}, "2023-11-14T22:13:20.123456789Z"},
		{{-1, 999999999}, "1969-12-31T23:59:59.999999999Z"},
		{{-1, 500000000}, "1969-12-31T23:59:59.500000000Z"},
		{{-2147483648LL, 0}, "1901-12-13T20:45:52.000000000Z"},
		{{2147483648LL, 0}, "2038-01-19T03:14:08.000000000Z"},
		{{9223372036LL, 854775807}, "2262-04-11T23:47:16.854775807Z"},
		{{-9223372037LL, 145224192}, "1677-09-21T00:12:43.145224192Z"},
		{{9224841600LL, 0}, "2262-04-29T00:00:00.000000000Z"},
		{{13569465600LL, 0}, "2400-01-01T00:00:00.000000000Z"},
		{{15041728000LL, 1}, "2446-08-27T01:46:40.000000001Z"},
		{{253402300799LL, 999999999}, "9999-12-31T23:59:59.999999999Z"},
		{{253402300800LL, 0}, "+10000-01-01T00:00:00.000000000Z"},
		{{-62167219200LL, 0}, "0000-01-01T00:00:00.000000000Z"},
		{{-62167219201LL, 0}, "-0001-12-31T23:59:59.000000000Z"},
		{{INT64_MAX, 999999999}, "+292277026596-12-04T15:30:07.999999999Z"},
		{{INT64_MIN, 0}, "-292277022657-01-27T08:29:52.000000000Z"},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		fidx_when_iso(cases[i].t, buf);
		if (strcmp(buf, cases[i].iso) != 0)
			fail_msg("%lld s %u ns: got %s, want %s", (long long)cases[i].t.sec,
				 cases[i].t.nsec, buf, cases[i].iso);
	}
	assert_int_equal(strlen(fidx_when_iso(T(0, 0), buf)), FIDX_WHEN_ISO_LEN);
}

/* fidx_time_put_ns(): the exact decimal nanoseconds, also beyond 64 bits. */
static void test_ns_text(void **state)
{
	(void)state;
	static const struct {
		struct fidx_time t;
		const char *ns;
	} cases[] = {
		{{0, 0}, "0"},
		{{0, 1}, "1"},
		{{-1, 999999999}, "-1"},
		{{-1, 0}, "-1000000000"},
		{{-1, 500000000}, "-500000000"},
		{{1700000000, 123456789}, "1700000000123456789"},
		{{9223372036LL, 854775807}, "9223372036854775807"},
		{{-9223372037LL, 145224192}, "-9223372036854775808"},
		{{9223372036LL, 854775808}, "9223372036854775808"},
		{{13569465600LL, 0}, "13569465600000000000"},
		{{-9300000000LL, 5}, "-9299999999999999995"},
		{{INT64_MAX, 999999999}, "9223372036854775807999999999"},
		{{INT64_MIN, 0}, "-9223372036854775808000000000"},
		{{INT64_MIN, 1}, "-9223372036854775807999999999"},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char buf[FIDX_TIME_NS_MAX + 1];
		char *end = fidx_time_put_ns(buf, cases[i].t);
		assert_true(end - buf <= FIDX_TIME_NS_MAX);
		*end = '\0';
		if (strcmp(buf, cases[i].ns) != 0)
			fail_msg("%lld s %u ns: got %s, want %s", (long long)cases[i].t.sec,
				 cases[i].t.nsec, buf, cases[i].ns);
	}
}

/* Nanoseconds to times and back, exact at both ends, and refused beyond. */
static void test_ns_range(void **state)
{
	(void)state;
	static const int64_t ns[] = {0, 1, -1, 999999999, -1000000000, -1000000001,
				     INT64_MAX, INT64_MIN, INT64_MIN + 1, INT64_MAX - 1};
	for (size_t i = 0; i < sizeof(ns) / sizeof(ns[0]); i++) {
		struct fidx_time t = fidx_time_of_ns(ns[i]);
		int64_t back = 42;
		assert_true(t.nsec < 1000000000u);
		assert_true(fidx_time_to_ns(t, &back));
		assert_int_equal(back, ns[i]);
	}
	assert_time(fidx_time_of_ns(-1), T(-1, 999999999));
	assert_time(fidx_time_of_ns(INT64_MIN), T(-9223372037LL, 145224192));
	static const struct fidx_time beyond[] = {
		{9223372036LL, 854775808}, {9223372037LL, 0}, {-9223372037LL, 145224191},
		{-9223372038LL, 999999999}, {INT64_MAX, 0}, {INT64_MIN, 0}, {13569465600LL, 0},
	};
	for (size_t i = 0; i < sizeof(beyond) / sizeof(beyond[0]); i++) {
		int64_t back = 42;
		assert_false(fidx_time_to_ns(beyond[i], &back));
		assert_int_equal(back, 42);
	}
	assert_true(fidx_time_cmp(T(-1, 999999999), T(0, 0)) < 0);
	assert_true(fidx_time_cmp(T(5, 2), T(5, 1)) > 0);
	assert_int_equal(fidx_time_cmp(T(5, 1), T(5, 1)), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_dates),
		cmocka_unit_test(test_ages),
		cmocka_unit_test(test_refused),
		cmocka_unit_test(test_iso),
		cmocka_unit_test(test_ns_text),
		cmocka_unit_test(test_ns_range),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
