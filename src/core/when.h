/*
 * when.h - times of the query commands: WHEN arguments in (fidx find
 * --newer/--older), ISO 8601 out (find --json, stats, diff, export).
 *
 * Times are struct fidx_time (timestamp.h): any second a file system can
 * hold, so a WHEN needs no saturation to compare, and the ISO text of a time
 * after 9999 or before year 0 uses ISO 8601's expanded years (+10000-...,
 * -0001-...).
 *
 *   WHEN                       meaning
 *   ─────────────────────────  ─────────────────────────────────────────
 *   2024-01-31                 midnight, local time
 *   2024-01-31T12:00[:00]      local time ('T' or one space between)
 *   ...Z                       the same in UTC
 *   30s 15m 12h 7d 2w          that long before now
 */
#ifndef FIDX_WHEN_H
#define FIDX_WHEN_H

#include <stdint.h>
#include <time.h>

#include "timestamp.h"

/*
 * Parses WHEN (table above) into a time; an age counts back from now (and
 * saturates at the earliest time there is).  Returns 0, or -1 with errno
 * EINVAL when s is none of the forms (a date that does not exist, such as
 * 2023-02-30, included).
 */
int fidx_when_parse(const char *s, struct fidx_time now, struct fidx_time *t);

/* Length of fidx_when_iso()'s text for years 0000 to 9999. */
#define FIDX_WHEN_ISO_LEN 30
/* Room for any fidx_when_iso() text and its NUL (a sign and a 12-digit year). */
#define FIDX_WHEN_ISO 48

/*
 * Formats t as UTC with nanoseconds, "2023-11-14T22:13:20.123456789Z"
 * (FIDX_WHEN_ISO_LEN characters from year 0 to 9999; a year beyond as
 * "+10000-01-01T...", before as "-0001-..."), NUL-terminated, into buf,
 * without printf or gmtime (exports format millions).  Returns buf.
 */
const char *fidx_when_iso(struct fidx_time t, char buf[static FIDX_WHEN_ISO]);

#endif /* FIDX_WHEN_H */
