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
 *              select scans             --scan ID[,ID...], or the default:
 *                                       the newest complete scan of each
 *                                       root, one row per path (every scan
 *                                       for `fidx scans`)
 *
 * The selection is a TEMP table, `selected_scan(id, root)`, so a command's
 * SQL says `WHERE scan_id IN (SELECT id FROM selected_scan)`; its ids are
 * also in struct fidx_query.  The default shows each path once: where the
 * root of one selected scan lies in the tree of another (/usr/share/doc in
 * /usr/share), the paths of that tree are shown from the newer scan, and the
 * older one's are hidden (TEMP table `hidden_tree(scan_id, root)`, a
 * command's SQL adds fidx_query_shown(), C code asks
 * fidx_query_path_shown()); a scan wholly in a newer one's tree is not
 * selected.  A command that needs digests asks for them (args.digests,
 * fidx_query_select_digests()): the newest scan of a root that computed one
 * of them is taken, and a root without one is covered by the tree of a scan
 * that has them where it can be (docs/SCHEMA.md, "The scans shown").
 *
 * A read-only connection sees every committed row and never blocks a scan
 * that is writing (WAL); the scan still running is not complete, so it is
 * not selected unless named with --scan.
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
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cli.h"
#include "rowcheck.h"

/* A tree whose paths a selected scan does not show: a newer one shows them. */
struct fidx_query_hidden {
	int64_t scan_id;   /* the selected scan */
	char *root;        /* the root of the newer selected scan, in scan_id's tree */
};

/* An open database and the scans a command reads. */
struct fidx_query {
	sqlite3 *db;       /* read-only connection */
	char *path;        /* the database path, for messages */
	const char *origin; /* where it came from, after the path in messages
			       (fidx_cli_db_origin(): "" or " (from FIDX_DB)") */
	int version;       /* its schema version (1..FIDX_SCHEMA_VERSION) */
	int64_t *scans;    /* the selected scan ids, ascending */
	size_t nscans;     /* how many (at least 1, unless args.every_scan) */
	struct fidx_query_hidden *hidden; /* the trees hidden (the default selection only) */
	size_t nhidden;    /* how many */
	bool by_default;   /* the scans are the default selection (not --scan, not every) */
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
 * Opens fidx_cli_db(a->db) read-only and selects a->scan.  Unless a->raw,
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
 * Selects again, for a command that learns only after opening which
 * digests it needs (fidx match, from its lists): the default selection made
 * for digests (a mask; a scan qualifies with one of them).  Does nothing
 * when a->scan names the scans.  Returns 0, or -1 after printing why.
 */
int fidx_query_select_digests(struct fidx_query *q, const struct fidx_query_args *a,
			      unsigned digests);

/*
 * Returns the SQL condition that the row of table alias (with columns
 * scan_id and path) is shown by the selection: "1" when nothing is hidden,
 * else a test against hidden_tree.  The text is static (per thread), valid
 * until the next call.
 */
const char *fidx_query_shown(const struct fidx_query *q, const char *alias);

/* Returns whether path (of a row of scan) is shown by the selection. */
bool fidx_query_path_shown(const struct fidx_query *q, int64_t scan, const char *path);

/*
 * The rows the selected scans hold, all of them or (files) their regular
 * files, from the scan rows (counted in `file` for a scan still running),
 * for a progress line.  0 when they cannot be read.
 */
uint64_t fidx_query_rows(const struct fidx_query *q, bool files);

/*
 * Closes the connection and frees q (NULL is allowed).  Returns 0, or -1
 * after printing that the database changed while it was read (an immutable
 * read beside a writer that is not fidx, which knows nothing of the reader
 * lock): what the command printed may not be true, and its exit status must
 * say it failed.
 */
int fidx_query_close(struct fidx_query *q);

#endif /* FIDX_QUERY_H */
