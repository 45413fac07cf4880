/*
 * space.c - what du and stats share (space.h).
 */
#include "space.h"

#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>

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

int fidx_space_check_count(const struct fidx_query *q, size_t k, int64_t rows)
{
	const struct fidx_scan_row *s = &q->sel.scans.rows[k];
	bool counted = s->status && strcmp(s->status, "complete") == 0 &&
		       fidx_scan_has(s, FIDX_SCOL_ENTRIES);
	int64_t entries = counted ? s->entries : rows;
	if (entries == rows)
		return 0;
	char what[160];
	snprintf(what, sizeof(what), "scan %" PRId64 ": %" PRId64 " rows lie at or below its root,"
		 " its scan row counts %" PRId64 " entries", s->id, rows, entries);
	fidx_query_damaged(q, what);
	return -1;
}
