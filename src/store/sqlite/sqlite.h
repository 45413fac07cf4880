/*
 * sqlite.h - what the files of the SQLite backend share: the store, its
 * hardening, and errors worded for the user.  Nothing outside
 * src/store/sqlite/ includes it (or <sqlite3.h>).
 *
 *     sqlite.c       the ops table; opening (READ, WRITE, SCRATCH), closing
 *     write.c        scans begun, resumed and ended; rows added in batches
 *     read.c         scan rows, row iterators, rows by id, counts
 *     paths.c        find's paths: the path index (pathindex.c) or the table
 *     seal.c         row hashes kept (file_seal), seals written and verified
 *     rowcheck.c     whether a value read is one fidx could have written
 *     schema.c       the schema's SQL; schema-objects.c, what SQLite makes of it
 *     dbfile.c       a database as files: header probe, reader lock, scratch files
 *     dbtime.c       a time's two forms in the table
 *
 * A database travels between examiners, and anyone who had it could have
 * added to its schema: a trigger that rewrites sealed rows when a scan
 * inserts, a view in place of a table, a default or an index that calls a
 * function.  fidx runs none of it:
 *
 *   - every connection is hardened (sqlite_harden()): triggers off
 *     (SQLITE_DBCONFIG_ENABLE_TRIGGER), trusted_schema off (no function with
 *     side effects, no virtual table, from the schema), SQLite's defensive
 *     mode on (no writable_schema, no writes to shadow tables or pages), and
 *     on a read-only connection views off too (fidx reads only tables);
 *   - the schema is compared with the one fidx creates for the database's
 *     version (sqlite_foreign()): a WRITE store refuses a database holding
 *     anything else, a READ store warns once and reads.
 */
#ifndef FIDX_STORE_SQLITE_H
#define FIDX_STORE_SQLITE_H

#include <sqlite3.h>
#include <stdbool.h>
#include <stddef.h>

#include "backend.h"
#include "dbfile.h"

/* A scan this store is writing (begun or resumed, not yet ended). */
struct sqlite_scan {
	int64_t id;            /* scan.id */
	int64_t ran_before_ns; /* run_ns of its earlier runs (a resumed scan) */
	int64_t started_mono;  /* this run's start, fidx_monotonic_ns() */
	int64_t tmin, tmax;    /* the span of seconds of the times `data` shows
				  (mtime, btime, the start): local_time covers it */
};

/* A SQLite store. */
struct sqlite_store {
	struct fidx_store base;
	sqlite3 *db;           /* the connection; NULL until opened */
	char *path;            /* the database's path as given, for messages */
	char *origin;          /* said after the path in messages ("" or " (from FIDX_DB)") */
	char *files[5];        /* path, -wal, -shm, -journal, NULL */
	/* READ: an immutable read of the main file, under fidx's reader lock (dbfile.h). */
	struct fidx_dbfile_hold hold; /* hold.fd >= 0 while it is held */
	bool told;             /* "changed while it was read" is said (once) */
	bool in_read;          /* fidx_store_snapshot(): a read transaction is open */
	sqlite3_stmt *by_id;   /* the statement of fidx_store_row(), NULL until needed */
	uint64_t by_id_columns; /* ... and the columns it reads */
	struct sqlite_rows *by_id_rows; /* its reader state */
	/* WRITE, SCRATCH. */
	sqlite3_stmt *insert;  /* the INSERT of a file row, every column but id, prepared once */
	sqlite3_stmt *insert_short; /* ... of the columns of schema 1-3 alone (the rest NULL) */
	sqlite3_stmt *run;     /* the UPDATE of scan.run_ns, prepared when first used */
	sqlite3_stmt *seal_many, *seal_one; /* INSERTs of file_seal rows (seal.c) */
	sqlite3_stmt *quote;   /* SQLite's quote() of a value fidx never writes (seal.c) */
	struct sqlite_scan *scans; /* the scans being written */
	size_t nscans, capscans;   /* how many, and room */
	size_t last_scan;      /* index of the scan of the last row added (a cache) */
	unsigned batch_rows;   /* rows per transaction */
	int cache_kib;         /* the page cache's size (PRAGMA cache_size), KiB */
	unsigned pending;      /* rows added in the open transaction */
	bool in_txn;           /* a batch transaction is open */
	bool scratch;          /* SCRATCH: not synced, no secondary index, no seal */
	bool accepted;         /* the schema is fidx's: closing may checkpoint */
	bool was_at_rest;      /* no -wal, -shm or -journal before it was opened */
	bool made;             /* the file did not exist before this store opened it */
	bool begun;            /* a scan was begun or resumed in it */
	int lock_fd;           /* the database file, to test the reader lock (dbfile.h); -1: none */
	struct fidx_sealer *sealer; /* the seals of the scans written (seal.h); NULL when scratch */
	int ballast;           /* room kept for the end of a scan on a full disk, or -1 */
};

