/*
 * store.h - where the inventory goes, and where the queries read it.
 *
 * Everything above the store (the scan pipeline, the query commands) knows
 * a database only through these functions; they dispatch through an ops
 * table (backend.h) to the backend that claims the --db argument.  The
 * SQLite backend (src/store/sqlite/) is the only code that knows SQL or
 * includes <sqlite3.h>; a central PostgreSQL is meant to be a second backend
 * behind the same table.
 *
 *     tool/builtin/ ────┐                          ┌─► sqlite/  (a path: fidx.db)
 *     core/scan.c ──────┼─► store.h ─► store.c ────┤
 *     core/reuse.c ─────┘   (this)     dispatch    └─► (postgresql://..., next)
 *
 * A store is opened for one of three jobs:
 *
 *   READ      queries: never writes, and leaves a database at rest as it was
 *             (no file made, no time moved; the SQLite backend reads it as an
 *             immutable file under fidx's reader lock); closing it fails when
 *             a writer that is not fidx changed the database under the read
 *   WRITE     scans: creates the database or migrates its schema, refuses a
 *             database whose schema holds objects fidx did not create
 *   SCRATCH   a throw-away database (fidx dupes PATH, fidx check): written
 *             without syncing, sealing or indexing
 *
 * Writing.  One thread at a time (the scan's writer).  Rows are batched into
 * transactions of opts.batch_rows rows; a scan's row is committed as soon as
 * it is begun, so that a killed process leaves it visible as 'running'.  A
 * complete scan is sealed in the transaction that ends it (seal.h).
 *
 * Reading.  Scans are read whole (struct fidx_scan_row: few of them); file
 * rows through iterators (struct fidx_rows, struct fidx_paths) whose rows
 * point into the store's memory until the next step.  Every row read is
 * checked against what fidx writes (each column's kind, digests of their
 * length, paths absolute and below their scan's root, the seven type
 * letters): the first that is not stops the read with EBADMSG and a message
 * naming the scan, the row and the column ("database 'x' is damaged: scan 2,
 * row 17: size holds text, not an integer").
 *
 * Errors follow error.h: -1 (or NULL) with err filled.  Codes the callers
 * tell apart: ENOENT no such database (or scan), EBADMSG damaged data,
 * EPROTONOSUPPORT a database of a newer schema than this fidx knows,
 * EMEDIUMTYPE a file that is not a fidx database, ENOMEM, EIO for the rest.
 */
#ifndef FIDX_STORE_H
#define FIDX_STORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "error.h"
#include "findpat.h"
#include "record.h"
#include "row.h"
#include "scanrow.h"
#include "seal.h"
#include "select.h"

struct fidx_store;

/* The schema version this fidx writes and reads (docs/SCHEMA.md). */
#define FIDX_SCHEMA_VERSION 7

/* What a store is opened for (above). */
enum fidx_store_mode { FIDX_STORE_READ, FIDX_STORE_WRITE, FIDX_STORE_SCRATCH };

/* How to open a store. */
struct fidx_store_opts {
	unsigned batch_rows;  /* WRITE: rows per transaction; 0 for the default */
	int cache_kib;        /* WRITE: the page cache in KiB; 0 for the default */
	const char *origin;   /* said after the database's name in messages ("" or
				 " (from FIDX_DB)"); NULL for "" */
	/* A warning the store has for the user (READ: a schema holding objects
	 * fidx did not create, read without running them); NULL: none told. */
	void (*warn)(void *arg, const char *msg);
	void *warn_arg;
};

/* What fidx_store_probe() finds at a --db argument. */
enum fidx_store_kind {
	FIDX_STORE_NONE,      /* nothing there yet, or an empty file: a scan creates it */
	FIDX_STORE_FIDX,      /* a fidx database */
	FIDX_STORE_FOREIGN,   /* a database of another application */
	FIDX_STORE_OTHER,     /* something else */
};

/*
 * Looks at target without opening it as a database (a SQLite file is only
 * read(2): SQLite could replay a journal).  Sets *version to a fidx
 * database's schema version when version is not NULL.  Returns the kind, or
 * -1 with errno set when it cannot be looked at (EISDIR for a directory).
 */
int fidx_store_probe(const char *target, uint32_t *version);

/*
 * Opens the database target names (a path today) for mode.  Returns the
 * store, or NULL with err set: a missing database for READ (ENOENT), one
 * that is empty (ENOENT), not fidx's (EMEDIUMTYPE), newer
 * (EPROTONOSUPPORT), a foreign schema for WRITE (EPERM), or unreadable.
 * A database this store creates and in which it begins no scan is removed
 * again when it is closed.
 */
