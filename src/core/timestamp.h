/*
 * timestamp.h - a file time as the kernel gives it: signed 64-bit seconds
 * since the epoch and nanoseconds, over statx's whole range.
 *
 * Integer nanoseconds in an int64 reach only from 1677-09-21T00:12:43Z to
 * 2262-04-11T23:47:16Z, and file systems hold times outside that (ext4 up to
 * 2446, XFS's bigtime to 2486, tmpfs and btrfs any 64-bit second), so fidx
 * carries times as (sec, nsec) pairs and turns them into nanoseconds only
 * where they fit: the database's `*_ns` columns (dbtime.h says how a time
 * that does not fit is stored), and comparisons with a WHEN.
 *
 * The pair is normalised: sec is rounded down, nsec is 0..999,999,999, so
 * -0.5 s is {-1, 500000000}, and two equal times have equal pairs.
 */
#ifndef FIDX_TIMESTAMP_H
#define FIDX_TIMESTAMP_H

#include <stdbool.h>
#include <stdint.h>

#define FIDX_NS_PER_S 1000000000

/* A time: seconds since 1970-01-01T00:00:00Z rounded down, and nanoseconds. */
struct fidx_time {
	int64_t sec;   /* whole seconds, rounded down (before 1970: negative) */
	uint32_t nsec; /* 0 .. 999,999,999 */
};

/* Returns the time ns nanoseconds after the epoch (any int64). */
static inline struct fidx_time fidx_time_of_ns(int64_t ns)
{
	int64_t rem = ns % FIDX_NS_PER_S;
	int64_t sec = ns / FIDX_NS_PER_S;
	if (rem < 0) {
		rem += FIDX_NS_PER_S;
		sec--;
	}
	return (struct fidx_time){.sec = sec, .nsec = (uint32_t)rem};
}

/*
 * Sets *ns to t in nanoseconds and returns true when that fits an int64
 * (1677-09-21T00:12:43.145224192Z .. 2262-04-11T23:47:16.854775807Z);
 * returns false, *ns untouched, otherwise.
 */
static inline bool fidx_time_to_ns(struct fidx_time t, int64_t *ns)
{
	/* INT64_MIN = -9223372037 s + 145224192 ns; INT64_MAX = 9223372036 s + 854775807 ns. */
	if (t.sec < -9223372037LL || t.sec > 9223372036LL ||
	    (t.sec == -9223372037LL && t.nsec < 145224192) ||
	    (t.sec == 9223372036LL && t.nsec > 854775807))
		return false;
	/* Computed without a signed overflow at either end. */
	*ns = t.sec >= 0 ? t.sec * FIDX_NS_PER_S + (int64_t)t.nsec
			 : (t.sec + 1) * FIDX_NS_PER_S - (FIDX_NS_PER_S - (int64_t)t.nsec);
	return true;
}

/* Returns <0, 0 or >0 as a is before, equal to or after b. */
static inline int fidx_time_cmp(struct fidx_time a, struct fidx_time b)
{
	if (a.sec != b.sec)
		return a.sec < b.sec ? -1 : 1;
	return a.nsec < b.nsec ? -1 : a.nsec > b.nsec;
}

/* Returns whether a and b are the same time. */
static inline bool fidx_time_eq(struct fidx_time a, struct fidx_time b)
{
	return a.sec == b.sec && a.nsec == b.nsec;
}

/* Longest text of fidx_time_put_ns(): a sign, 19 digits of seconds, 9 more. */
#define FIDX_TIME_NS_MAX 30

/*
 * Writes t as the exact decimal number of nanoseconds since the epoch (which
 * may exceed 64 bits: "13569465600000000000" for 2400-01-01), without a NUL,
 * at out (room for FIDX_TIME_NS_MAX bytes).  Returns the end.
 */
char *fidx_time_put_ns(char *out, struct fidx_time t);

#endif /* FIDX_TIMESTAMP_H */
