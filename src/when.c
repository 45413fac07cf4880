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

const char *fidx_when_iso(int64_t ns, char buf[static FIDX_WHEN_ISO])
{
	time_t t = fidx_when_seconds(ns);
	long frac = (long)(ns % NS);
	if (frac < 0)
		frac += NS;
	struct tm tm;
	char day[32];
	if (!gmtime_r(&t, &tm) || !strftime(day, sizeof(day), "%Y-%m-%dT%H:%M:%S", &tm))
		snprintf(buf, FIDX_WHEN_ISO, "%" PRId64 "ns", ns);
	else
		snprintf(buf, FIDX_WHEN_ISO, "%s.%09ldZ", day, frac);
	return buf;
}
