/*
 * store.h - where the inventory goes.
 *
 * The scan pipeline talks to its database only through these functions, and
 * only from one thread (the writer).  The one backend today is SQLite
 * (store_sqlite.c); a second one (a central PostgreSQL) can be added behind
 * the same functions without touching the walker or the workers.
 *
 * A store batches rows into transactions of opts.batch_rows rows; a scan's
 * row is committed as soon as it is begun, so that a killed process leaves it
 * visible with status 'running'.  Errors: functions return -1 (or NULL) and
 * fidx_store_errmsg() gives one line saying what failed and why.
 */
#ifndef FIDX_STORE_H
#define FIDX_STORE_H

#include <stdint.h>

#include "record.h"

struct fidx_store;

/* Tuning, chosen by measurement (docs/BENCHMARKS.md). */
struct fidx_store_opts {
	unsigned batch_rows;  /* rows per transaction; 0 for the default */
	int cache_kib;        /* SQLite page cache in KiB; 0 for the default */
};

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
 * Opens (creating if needed) the database at path for writing, and checks or
 * creates its schema.  A file that is not a fidx database, or one with a
 * newer or unknown schema version, is refused.  Returns NULL on failure, with
 * a one-line message in *errmsg (malloc'ed, the caller frees it).
 */
struct fidx_store *fidx_store_open(const char *path, const struct fidx_store_opts *opts,
				   char **errmsg);

/*
 * Inserts a scan row with status 'running' and commits it.  Returns the new
 * scan id (> 0), or -1 on failure.
 */
int64_t fidx_store_begin_scan(struct fidx_store *st, const struct fidx_scan_info *info);

/*
 * Takes up scan scan_id again (`fidx scan --resume`), in one transaction:
 * drops its rows of entries the interruption left unfinished (errors
 * FIDX_ERROR_NOT_READ and FIDX_ERROR_NOT_HASHED) and their file_digest rows
 * (a new row may take a dropped row's id), sets it 'running' again
 * under this process, and fills *so_far with the totals of the rows it keeps
 * (finished_ns and status unset).  Returns 0, or -1 on failure (a complete
 * scan, or no such scan, is refused).
 */
int fidx_store_resume_scan(struct fidx_store *st, int64_t scan_id,
			   struct fidx_scan_totals *so_far);

/*
 * Adds one entry (rec->scan_id names its scan) to the current transaction,
 * committing when the batch is full.  The record stays the caller's.
 * Returns 0, or -1 on failure.
 */
int fidx_store_add(struct fidx_store *st, const struct fidx_record *rec);

/*
 * Returns how many rows were added since the last commit: 0 right after
 * fidx_store_add() committed a full batch.  Those rows are lost if a later
 * commit fails.
 */
unsigned fidx_store_pending(const struct fidx_store *st);

/* Commits the rows added so far.  Returns 0, or -1 on failure. */
int fidx_store_flush(struct fidx_store *st);

/*
 * Commits pending rows and records the end of scan scan_id.  With seal not
 * NULL, a complete scan is sealed in the same transaction (as
 * fidx_store_seal(), the seal copied into seal): a complete scan is never
 * left unsealed.  When the end cannot be written (a full disk, even with the
 * room kept for it given back), a complete scan is recorded as failed, so
 * that the row does not stay 'running'.  Returns 1 when ended and sealed, 0
 * when ended, or -1 on failure (the row then says failed when it could be
 * written).
 */
int fidx_store_end_scan(struct fidx_store *st, int64_t scan_id,
			const struct fidx_scan_totals *totals, uint8_t *seal);

/*
 * Builds the secondary indexes that are left out during the bulk load (a
 * no-op when they exist), and the path index of `fidx find` (pathindex.h)
 * for every complete scan that has none.  Returns 0, or -1 on failure.
 */
int fidx_store_build_indexes(struct fidx_store *st);

/* Returns the last failure as one line (valid until the next call). */
const char *fidx_store_errmsg(const struct fidx_store *st);

/* Returns the path of the database file, as it was given to fidx_store_open(). */
const char *fidx_store_path(const struct fidx_store *st);

/*
 * Closes the store.  Rows not yet committed are rolled back.  Returns 0, or
 * -1 when closing failed.  NULL is allowed.
 */
int fidx_store_close(struct fidx_store *st);

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
 * Writes n digests into the file_digest table, in one transaction (after
 * committing pending rows).  A row already there for a file keeps what the
 * new one does not set (its edges, or its SHA-256).  Returns 0, or -1 on
 * failure (nothing of the n is kept).
 */
int fidx_store_add_digests(struct fidx_store *st, const struct fidx_file_digest *d, size_t n);

/*
 * Makes st a scratch database, one that is deleted once the process is done
 * with it (`fidx dupes PATH`): commits are not synced to the disk, since a
 * crash loses nothing that is kept, and fidx_store_build_indexes() builds no
 * secondary index (file_scan_path, the path index), which nothing reads
 * there.  Returns 0, or -1 on failure.
 */
int fidx_store_scratch(struct fidx_store *st);

/*
 * Seals complete scan scan_id (seal.h: SHA-256 over its canonical rows).
 * The seal of a scan begun or resumed by this store is computed as its rows
 * are added (each transaction holds its rows' file_seal rows); this adds the
 * scan row's line, writes scan.seal and copies the seal (32 bytes) into seal.
 * Any other scan's rows are read back (and their file_seal rows rewritten),
 * in the same transaction.  Returns 1 when sealed, 0 for a scratch store
 * (which seals nothing), or -1 on failure (nothing written).
 */
int fidx_store_seal(struct fidx_store *st, int64_t scan_id, uint8_t seal[32]);

#endif /* FIDX_STORE_H */
