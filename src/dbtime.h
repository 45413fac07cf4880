/*
 * dbtime.h - how a file row's four times are stored, and read back exactly.
 *
 * Since schema version 4 (docs/SCHEMA.md, "Times"), each time T of a `file`
 * row (atime, mtime, ctime, btime) is kept in one of two forms:
 *
 *     T_ns                     integer nanoseconds since the epoch, when the
 *                              time fits an int64 (1677-09-21 .. 2262-04-11):
 *                              every time of every ordinary tree
 *     T_sec, T_nsec            otherwise (T_ns is then NULL): signed seconds,
 *                              rounded down, and nanoseconds 0..999,999,999,
 *                              as statx returns them
 *
 * so that a database of ordinary times is as small as before and old queries
 * on T_ns keep their meaning, while no time is ever wrapped.  The eight
 * T_sec/T_nsec columns come last in the table; a reader appends them to its
 * SELECT with fidx_time_ext_sql() (NULLs for a database before version 4,
 * which cannot hold such times) and reads a time with fidx_time_column().
 */
#ifndef FIDX_DBTIME_H
#define FIDX_DBTIME_H

#include <sqlite3.h>
#include <stdbool.h>

#include "timestamp.h"

/* The four times of a row, in the order of their columns. */
enum fidx_time_kind { FIDX_ATIME, FIDX_MTIME, FIDX_CTIME, FIDX_BTIME, FIDX_NTIMES };

/* Columns fidx_time_ext_sql() adds: T_sec and T_nsec of each time, in kind order. */
#define FIDX_TIME_EXT_COLUMNS (2 * FIDX_NTIMES)

/* The column names, for the store's INSERT and the seal (no leading comma). */
#define FIDX_TIME_EXT_NAMES \
	"atime_sec, atime_nsec, mtime_sec, mtime_nsec, ctime_sec, ctime_nsec," \
	" btime_sec, btime_nsec"

/* fidx_time_ext_sql()'s kinds: every time, or (1u << kind) of some. */
#define FIDX_TIME_ALL ((1u << FIDX_NTIMES) - 1)

/*
 * Returns ", atime_sec, atime_nsec, ... btime_nsec" for a database of schema
 * version >= 4, else the same number of ", NULL": the tail of a SELECT of
 * `file` rows.  Only the times in kinds (a bit 1u << kind each) are read, the
 * others are NULL in their places (a reader of one time spares the decoding
 * and checks of six columns).  When alias is not NULL, the columns are
 * qualified with it ("f.atime_sec").  The text is static (per alias of at
 * most 15 bytes).
 */
const char *fidx_time_ext_sql(int version, const char *alias, unsigned kinds);

/*
 * Reads time kind of the current row of s, whose T_ns column is ns_col and
 * whose eight extension columns start at ext_col (fidx_time_ext_sql()),
 * into *t.  Returns false when the row has no such time (all NULL).
 */
bool fidx_time_column(sqlite3_stmt *s, int ns_col, int ext_col, enum fidx_time_kind kind,
		      struct fidx_time *t);

/*
 * SQL of the seconds (rounded down) of time T of a row, whichever form holds
 * it, for a database of version >= 4: "coalesce(T_sec, <T_ns floored>)".
 */
#define FIDX_TIME_SEC_SQL(t) \
	"coalesce(" t "_sec, " t "_ns / 1000000000 - (" t "_ns % 1000000000 < 0))"

/* SQL of the nanoseconds (0..999,999,999) of time T, as FIDX_TIME_SEC_SQL. */
#define FIDX_TIME_NSEC_SQL(t) \
	"coalesce(" t "_nsec, ((" t "_ns % 1000000000) + 1000000000) % 1000000000)"

#endif /* FIDX_DBTIME_H */
