/*
 * dbtime.h - how a file row's four times are stored.
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
 * T_sec/T_nsec columns come last in the table.  The writer takes the form
 * from the seal's fields (fidx_seal_file_fields()), the reader (read.c)
 * reads both; the SQL of the views and of a resumed scan's span of times
 * reads them with the macros below.
 */
#ifndef FIDX_DBTIME_H
#define FIDX_DBTIME_H

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