struct fidx_store *fidx_store_open(const char *target, enum fidx_store_mode mode,
				   const struct fidx_store_opts *opts, struct fidx_error *err);

/*
 * Closes the store: rows not committed are rolled back.  Returns 0, or -1
 * with err set when closing failed, or (READ) when the database changed
 * while it was read (by a program other than fidx: what was read may not be
 * true).  NULL is allowed.
 */
int fidx_store_close(struct fidx_store *st, struct fidx_error *err);

/*
 * The libraries the backends store with, one per i from 0 ("SQLite
 * 3.40.1"), for --version; NULL past the last.
 */
const char *fidx_store_library(size_t i);

/* The library st stores with ("SQLite 3.40.1"). */
const char *fidx_store_library_of(const struct fidx_store *st);

/* The database's name, as given to fidx_store_open(). */
const char *fidx_store_name(const struct fidx_store *st);

/*
 * The name a store opened on target would have (fidx_store_name()), for a
 * message written before or without opening it: a server's URI without
 * its password.  Returns it malloc'ed, or NULL when out of memory.
 */
char *fidx_store_shown(const char *target);

/* The schema version of the database (1 .. FIDX_SCHEMA_VERSION). */
int fidx_store_version(const struct fidx_store *st);

/*
 * The files the database is kept in, NULL-terminated: the SQLite file and
 * the -wal, -shm and -journal beside it.  A scan never records them (they
 * change while it runs).  Valid until the store is closed.
 */
const char *const *fidx_store_files(const struct fidx_store *st);

/*
 * Makes an empty scratch database of this process in $TMPDIR, named
 * "<prefix>-XXXXXX", and returns its malloc'ed name (to open SCRATCH, then
 * READ), or NULL with err set.  Until fidx_store_scratch_remove() removes
 * it, a SIGPIPE (stdout's reader gone) removes it before the process dies
 * of the signal (one scratch database per process).
 */
char *fidx_store_scratch_new(const char *prefix, struct fidx_error *err);

/* Removes the scratch database name and every file kept beside it. */
void fidx_store_scratch_remove(const char *name);

/* ------------------------------------------------------------- writing --- */

/* Tuning, chosen by measurement (docs/BENCHMARKS.md). */

/* What a scan row says when it begins. */
struct fidx_scan_info {
	const char *root;     /* absolute path scanned (bytes) */
	const char *host;     /* host name */
	const char *os;       /* operating system (PRETTY_NAME of os-release, or uname's sysname) */
	const char *kernel;   /* kernel release */
	const char *arch;     /* machine architecture */
	const char *version;  /* fidx version */
	const char *options;  /* JSON object of the options used */
	int64_t started_ns;   /* start, ns since the epoch (UTC) */
	const char *uuid;     /* the scan's identity across stores (fidx_uuid_new()) */
};

/* What a scan row says when it ends. */
struct fidx_scan_totals {
	int64_t finished_ns;  /* end, ns since the epoch */
	const char *status;   /* "complete", "interrupted" or "failed" */
	uint64_t entries;     /* rows recorded for the scan */
	uint64_t files;       /* regular files */
	uint64_t dirs;        /* directories */
	uint64_t bytes;       /* sum of regular files' sizes */
	uint64_t errors;      /* rows with an error */
	uint64_t reused;      /* regular files whose digests were taken from base_scan_id */
	uint64_t hashed;      /* regular files read and hashed by this scan */
	int64_t base_scan_id; /* the scan digests were reused from; 0 for none in this run
				 (a resumed scan then keeps the one it had) */
};

/*
 * Inserts a scan row with status 'running' (and this process's pid) and
 * commits it.  Returns the new scan id (> 0), or -1 with err set.
 */
int64_t fidx_store_begin_scan(struct fidx_store *st, const struct fidx_scan_info *info,
			      struct fidx_error *err);

/*
 * Takes scan scan_id up for this process before anything is written to it
 * (`fidx scan --resume`): sets its pid to this process provided it is still
 * seen_pid (0: none), so that of two resumes started at once only one
 * continues it; its status stays as it is.  Returns 1 when taken, 0 when
 * another process took it first (or it is complete), -1 with err set.
 */
int fidx_store_claim_scan(struct fidx_store *st, int64_t scan_id, int64_t seen_pid,
			  struct fidx_error *err);

/*
 * Takes scan scan_id up again, in one transaction: drops its rows of
 * entries the interruption left unfinished (FIDX_ERROR_NOT_READ,
 * FIDX_ERROR_NOT_HASHED) and the digests kept for them, sets it 'running'
 * again under this process, and fills *so_far with the totals of the rows it
 * keeps (finished_ns and status unset).  Returns 0, or -1 with err set (a
 * complete scan, or no such scan, is refused).
 */