/* The store st is. */
static inline struct sqlite_store *sqlite_of(struct fidx_store *st)
{
	return (struct sqlite_store *)st;
}

/*
 * Hardens a new connection as above; read_only also turns views off.
 * Returns 0, or -1 when SQLite refused a setting (then sqlite3_errmsg()).
 */
int sqlite_harden(sqlite3 *db, bool read_only);

/*
 * SQLite's last error on db as a user should read it: the system's reason
 * (strerror) when a file could not be opened, read or written, the full
 * disk's when SQLite says the disk is full, else sqlite3_errmsg(); "out of
 * memory" for a NULL db (sqlite3_open_v2() could not allocate one).
 */
const char *sqlite_why(sqlite3 *db);

/*
 * Fills err with "cannot <verb> database 'path': <why>" for SQLite's last
 * failure on st: when a file could not be opened or written, the OS's
 * reason for the file at fault (fidx_dbfile_why()); a full disk as the OS
 * says it; otherwise SQLite's message.  Under an immutable read that a
 * writer other than fidx disturbed, that instead.  Returns -1.
 */
int sqlite_fail(struct sqlite_store *st, struct fidx_error *err, const char *verb);

/*
 * Whether the main file st reads as immutable changed since it was taken (a
 * writer that is not fidx): fills err with that, once, and returns true.
 */
bool sqlite_moved(struct sqlite_store *st, struct fidx_error *err);

/*
 * Compares the schema of db's main database with the one fidx creates for
 * schema version (1..FIDX_SCHEMA_VERSION): what fidx_schema_sql, the steps
 * up to that version and the index made after a bulk load make, as SQLite
 * made it at build time (schema.h: fidx_schema_versions).  Tables are
 * compared by their columns (name, type, NOT NULL, default, primary key,
 * hidden) when their SQL text differs, views and indexes by their SQL text;
 * any trigger, virtual table or unknown name is foreign; objects fidx may not
 * have made yet (an index before its first scan ended) may be missing, and
 * SQLite's statistics tables (ANALYZE) are SQLite's.  Writes a list of what
 * differs ("trigger 'evil', table 'file' altered") into list, cut with "..."
 * to size bytes.  Returns how many objects differ (0: the schema is fidx's),
 * or -1 with the reason in list.
 */
int sqlite_foreign(sqlite3 *db, int version, char *list, size_t size);

/* Whether table (of schema "main") has column (a column later versions added). */
bool sqlite_has_column(sqlite3 *db, const char *table, const char *column);

/* Runs SQL without results.  Returns 0, or -1 with err set ("cannot <verb> ..."). */
int sqlite_exec(struct sqlite_store *st, const char *sql, const char *verb,
		struct fidx_error *err);

/* Rolls back the open transaction, if SQLite has not already, and makes the sealer forget. */
void sqlite_rollback(struct sqlite_store *st);

/* ---- write.c ---- */

/* Prepares what writing needs (the INSERT, the sealer).  Returns 0, or -1 with err set. */
int sqlite_write_setup(struct sqlite_store *st, struct fidx_error *err);

/* Frees what writing holds (rolls back an open batch). */
void sqlite_write_close(struct sqlite_store *st);

int64_t sqlite_begin_scan(struct fidx_store *st, const struct fidx_scan_info *info,
			  struct fidx_error *err);
int sqlite_claim_scan(struct fidx_store *st, int64_t scan_id, int64_t seen_pid,
		      struct fidx_error *err);
int sqlite_resume_scan(struct fidx_store *st, int64_t scan_id, struct fidx_scan_totals *so_far,
		       struct fidx_error *err);
int sqlite_add(struct fidx_store *st, const struct fidx_record *rec, struct fidx_error *err);
unsigned sqlite_pending(const struct fidx_store *st);
int sqlite_flush(struct fidx_store *st, struct fidx_error *err);
int sqlite_end_scan(struct fidx_store *st, int64_t scan_id, const struct fidx_scan_totals *totals,
		    uint8_t *seal, struct fidx_error *err);
int sqlite_seal(struct fidx_store *st, int64_t scan_id, uint8_t seal[FIDX_SEAL_LEN],
		struct fidx_error *err);
int sqlite_build_indexes(struct fidx_store *st, struct fidx_error *err);
int sqlite_add_digests(struct fidx_store *st, const struct fidx_file_digest *d, size_t n,
		       struct fidx_error *err);

/* ---- read.c ---- */

int sqlite_scans(struct fidx_store *st, const struct fidx_scan_filter *f,
		 struct fidx_scan_list *out, struct fidx_error *err);
