/*
 * space.c - what the commands that read whole scans share (space.h).
 */
#include "space.h"

#include <inttypes.h>
#include <limits.h>
#include <stdio.h>

#include "diag.h"
#include "output.h"

int fidx_space_check_scans(const struct fidx_query *q)
{
	/* options is the JSON object fidx scan wrote; "stat": false means --no-stat. */
	sqlite3_stmt *s = fidx_query_prepare(q,
		"SELECT id FROM scan WHERE id IN (SELECT id FROM selected_scan)"
		" AND json_valid(options) AND json_extract(options, '$.stat') = 0"
		" ORDER BY id LIMIT 1");
	if (!s)
		return -1;
	int rc = sqlite3_step(s), ret = -1;
	if (rc == SQLITE_ROW)
		fidx_error("scan %lld holds no sizes: it was made with --no-stat",
			   sqlite3_column_int64(s, 0));
	else if (rc != SQLITE_DONE)
		fidx_query_fail(q);
	else
		ret = 0;
	sqlite3_finalize(s);
	return ret;
}

int fidx_space_read_table(const struct fidx_query *q, int64_t scan)
{
	/*
	 * Measured on a database of one scan of 1.1 million rows: the table in
	 * rowid order 0.55 s, the index range (rows fetched in path order) 1.13 s;
	 * so the table wins while the scans read hold at least half of it.
	 * max(id) is the row count, near enough (rows are only ever appended).
	 * A scan still running has no count (entries is NULL): the index then.
	 */
	sqlite3_stmt *s = fidx_query_prepare(q,
		"SELECT count(*) = count(entries)"
		" AND 2 * sum(entries) >= (SELECT max(id) FROM file) FROM scan"
		" WHERE id IN (SELECT id FROM selected_scan) AND (?1 = 0 OR id = ?1)");
	if (!s)
		return -1;
	sqlite3_bind_int64(s, 1, scan);
	int rc = sqlite3_step(s), ret = -1;
	if (rc == SQLITE_ROW)
		ret = sqlite3_column_int(s, 0) != 0;
	else if (rc == SQLITE_DONE)
		ret = 0;
	else
		fidx_query_fail(q);
	sqlite3_finalize(s);
	return ret;
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

const char *fidx_space_size(uint64_t bytes, bool exact, char buf[static 24])
{
	if (exact)
		snprintf(buf, 24, "%" PRIu64, bytes);
	else
		fidx_human_size(bytes, buf);
	return buf;
}