int fidx_store_resume_scan(struct fidx_store *st, int64_t scan_id,
			   struct fidx_scan_totals *so_far, struct fidx_error *err);

/*
 * Adds one entry (rec->scan_id names its scan) to the current transaction,
 * committing when the batch is full.  The record stays the caller's.
 * Returns 0, or -1 with err set (the open batch is then lost).
 */
int fidx_store_add(struct fidx_store *st, const struct fidx_record *rec, struct fidx_error *err);

/*
 * Returns how many rows were added since the last commit: 0 right after
 * fidx_store_add() committed a full batch.  Those rows are lost if a later
 * commit fails.
 */
unsigned fidx_store_pending(const struct fidx_store *st);

/* Commits the rows added so far.  Returns 0, or -1 with err set. */
int fidx_store_flush(struct fidx_store *st, struct fidx_error *err);

/*
 * Commits pending rows and records the end of scan scan_id.  With seal not
 * NULL, a complete scan is sealed in the same transaction (the seal copied
 * into seal): a complete scan is never left unsealed.  When the end cannot
 * be written (a full disk, even with the room kept for it given back), a
 * complete scan is recorded as failed, so that the row does not stay
 * 'running'.  Returns 1 when ended and sealed, 0 when ended (a SCRATCH store
 * seals nothing), or -1 with err set (the row then says failed when it
 * could be written).
 */
int fidx_store_end_scan(struct fidx_store *st, int64_t scan_id,
			const struct fidx_scan_totals *totals, uint8_t *seal,
			struct fidx_error *err);

/*
 * Seals complete scan scan_id, which is not sealed, into seal (the
 * product seals in fidx_store_end_scan(); this is for a scan whose seal was
 * never written).  Returns 1 when sealed, 0 for a SCRATCH store, or -1 with
 * err set (a scan not complete, or sealed already, is refused).
 */
int fidx_store_seal(struct fidx_store *st, int64_t scan_id, uint8_t seal[FIDX_SEAL_LEN],
		    struct fidx_error *err);

/*
 * Builds what speeds queries up and is left out during the bulk load: the
 * secondary index, and the path index of `fidx find` for every complete
 * scan that has none (a no-op for a SCRATCH store).  Returns 0, or -1 with
 * err set (the scans stay whole: only queries are slower).
 */
int fidx_store_build_indexes(struct fidx_store *st, struct fidx_error *err);

/* A digest computed after a scan (by `fidx dupes`) for one file row. */
struct fidx_file_digest {
	int64_t file_id;       /* the file row (file.id) it describes */
	int64_t read_ns;       /* when the file was read, ns since the epoch */
	uint32_t edge_block;   /* bytes of each edge block; 0 when edges is not set */
	uint8_t edges[16];     /* XXH3-128 (canonical) of the first and last edge_block bytes */
	bool has_sha256;       /* sha256 is set */
	uint8_t sha256[32];    /* SHA-256 of the whole content */
};

/*
 * Writes n digests beside their rows (FIDX_LATER_COLUMNS), in one
 * transaction: a row already there for a file keeps what the new one does
 * not set (its edges, or its SHA-256).  Returns 0, or -1 with err set
 * (nothing of the n is kept).
 */
int fidx_store_add_digests(struct fidx_store *st, const struct fidx_file_digest *d, size_t n,
			   struct fidx_error *err);

/* ------------------------------------------------------------- pushing --- */

/*
 * `fidx push` copies complete scans of one store into a server's, keeping
 * what their seals are made of: a pushed scan's rows and scan row give the
 * lines they gave where they were made (their ids there included), so its
 * seal is checked on the server's rows.  Only a server's store takes pushes
 * (EOPNOTSUPP from others).
 */

/* Where a scan stands in the store it is pushed to. */
struct fidx_push_state {
	int64_t scan_id;      /* its id in this store */
	bool complete;        /* it is there whole already: nothing to push */
	int64_t after;        /* a push cut off: its rows up to this id (the id where it was
				 made) are there; 0 for none */
	uint8_t seal[64];     /* when complete: the seal recorded there (its first 64 bytes) */
	size_t seal_len;      /* its length (0: none) */
};

/*
 * Finds scan (a complete scan of another store, with its UUID) by its UUID,
 * or begins it: its scan row as it is but for its status (running until
 * fidx_store_push_end()).  Fills *ps.  Returns 0, or -1 with err set.
 */
