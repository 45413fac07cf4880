/*
 * when.c - WHEN arguments in, ISO 8601 times out (when.h).
 *
 * A date is read field by field with fixed widths (no sscanf: it would take
 * " 999-01-01" or "+202-01-01" for years), then handed to timegm() or
 * mktime(), which also normalise an impossible date (2023-02-30 becomes
 * March 2): such a date is refused by checking that the day and month come
 * back unchanged.  Seconds become nanoseconds with saturation, never with a
 * signed overflow.
 */
#include "when.h"

#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#define NS 1000000000

/* Reads n decimal digits at *p into *v and moves *p past them.  Returns whether all were digits. */
static bool digits(const char **p, int n, int *v)
{
	*v = 0;
	for (int i = 0; i < n; i++) {
		char c = (*p)[i];
		if (c < '0' || c > '9')
			return false;
		*v = *v * 10 + (c - '0');
	}
	*p += n;
	return true;
}

/* Returns seconds since the epoch as nanoseconds, saturated to the int64 range. */
static int64_t to_ns(int64_t seconds)
{
	if (seconds > INT64_MAX / NS)
		return INT64_MAX;
	if (seconds < INT64_MIN / NS)
		return INT64_MIN;
	return seconds * NS;
}

/* Parses an age ("30s", "7d").  Returns 0, or -1 when s is not one. */
static int parse_age(const char *s, int64_t now_ns, int64_t *ns)
{
	static const struct { char unit; uint64_t seconds; } ages[] = {
		{'s', 1}, {'m', 60}, {'h', 3600}, {'d', 86400}, {'w', 7 * 86400},
	};
	const char *p = s;
	uint64_t n = 0;
	bool big = false;

	for (; *p >= '0' && *p <= '9'; p++) {
		if (n > (UINT64_MAX - 9) / 10)
			big = true;
		else
			n = n * 10 + (uint64_t)(*p - '0');
	}
	if (p == s || !p[0] || p[1])
		return -1;
	for (size_t i = 0; i < sizeof(ages) / sizeof(ages[0]); i++) {
		if (*p != ages[i].unit)
			continue;
		/* now_ns - n * seconds * NS, saturated (now_ns may be negative in a test). */
		uint64_t room = (uint64_t)now_ns - (uint64_t)INT64_MIN; /* now_ns - INT64_MIN >= 0 */
		uint64_t limit = room / NS / ages[i].seconds;
		if (big || n > limit)
			*ns = INT64_MIN;
		else
			*ns = (int64_t)((uint64_t)now_ns - n * ages[i].seconds * NS);
		return 0;
	}
	return -1;
}

int fidx_when_parse(const char *s, int64_t now_ns, int64_t *ns)
{
	const char *p = s;
	int y, mo, d, h = 0, mi = 0, sec = 0;

	if (parse_age(s, now_ns, ns) == 0)
		return 0;
	if (!digits(&p, 4, &y) || *p++ != '-' || !digits(&p, 2, &mo) || *p++ != '-' ||
	    !digits(&p, 2, &d))
		goto bad;
	if (*p == 'T' || *p == ' ') {
		p++;
		if (!digits(&p, 2, &h) || *p++ != ':' || !digits(&p, 2, &mi))
			goto bad;
		if (*p == ':' && (p++, !digits(&p, 2, &sec)))
			goto bad;
	}
	bool utc = *p == 'Z';
	if (utc)
		p++;
	if (*p || mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 || sec > 59)
		goto bad;
	struct tm tm = {.tm_year = y - 1900, .tm_mon = mo - 1, .tm_mday = d, .tm_hour = h,
			.tm_min = mi, .tm_sec = sec, .tm_isdst = -1};
	errno = 0;
	time_t t = utc ? timegm(&tm) : mktime(&tm);
	if ((t == (time_t)-1 && errno) || tm.tm_mday != d || tm.tm_mon != mo - 1)
		goto bad;
	*ns = to_ns((int64_t)t);
	return 0;
bad:
	errno = EINVAL;
	return -1;
}

/* Writes the n-digit zero-padded decimal v at p. */
static void put_digits(char *p, unsigned v, int n)
{
	while (n--) {
		p[n] = (char)('0' + v % 10);
		v /= 10;
	}
}

/*
 * Sets "YYYY-MM-DD" for days since 1970-01-01 (proleptic Gregorian): the
 * civil-from-days computation over 400-year eras of 146,097 days, with the
 * year starting on March 1 so that the leap day is its last.
 */
static void civil_date(int64_t days, char out[10])
{
	int64_t z = days + 719468; /* days since 0000-03-01 */
	int64_t era = (z >= 0 ? z : z - 146096) / 146097;
	unsigned doe = (unsigned)(z - era * 146097);                          /* [0, 146096] */
	unsigned yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365; /* [0, 399] */
	unsigned doy = doe - (365 * yoe + yoe / 4 - yoe / 100);               /* [0, 365] */
	unsigned mp = (5 * doy + 2) / 153;                                    /* March = 0 */
	unsigned day = doy - (153 * mp + 2) / 5 + 1;
	unsigned month = mp < 10 ? mp + 3 : mp - 9;
	int64_t year = (int64_t)yoe + era * 400 + (month <= 2);
	/* int64 nanoseconds reach 1677..2262: always four digits. */
	put_digits(out, (unsigned)year, 4);
	out[4] = '-';
	put_digits(out + 5, month, 2);
	out[7] = '-';
	put_digits(out + 8, day, 2);
}

const char *fidx_when_iso(int64_t ns, char buf[static FIDX_WHEN_ISO])
{
	/* Rows of one tree share few days: each thread remembers its last one. */
	static _Thread_local int64_t cached_day = INT64_MIN;
	static _Thread_local char date[10];
	int64_t sec = fidx_when_seconds(ns);
	int64_t rem = ns % NS;
	unsigned frac = (unsigned)(rem < 0 ? rem + NS : rem);
	int64_t day = sec / 86400 - (sec % 86400 < 0);
	unsigned tod = (unsigned)(sec - day * 86400);

	if (day != cached_day) {
		civil_date(day, date);
		cached_day = day;
	}
	memcpy(buf, date, 10);
	buf[10] = 'T';
	put_digits(buf + 11, tod / 3600, 2);
	buf[13] = ':';
	put_digits(buf + 14, tod / 60 % 60, 2);
	buf[16] = ':';
	put_digits(buf + 17, tod % 60, 2);
	buf[19] = '.';
	put_digits(buf + 20, frac, 9);
	buf[29] = 'Z';
	buf[30] = '\0';
	return buf;
}
