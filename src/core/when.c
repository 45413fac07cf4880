/*
 * when.c - WHEN arguments in, ISO 8601 times out (when.h).
 *
 * A date is read field by field with fixed widths (no sscanf: it would take
 * " 999-01-01" or "+202-01-01" for years), then handed to timegm() or
 * mktime(), which also normalise an impossible date (2023-02-30 becomes
 * March 2): such a date is refused by checking that the day and month come
 * back unchanged.  An age is subtracted with saturation, never with a signed
 * overflow.
 */
#include "when.h"

#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

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

/* Parses an age ("30s", "7d").  Returns 0, or -1 when s is not one. */
static int parse_age(const char *s, struct fidx_time now, struct fidx_time *t)
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
		/* now - n * seconds, saturated (now may be negative in a test). */
		uint64_t room = (uint64_t)now.sec - (uint64_t)INT64_MIN; /* now - INT64_MIN >= 0 */
		if (big || n > room / ages[i].seconds)
			*t = (struct fidx_time){.sec = INT64_MIN, .nsec = 0};
		else
			*t = (struct fidx_time){.sec = (int64_t)((uint64_t)now.sec - n * ages[i].seconds),
						.nsec = now.nsec};
		return 0;
	}
	return -1;
}

int fidx_when_parse(const char *s, struct fidx_time now, struct fidx_time *out)
{
	const char *p = s;
	int y, mo, d, h = 0, mi = 0, sec = 0;

	if (parse_age(s, now, out) == 0)
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
	*out = (struct fidx_time){.sec = (int64_t)t, .nsec = 0};
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
 * Writes the date of days since 1970-01-01 (proleptic Gregorian) at out, as
 * "YYYY-MM-DD" (a year beyond 9999 as "+YYYYY", before 0 as "-YYYY"): the
 * civil-from-days computation over 400-year eras of 146,097 days, with the
 * year starting on March 1 so that the leap day is its last.  Returns the
 * number of bytes written (10 for years 0 to 9999, at most 17).
 */
static size_t civil_date(int64_t days, char *out)
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
	size_t n;
	if (year >= 0 && year <= 9999) {
		put_digits(out, (unsigned)year, 4);
		n = 4;
	} else {
		/* ISO 8601's expanded years: a sign, then at least four digits. */
		uint64_t y = year < 0 ? -(uint64_t)year : (uint64_t)year;
		char digits[24];
		int k = 0;
		do {
			digits[k++] = (char)('0' + y % 10);
			y /= 10;
		} while (y);
		while (k < 4)
			digits[k++] = '0';
		out[0] = year < 0 ? '-' : '+';
		for (n = 1; k; n++)
			out[n] = digits[--k];
	}
	out[n] = '-';
	put_digits(out + n + 1, month, 2);
	out[n + 3] = '-';
	put_digits(out + n + 4, day, 2);
	return n + 6;
}

const char *fidx_when_iso(struct fidx_time t, char buf[static FIDX_WHEN_ISO])
{
	/* Rows of one tree share few days: each thread remembers its last one. */
	static _Thread_local int64_t cached_day = INT64_MIN;
	static _Thread_local char date[24];
	static _Thread_local size_t date_len;
	/* Without day * 86400, which overflows for the earliest seconds. */
	int64_t rem = t.sec % 86400;
	int64_t day = t.sec / 86400 - (rem < 0);
	unsigned tod = (unsigned)(rem < 0 ? rem + 86400 : rem);

	if (day != cached_day) {
		date_len = civil_date(day, date);
		cached_day = day;
	}
	memcpy(buf, date, date_len);
	char *o = buf + date_len;
	o[0] = 'T';
	put_digits(o + 1, tod / 3600, 2);
	o[3] = ':';
	put_digits(o + 4, tod / 60 % 60, 2);
	o[6] = ':';
	put_digits(o + 7, tod % 60, 2);
	o[9] = '.';
	put_digits(o + 10, t.nsec % FIDX_NS_PER_S, 9);
	o[19] = 'Z';
	o[20] = '\0';
	return buf;
}

char *fidx_time_put_ns(char *out, struct fidx_time t)
{
	/* sec * 10^9 + nsec, written as two decimal parts: no 128-bit arithmetic. */
	uint64_t hi;
	uint32_t lo;
	bool negative = t.sec < 0;
	if (!negative) {
		hi = (uint64_t)t.sec;
		lo = t.nsec;
	} else if (t.nsec) { /* -(|sec| - 1) s - (10^9 - nsec) ns */
		hi = -(uint64_t)t.sec - 1;
		lo = FIDX_NS_PER_S - t.nsec;
	} else {
		hi = -(uint64_t)t.sec;
		lo = 0;
	}
	char digits[FIDX_TIME_NS_MAX];
	int k = 0;
	for (int i = 0; i < 9; i++) {
		digits[k++] = (char)('0' + lo % 10);
		lo /= 10;
	}
	for (; hi; hi /= 10)
		digits[k++] = (char)('0' + hi % 10);
	while (k > 1 && digits[k - 1] == '0')
		k--;
	if (negative)
		*out++ = '-';
	while (k)
		*out++ = digits[--k];
	return out;
}