int fidx_store_push_begin(struct fidx_store *st, const struct fidx_scan_row *scan,
			  struct fidx_push_state *ps, struct fidx_error *err);

/*
 * Says how scan scan_id, begun by fidx_store_push_begin(), is kept: as its
 * changes from the earlier scan of UUID base_uuid (the same host's, of the
 * same root, complete in this store), the rows that one lends it given by
 * runs (len bytes, core/delta.h), or whole (base_uuid NULL).  A push cut
 * off that was kept the other way, or from another scan, is begun anew.
 * Returns 1 when it is kept as changes: only the rows no run covers are to
 * be pushed; 0 when it is kept whole (base_uuid NULL, the earlier scan not
 * here, its chain of changes at its longest, or a store that keeps no
 * changes): every row is; -1 with err set.  *after is updated as
 * fidx_push_state's (0: nothing of the scan is here).
 */
int fidx_store_push_delta(struct fidx_store *st, int64_t scan_id, const char *base_uuid,
			  const void *runs, size_t len, int64_t *after, struct fidx_error *err);

/*
 * Adds row (every file column, as the other store holds it: its id there)
 * to scan scan_id being pushed, in batches as fidx_store_add().  Returns 0,
 * or -1 with err set.
 */
int fidx_store_push_row(struct fidx_store *st, int64_t scan_id, const struct fidx_row *row,
			struct fidx_error *err);

/*
 * Ends the push of scan_id: commits its rows and writes the rest of its scan
 * row as scan has it (its totals, its status, its seal).  Returns 0, or -1
 * with err set.  fidx_store_verify() then checks the seal on the rows pushed.
 */
int fidx_store_push_end(struct fidx_store *st, int64_t scan_id, const struct fidx_scan_row *scan,
			struct fidx_error *err);

/* ------------------------------------------------------------ dropping --- */

/*
 * Drops the n complete scans ids (`fidx prune`) in one transaction: their
 * rows, seals, indexes.  A scan kept whose rows are lent by one of them (a
 * scan kept as changes on a server) is first rebuilt whole in the same
 * transaction, its seal unchanged; *rebuilt counts them.  A store that drops
 * no scans fails with EOPNOTSUPP.  Returns 0, or -1 with err set (nothing
 * dropped).
 */
int fidx_store_drop_scans(struct fidx_store *st, const int64_t *ids, size_t n, size_t *rebuilt,
			  struct fidx_error *err);

/* ------------------------------------------------------------- reading --- */

/* The statuses of a scan, as bits of a filter. */
enum {
	FIDX_STATUS_RUNNING = 1,
	FIDX_STATUS_COMPLETE = 2,
	FIDX_STATUS_INTERRUPTED = 4,
	FIDX_STATUS_FAILED = 8,
};

/* Which scan rows fidx_store_scans() reads. */
struct fidx_scan_filter {
	int64_t id;           /* that scan only; 0: any */
	const char *root;     /* the scans of that root, byte for byte; NULL: any */
	unsigned statuses;    /* FIDX_STATUS_* of those read; 0: any */
};

/*
 * Reads the scan rows f asks for (NULL: every one) into *out, ascending
 * ids, each checked: a damaged one is read as it is, with its damage told
 * (struct fidx_scan_row.damage), for the caller to refuse or to name.
 * Returns 0, or -1 with err set.  *out is replaced.
 */
int fidx_store_scans(struct fidx_store *st, const struct fidx_scan_filter *f,
		     struct fidx_scan_list *out, struct fidx_error *err);

/* The order of the rows of an iterator. */
enum fidx_rows_order {
	FIDX_ROWS_ANY,        /* the store's own, the fastest */
	FIDX_ROWS_PATH,       /* scan by scan (in the order given), each in byte order of path */
	FIDX_ROWS_ID,         /* ascending ids */
};

/* What a damaged row does to an iterator. */
enum fidx_rows_damage {
	FIDX_ROWS_STOP,       /* the read fails with EBADMSG, naming the row */
	FIDX_ROWS_SKIP,       /* the row is passed over (fidx scan takes nothing from it) */
};

/* The rows an iterator reads. */
struct fidx_rows_query {
	const int64_t *scans;       /* the scans whose rows are read */
	const char *const *roots;   /* their roots: a path must be below its scan's root */
	size_t nscans;              /* how many, >= 1 */
	uint64_t columns;           /* FIDX_COLUMN() of the columns wanted; id and scan_id
				       come always, the others are left unset */
	enum fidx_rows_order order;
	const char *under;          /* only the rows at or below this path; NULL: all */
	unsigned types;             /* only the rows of these types (fidx_type_bit()),
				       and those whose type is damaged (the check stops
				       there); 0: every type */
	bool with_error;            /* only the rows with an error */
	const struct fidx_hidden *hidden; /* trees of these scans left out (select.h) */
	size_t nhidden;
	enum fidx_rows_damage damage;
	int64_t changed_from;       /* not 0 (with one scan): a store may leave out the rows
				       that scan changed_from holds as they are, the same
				       stored row lent from one scan to the other (a store of
				       scans kept as changes: what a diff of the two needs);
				       0: every row */
};

