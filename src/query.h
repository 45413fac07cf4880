/*
 * query.h - the read side of the database, shared by the query commands.
 *
 * find, dupes, du, stats, match, scans and export all start the same way:
 *
 *     argv ──► fidx_query_db_arg()     is the first argument the database?
 *          ──► fidx_query_open()       dbfile probe, then SQLite read-only:
 *              │                        refuses a missing, empty, foreign or
 *              │                        newer database with one clear line
 *              ▼
 *              select scans             --scan ID[,ID...], or the newest
 *                                       complete scan of each root (every
 *                                       scan for `fidx scans`)
 *
 * The selection is a TEMP table, `selected_scan(id, root)`, so a command's
 * SQL says `WHERE scan_id IN (SELECT id FROM selected_scan)`; its ids are
 * also in struct fidx_query.  A read-only connection sees every committed
 * row and never blocks a scan that is writing (WAL); the scan still running
 * is not complete, so it is not selected unless named with --scan.
 *
 * Nothing is left behind: a database no connection is open on (no -wal or
 * -shm beside it) is read as an immutable file under fidx's reader lock
 * (dbfile.h), so the folder is left as it was: no file made, no modification
 * or change time moved; so is a database in a folder the user cannot write
 * (read-only evidence media) when no WAL content is pending beside it.  A query that read the
 * main file while a writer that is not fidx changed it fails when it closes.
 *
 * Nothing of the database runs: every connection is made with triggers and
 * views off, trusted_schema off and SQLite's defensive mode on
 * (fidx_sqlite_harden()), and a schema holding objects fidx did not create is
 * read with one warning naming them (fidx_sqlite_foreign()).
 */
#ifndef FIDX_QUERY_H
#define FIDX_QUERY_H

#include <sqlite3.h>
#include <stddef.h>
#include <stdint.h>

#include "cli.h"
#include "rowcheck.h"

/* An open database and the scans a command reads. */
struct fidx_query {
	sqlite3 *db;       /* read-only connection */
	char *path;        /* the database path, for messages */
	int version;       /* its schema version (1..FIDX_SCHEMA_VERSION) */
	int64_t *scans;    /* the selected scan ids, ascending */
	size_t nscans;     /* how many (at least 1, unless args.every_scan) */
	char **roots;      /* the root of each selected scan, as scans */
	struct fidx_query_hold *hold; /* the main file held still (immutable read, query.c);
					 NULL when read through SQLite's locks */
};

/*
 * Decides whether args[0] of a command whose database is optional names the
 * database: true when it is a SQLite file (ours or not: a foreign one is then
 * refused by name rather than taken for a pattern or a path).  Sets a->db and
 * returns 1 when it does (unless --db was given, which wins: then 0).
 */
int fidx_query_db_arg(const char *arg, struct fidx_query_args *a);

/*
 * Opens a->db (or ./fidx.db) read-only and selects a->scan.  Unless a->raw,
 * checks the rows of the selected scans (rowcheck.h).  On failure prints one
 * line (missing database, not a fidx database, newer version, no such scan,
 * no complete scan, a damaged scan row) and returns NULL.
 */
struct fidx_query *fidx_query_open(const struct fidx_query_args *a);

/*
 * Prints "cannot read database 'x': <SQLite's message>" for the last failed
 * call on q->db (or, when a writer that is not fidx changed the file under an
 * immutable read, that it did).  Returns 2, the exit status of a fatal error.
 */
int fidx_query_fail(const struct fidx_query *q);

/*
 * Makes the row checks (rowcheck.h) of the columns of statement s (those
 * with a bit in columns, FIDX_ROWCHECK_ALL for all), which reads rows of
 * q's selected scans: their roots are told.  Returns NULL after printing
 * "out of memory".
 */
struct fidx_rowcheck *fidx_query_rowcheck(const struct fidx_query *q, sqlite3_stmt *s,
					  uint64_t columns);

/*
 * Prints "database 'x' is damaged: <what>" (what: fidx_rowcheck()'s answer).
 * Returns 2, the exit status of a fatal error.
 */
int fidx_query_damaged(const struct fidx_query *q, const char *what);

/*
 * Checks the row of scan id (0: of every selected scan; what fidx_query_open()
 * does unless args.raw), as rowcheck.h says.  Returns 0, or -1 after
 * printing what is damaged (or SQLite's failure).
 */
int fidx_query_check_scan(const struct fidx_query *q, int64_t id);

/*
 * Prepares sql on q's connection.  Returns the statement, or NULL after
 * printing the failure as fidx_query_fail() does.
 */
sqlite3_stmt *fidx_query_prepare(const struct fidx_query *q, const char *sql);

/*
 * Closes the connection and frees q (NULL is allowed).  Returns 0, or -1
 * after printing that the database changed while it was read (an immutable
 * read beside a writer that is not fidx, which knows nothing of the reader
 * lock): what the command printed may not be true, and its exit status must
 * say it failed.
 */
int fidx_query_close(struct fidx_query *q);

#endif /* FIDX_QUERY_H */