struct fidx_rows *sqlite_rows(struct fidx_store *st, const struct fidx_rows_query *q,
			      struct fidx_error *err);
int sqlite_rows_next(struct fidx_rows *it, const struct fidx_row **row, struct fidx_error *err);
void sqlite_rows_close(struct fidx_rows *it);
int sqlite_row(struct fidx_store *st, const struct fidx_rows_query *q, int64_t id,
	       const struct fidx_row **row, struct fidx_error *err);
int sqlite_snapshot(struct fidx_store *st, struct fidx_error *err);

/*
 * Reads the row of id, of whatever scan (q's columns and checks), into *row.
 * With expect (its scan id and path), the row's raw scan id and path are
 * compared with it first, before any check can fail on a row that is not
 * the one expected.  Returns 1, 0 when there is none, 2 when the row is
 * not expect's, or -1 with err set.
 */
int sqlite_row_any(struct sqlite_store *st, const struct fidx_rows_query *q, int64_t id,
		   const struct fidx_row *expect, const struct fidx_row **row,
		   struct fidx_error *err);
uint64_t sqlite_count(struct fidx_store *st, const int64_t *scans, size_t n, bool files);

/* The reader of one statement's rows: how its columns are read and checked. */
struct sqlite_rows;

/*
 * Makes the reader of the rows of a SELECT of columns (FIDX_COLUMN() bits)
 * made by sqlite_rows_select() on a database of schema version; rows of
 * scans[i] must lie below roots[i] (NULL: not checked).  Returns it, or NULL
 * with err set.
 */
struct sqlite_rows *sqlite_rows_reader(struct sqlite_store *st, uint64_t columns,
				       const int64_t *scans, const char *const *roots,
				       size_t nscans, struct fidx_error *err);

/*
 * Makes the reader read rows of scans[0..nscans), which must lie below
 * roots[i] (NULL: not checked); the arrays must outlive the reads.  Returns
 * 0, or -1 with err set.
 */
int sqlite_rows_scope(struct sqlite_rows *r, const int64_t *scans, const char *const *roots,
		      size_t nscans, struct fidx_error *err);

/*
 * Writes the select list of the reader's columns ("id, scan_id, path, ...",
 * with the table alias f) into buf.  Returns buf.
 */
const char *sqlite_rows_select(const struct sqlite_rows *r, char *buf, size_t size);

/* Whether the reader reads file_digest's columns (the SELECT joins it as d). */
bool sqlite_rows_later(const struct sqlite_rows *r);

/*
 * Checks the row s is on and reads it into *row.  Returns 1, 0 when it is
 * damaged (err set, EBADMSG, naming the scan, the row and the column).
 */
int sqlite_rows_read(struct sqlite_rows *r, sqlite3_stmt *s, const struct fidx_row **row,
		     struct fidx_error *err);

/* Frees the reader.  NULL is allowed. */
void sqlite_rows_free(struct sqlite_rows *r);

/* ---- paths.c ---- */

struct fidx_paths *sqlite_paths(struct fidx_store *st, int64_t scan, const char *root,
				const struct fidx_findpat_literal *lit, size_t nlit,
				struct fidx_error *err);
int sqlite_paths_next(struct fidx_paths *it, const struct fidx_row **entry,
		      struct fidx_error *err);
int sqlite_paths_row(struct fidx_paths *it, uint64_t columns, const struct fidx_row **row,
		     struct fidx_error *err);
void sqlite_paths_close(struct fidx_paths *it);

/* ---- seal.c ---- */

/* Makes the sealer of a store that writes, which keeps row hashes in file_seal. */
int sqlite_seal_setup(struct sqlite_store *st, struct fidx_error *err);

/*
 * The seal of a resumed scan, or of one not sealed as it was written: deletes
 * its file_seal rows, then reads its rows back in id order into a new seal
 * and new file_seal rows.  Returns 0, or -1 with err set.
 */
int sqlite_seal_resume(struct sqlite_store *st, int64_t scan_id, struct fidx_error *err);

/*
 * Seals complete scan scan_id in the open transaction: its remaining
 * file_seal rows, the scan row's line, scan.seal, copied into seal.  A scan
 * whose seal was not computed as it was written is read back first.
 * Returns 0, or -1 with err set (a scan not complete, or sealed already).
 */
int sqlite_seal_scan(struct sqlite_store *st, int64_t scan_id, uint8_t seal[FIDX_SEAL_LEN],
		     struct fidx_error *err);

/* Frees what sealing holds. */
void sqlite_seal_close(struct sqlite_store *st);

int sqlite_verify(struct fidx_store *st, int64_t scan_id, fidx_seal_found_fn *found, void *arg,
		  struct fidx_seal_result *r, struct fidx_error *err);

#endif /* FIDX_STORE_SQLITE_H */