struct fidx_rows;

/*
 * Starts reading the rows of q's scans whose digest d is one of the n
 * digests at digests (fidx_digest_len(d) bytes each): q's columns, checks
 * and hidden trees; its order and other filters do not count.  A store that
 * keeps an index of d answers from it (a hunt over a fleet); one that does
 * not fails with EOPNOTSUPP, and the caller reads every row.  Returns the
 * iterator, or NULL with err set.
 */
struct fidx_rows *fidx_store_rows_by_digest(struct fidx_store *st, const struct fidx_rows_query *q,
					    enum fidx_digest d, const uint8_t *digests, size_t n,
					    struct fidx_error *err);

/* Starts reading the rows q asks for (q is copied).  Returns the iterator, or NULL with err set. */
struct fidx_rows *fidx_store_rows(struct fidx_store *st, const struct fidx_rows_query *q,
				  struct fidx_error *err);

/*
 * Sets *row to the next row (valid until the next call).  Returns 1, 0 at
 * the end, or -1 with err set.
 */
int fidx_rows_next(struct fidx_rows *it, const struct fidx_row **row, struct fidx_error *err);

/* Ends the reading.  NULL is allowed. */
void fidx_rows_close(struct fidx_rows *it);

/*
 * Reads the row of id, one of q's scans (q's columns and checks; its order
 * and filters do not count), into *row, valid until the next call or the
 * iterator's close.  Returns 1, 0 when there is no such row of those scans,
 * or -1 with err set.
 */
int fidx_store_row(struct fidx_store *st, const struct fidx_rows_query *q, int64_t id,
		   const struct fidx_row **row, struct fidx_error *err);

/*
 * The paths of one scan in byte order, narrowed by its index when it has
 * one (`fidx find`): only those that may hold every literal (findpat.h;
 * ASCII case folded when icase), so the caller checks each against its
 * pattern.  A scan without an index (still running, interrupted, from an
 * older database) is read whole.
 */
struct fidx_paths;

/* Starts reading the paths of scan (whose root is root).  Returns the iterator, or NULL with err set. */
struct fidx_paths *fidx_store_paths(struct fidx_store *st, int64_t scan, const char *root,
				    const struct fidx_findpat_literal *lit, size_t nlit,
				    struct fidx_error *err);

/*
 * Sets *entry to the next path (columns ID, SCAN_ID and PATH), valid until
 * the next call.  Returns 1, 0 at the end, or -1 with err set (EBADMSG: a
 * damaged index or row).
 */
int fidx_paths_next(struct fidx_paths *it, const struct fidx_row **entry,
		    struct fidx_error *err);

/*
 * Reads the whole row of the entry fidx_paths_next() gave last (columns as
 * fidx_store_row()), checked to be that entry's (its scan, its path).
 * Returns 1, or -1 with err set (EBADMSG when the index and the table
 * disagree).
 */
int fidx_paths_row(struct fidx_paths *it, uint64_t columns, const struct fidx_row **row,
		   struct fidx_error *err);

/* Ends the reading.  NULL is allowed. */
void fidx_paths_close(struct fidx_paths *it);

/*
 * Begins one read transaction, so that everything read until the store is
 * closed is seen as of one moment (a scan written meanwhile stays as it was).
 * Returns 0, or -1 with err set.
 */
int fidx_store_snapshot(struct fidx_store *st, struct fidx_error *err);

/*
 * The rows the scans hold, all of them or (files) their regular files, as
 * their scan rows count them (counted for a scan still running), for a
 * progress line.  0 when they cannot be read.
 */
uint64_t fidx_store_count(struct fidx_store *st, const int64_t *scans, size_t n, bool files);

/*
 * Recomputes the seal of scan scan_id into r; when the scan is sealed and
 * the seal differs, also finds what changed (seal.h), calling found for each
 * finding.  The rows are read as they are, damaged or not.  Returns 0, or
 * -1 with err set.
 */
int fidx_store_verify(struct fidx_store *st, int64_t scan_id, fidx_seal_found_fn *found,
		      void *arg, struct fidx_seal_result *r, struct fidx_error *err);

#endif /* FIDX_STORE_H */
