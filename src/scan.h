/*
 * scan.h - the scan pipeline: walk, hash, store.
 *
 * fidx_scan() runs the whole job for a set of roots and returns totals; it
 * knows nothing of the command line (cmd_scan.c) or of SQLite (store.h).
 */
#ifndef FIDX_SCAN_H
#define FIDX_SCAN_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "hashio.h"
#include "reuse.h"
#include "store.h"

#define FIDX_MAX_JOBS 1024 /* most jobs (hash workers) a scan takes */

/*
 * Descriptors a scan may hold per job (the listings, long-path opens and
 * parent directories of its walker threads, the files its hashing threads read) beside a fixed reserve
 * (SQLite's files, stdio, the walk's own): a scan's jobs must fit the limit.
 */
#define FIDX_FDS_PER_JOB 24
#define FIDX_FDS_RESERVED 64

/* The seal of one root's scan (seal.h), printed for the examiner's notes. */
struct fidx_scan_seal {
	bool sealed;                 /* the scan completed and was sealed */
	uint8_t sha256[32];          /* its seal */
};

struct fidx_scan_opts {
	unsigned digests;            /* mask of digests to compute (1u << enum fidx_digest) */
	unsigned jobs;               /* CPUs to hash on, >= 1; the walk (and the reads with
					FIDX_IO_SSD) run fidx_scan_io_threads(jobs) threads */
	bool xdev;                   /* stay on each root's filesystem */
	bool follow;                 /* follow symlinks */
	bool no_stat;                /* record names and types only: no stat, no digests */
	enum fidx_io_mode io;        /* how files are read: FIDX_IO_SSD or FIDX_IO_HDD */
	bool drop_cache;             /* drop each file's pages from the cache once hashed */
	const char *const *excludes; /* NULL-terminated glob list, or NULL */
	bool progress;               /* draw a progress line on stderr */
	const char *options_json;    /* recorded in each scan row */
	FILE *error_list;            /* if not NULL, gets "PATH: ERROR" per entry with an error */
	atomic_bool *cancel;         /* set (by a signal handler) to interrupt the scan */
	/* Incremental rescans (reuse.h): digests to take instead of reading a
	 * file that did not change, or NULL to read every file (--rehash). */
	const struct fidx_reuse *reuse;
	const int64_t *base_scan_ids; /* per root: the scan reuse holds for it, 0 for none;
					 or NULL */
	/* Resuming (--resume): per root, the scan to continue (0: begin a new
	 * one) and the paths it already recorded, which are not recorded
	 * again; both NULL for a new scan of every root. */
	const int64_t *resume_ids;
	const struct fidx_pathset *const *resumed_paths;
	/* Databases the scan leaves out beside its store's (NULL-terminated paths,
	 * or NULL): each one's file, -wal, -shm and -journal are never recorded
	 * (`fidx check` reads its baseline while it scans). */
	const char *const *leave_out;
};

/*
 * The threads of a scan with jobs jobs that mostly wait on the kernel and the
 * disk: the walker threads, and with FIDX_IO_SSD the threads reading files.
 * Four per job (more requests in flight than CPUs), at most 32 unless jobs
 * is larger.
 */
unsigned fidx_scan_io_threads(unsigned jobs);

/* What a scan did, over all its roots. */
struct fidx_scan_result {
	int64_t *scan_ids;           /* each root's scan id, in root order (ids need not be
					consecutive); nscans of them; the caller frees it */
	size_t nscans;               /* scan rows written (one per root) */
	uint64_t entries, files, dirs, bytes, errors;
	uint64_t unfinished;         /* of errors: entries an interruption left unfinished
					(FIDX_ERROR_NOT_READ, FIDX_ERROR_NOT_HASHED of record.h),
					which `fidx scan --resume` does again */
	uint64_t reused;             /* files whose digests came from an earlier scan */
	uint64_t hashed;             /* files read and hashed */
	uint64_t bytes_hashed;       /* their bytes, read and hashed by this run (not those of a
					run a resumed scan continues) */
	double seconds;              /* wall-clock time */
	bool interrupted;            /* stopped by cancel */
	struct fidx_scan_seal *seals; /* each root's seal, in root order (sealed false for a
					 scan not sealed), or NULL when out of memory;
					 the caller frees it */
	char *index_error;           /* why the indexes built after the scans could not be
					(a full disk: the scans are whole and sealed, queries
					slower until a later scan builds them), or NULL; the
					caller frees it */
};

/*
 * Scans the roots (absolute paths) into the open store st, one scan row per
 * root.  Returns 0 when every root was walked to its end or interrupted by
 * cancel (result->interrupted), or -1 when anything failed (the store, memory
 * in any stage), with a one-line message in *errmsg (malloc'ed; NULL when
 * even that could not be allocated: out of memory).  The result is -1 on any
 * failure, whether or not it could be described.  Scan rows are ended
 * 'complete', 'interrupted' or 'failed' accordingly (as far as the store can
 * still write).
 */
int fidx_scan(struct fidx_store *st, const char *const *roots, size_t nroots,
	      const struct fidx_scan_opts *opts, struct fidx_scan_result *result, char **errmsg);

#endif /* FIDX_SCAN_H */
