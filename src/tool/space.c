/*
 * space.c - what du and stats share (space.h).
 */
#include "space.h"

#include <inttypes.h>
#include <limits.h>
#include <stdio.h>

#include "diag.h"

int fidx_space_check_scans(const struct fidx_query *q)
{
	/* options is the JSON object fidx scan wrote; "stat": false means --no-stat. */
	for (size_t i = 0; i < q->sel.scans.n; i++)
		if (fidx_scan_row_no_stat(&q->sel.scans.rows[i])) {
			fidx_error("scan %" PRId64 " holds no sizes: it was made with --no-stat",
				   q->sel.scans.rows[i].id);
			return -1;
		}
	return 0;
}

int fidx_space_parse_count(const char *opt, const char *arg, unsigned *count)
{
	unsigned long long v = 0;
	const char *p = arg;
	for (; *p >= '0' && *p <= '9'; p++)
		v = v > INT_MAX ? v : v * 10 + (unsigned)(*p - '0');
	if (p == arg || *p) {
		fidx_error("invalid %s '%s': expected a whole number, 0 or more", opt,
			   fidx_quote(arg));
		return -1;
	}
	*count = v > INT_MAX ? INT_MAX : (unsigned)v;
	return 0;
}
