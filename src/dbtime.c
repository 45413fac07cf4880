/*
 * dbtime.c - the four times of a file row, read back exactly (dbtime.h).
 */
#include "dbtime.h"

#include <stdio.h>
#include <string.h>

const char *fidx_time_ext_sql(int version, const char *alias, unsigned kinds)
{
	static _Thread_local char buf[16 * 24 + 8];
	static const char *const names[FIDX_TIME_EXT_COLUMNS] = {
		"atime_sec", "atime_nsec", "mtime_sec", "mtime_nsec",
		"ctime_sec", "ctime_nsec", "btime_sec", "btime_nsec",
	};
	size_t len = 0;
	for (int i = 0; i < FIDX_TIME_EXT_COLUMNS; i++) {
		if (version < 4 || !(kinds & (1u << (i / 2))))
			len += (size_t)snprintf(buf + len, sizeof(buf) - len, ", NULL");
		else
			len += (size_t)snprintf(buf + len, sizeof(buf) - len, ", %.15s%s%s",
						alias ? alias : "", alias ? "." : "", names[i]);
	}
	return buf;
}

bool fidx_time_column(sqlite3_stmt *s, int ns_col, int ext_col, enum fidx_time_kind kind,
		      struct fidx_time *t)
{
	if (sqlite3_column_type(s, ns_col) != SQLITE_NULL) {
		*t = fidx_time_of_ns(sqlite3_column_int64(s, ns_col));
		return true;
	}
	int sec = ext_col + 2 * (int)kind;
	if (sqlite3_column_type(s, sec) == SQLITE_NULL)
		return false;
	int64_t nsec = sqlite3_column_int64(s, sec + 1);
	/* A hostile value out of range reads as the nearest one the kernel can give. */
	*t = (struct fidx_time){.sec = sqlite3_column_int64(s, sec),
				.nsec = (uint32_t)(nsec < 0 ? 0 : nsec > 999999999 ? 999999999 : nsec)};
	return true;
}
