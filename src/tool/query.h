/*
 * query.h - a database opened for a query command, and the scans it reads.
 *
 * find, dupes, du, stats, match, scans, export, diff, check and verify all
 * start the same way:
 *
 *     argv ──► fidx_query_db_arg()     is the first argument the database?
 *          ──► fidx_query_open()       the store opened READ (store.h: no
 *              │                        trace left, nothing of it run):
 *              │                        a missing, empty, foreign or newer
 *              │                        database refused with one clear line
 *              ▼
 *              select scans            --scan ID[,ID...], or the default:
 *                                      the newest complete scan of each
 *                                      root, each path once (select.h);
 *                                      every scan for `fidx scans`
 *              ▼
 *              their scan rows checked (a damaged one named)
 *
 * then read rows through the store (fidx_query_rows() makes the query of
 * the selected scans) and print them.  Every failure is printed here or by
 * fidx_query_fail(), as one line.
 */
#ifndef FIDX_QUERY_H
#define FIDX_QUERY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "error.h"
#include "options.h"
#include "select.h"
#include "store.h"

/* An open database and the scans a command reads. */
struct fidx_query {
	struct fidx_store *st;     /* opened READ */
	const char *path;          /* the database's name, for messages */
	const char *origin;        /* where it came from, after the path in messages
				      (fidx_db_origin(): "" or " (from FIDX_DB)") */
	struct fidx_scan_list all; /* every scan of the database */
	struct fidx_selection sel; /* the selected scans */
	int64_t *ids;              /* their ids, ascending ... */
	const char **roots;        /* ... and roots, as sel.scans */
	size_t nscans;             /* how many (at least 1, unless every_scan) */
	bool many_hosts;           /* the selected scans were made on more than one host */
};

/*
 * The host of selected scan scan when the selection spans many hosts (a
 * path is then shown as "host:path"), else NULL.
 */
const char *fidx_query_host(const struct fidx_query *q, int64_t scan);

/*
 * Decides whether arg, the first argument of a command whose database is
 * optional, names the database: true when it is a SQLite file (ours or not:
 * a foreign one is then refused by name rather than taken for a pattern or
 * a path).  Sets a->db and returns 1 when it does (unless --db was given,
 * which wins: then 0).
 */
int fidx_query_db_arg(const char *arg, struct fidx_query_args *a);

/*
 * Opens fidx_db_name(a->db) for reading and selects a->scan (or, without
 * it, the default selection, or every scan with a->every_scan).  Unless
 * a->raw, checks the rows of the selected scans.  On failure prints one line
 * and returns NULL, with *err (when not NULL) holding what failed (its code
 * tells a newer schema, EPROTONOSUPPORT, from the rest).
 */
struct fidx_query *fidx_query_open(const struct fidx_query_args *a, struct fidx_error *err);

/*
 * Selects again, for a command that learns only after opening which
 * digests it needs (fidx match, from its lists): the default selection made
 * for digests (a mask; a scan qualifies with one of them).  Does nothing
 * when a->scan names the scans.  Returns 0, or -1 after printing why.
 */
int fidx_query_select_digests(struct fidx_query *q, const struct fidx_query_args *a,
			      unsigned digests);

/*
 * Fills *rq with the reading of the selected scans' rows (their ids, roots
 * and hidden trees) of columns, in order; the filters are left for the
 * caller.  Valid while q is.
 */
void fidx_query_rows(const struct fidx_query *q, uint64_t columns, enum fidx_rows_order order,
		     struct fidx_rows_query *rq);

/*
 * Prints err, what a read of q failed with, as one line (nothing when it
 * was said already: a database changed under the read is told once).
 * Returns 2, the exit status of a fatal error.
 */
int fidx_query_fail(const struct fidx_query *q, const struct fidx_error *err);

/*
 * Prints "database 'x' is damaged: <what>".  Returns 2, the exit status of
 * a fatal error.
 */
int fidx_query_damaged(const struct fidx_query *q, const char *what);

/* The rows the selected scans hold (files: their regular files), for a progress line. */
uint64_t fidx_query_count(const struct fidx_query *q, bool files);

/*
 * Closes the store and frees q (NULL is allowed).  Returns 0, or -1 after
 * printing that the database changed while it was read (by a writer that
 * is not fidx): what the command printed may not be true, and its exit
 * status must say it failed.
 */
int fidx_query_close(struct fidx_query *q);

/*
 * Takes the arguments argv[first..argc) of a command that reads [DB] [PATH]
 * (du, browse, report): two are DB and PATH (DB unless --db named it), one
 * is DB when it is a SQLite file (fidx_query_db_arg()) and PATH otherwise.
 * Sets *path to PATH made absolute (fidx_query_abspath(), malloc'd) or NULL
 * when none.  Returns 0, or -1 after printing why (an argument too many, a
 * path that cannot be made absolute).
 */
int fidx_query_db_path_args(int argc, char **argv, int first, const char *command,
			    struct fidx_query_args *a, char **path);

/*
 * Returns a PATH argument as an absolute path without '.', '..' (resolved by
 * name, not on the disk: the tree may be gone), empty components or a
 * trailing '/'; a relative one is taken from the working directory.  NULL
 * with errno set on failure.  (du, report and browse: a path as scans record it.)
 */
char *fidx_query_abspath(const char *arg);

#endif /* FIDX_QUERY_H */
