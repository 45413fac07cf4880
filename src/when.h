/*
 * when.h - times of the query commands: WHEN arguments in (fidx find
 * --newer/--older), ISO 8601 out (find --json, stats).
 *
 * The database keeps times as int64 nanoseconds since the epoch (UTC), which
 * reach from 1677-09-21 to 2262-04-11.  A WHEN outside that range is not an
 * error: it saturates to INT64_MIN or INT64_MAX, which no recorded time
 * passes, so `--older 9999-01-01` holds for every entry and `--newer
 * 9999-01-01` for none, as the words say.
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

/*
 * Parses WHEN (table above) into nanoseconds since the epoch; an age counts
 * back from now_ns.  Returns 0, or -1 with errno EINVAL when s is none of the
 * forms (a date that does not exist, such as 2023-02-30, included).
 */
int fidx_when_parse(const char *s, int64_t now_ns, int64_t *ns);

/* Returns the whole seconds of ns (rounded down: -1 ns is second -1). */
static inline time_t fidx_when_seconds(int64_t ns)
{
	return (time_t)(ns / 1000000000 - (ns % 1000000000 < 0));
}

/* Length of fidx_when_iso()'s text, and room for it and its NUL. */
#define FIDX_WHEN_ISO_LEN 30
#define FIDX_WHEN_ISO (FIDX_WHEN_ISO_LEN + 1)

/*
 * Formats ns as UTC with nanoseconds, "2023-11-14T22:13:20.123456789Z"
 * (always FIDX_WHEN_ISO_LEN characters: int64 nanoseconds reach 1677..2262),
 * into buf, without printf or gmtime (exports format millions).  Returns buf.
 */
const char *fidx_when_iso(int64_t ns, char buf[static FIDX_WHEN_ISO]);

#endif /* FIDX_WHEN_H */
