/*
 * scan.h - the scan pipeline: a source's records, hashed, into a store.
 *
 * fidx_scan() runs the whole job for a set of roots and returns totals; it
 * knows nothing of the command line (tool/builtin/scan.c), of where records
 * come from (source.h: the live filesystem's walk, or another source) or of
 * the store's backend (store.h), and prints nothing: whoever shows its
 * progress reads its counters, whoever lists its errors gets them through
 * on_error.
 */
#ifndef FIDX_SCAN_H
#define FIDX_SCAN_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "error.h"
#include "hashio.h"
#include "reuse.h"
#include "source.h"
#include "store.h"

#define FIDX_MAX_JOBS 1024 /* most jobs (hash workers) a scan takes */

/*
 * Descriptors a scan may hold per job (the listings, long-path opens and
 * parent directories of its walker threads, the files its hashing threads
 * read) beside a fixed reserve (the store's files, stdio, the walk's own): a
 * scan's jobs must fit the limit.
 */
#define FIDX_FDS_PER_JOB 24
#define FIDX_FDS_RESERVED 64

/* Counters the pipeline's threads bump (relaxed) and a progress line reads. */
struct fidx_progress_counters {
	atomic_uint_least64_t entries_found;   /* entries the source reported */
	atomic_uint_least64_t files_found;     /* regular files among them */
	atomic_uint_least64_t bytes_found;     /* their sizes */
	atomic_uint_least64_t files_hashed;    /* files the hash workers finished */
	atomic_uint_least64_t bytes_hashed;    /* bytes read for hashing, within files too */
	atomic_uint_least64_t entries_written; /* rows handed to the store */
	atomic_bool source_done;               /* the source found all: the totals are final,
						  an ETA is possible */
};

/* The seal of one root's scan (seal.h), printed for the examiner's notes. */
struct fidx_scan_seal {
	bool sealed;                 /* the scan completed and was sealed */
	uint8_t sha256[32];          /* its seal */
};

struct fidx_scan_opts {
	unsigned digests;            /* mask of digests to compute (1u << enum fidx_digest) */
	unsigned jobs;               /* CPUs to hash on, >= 1; the source (and the reads with
					FIDX_IO_SSD) run fidx_scan_io_threads(jobs) threads */
	enum fidx_io_mode io;        /* how files are read: FIDX_IO_SSD or FIDX_IO_HDD */
	bool drop_cache;             /* drop each file's pages from the cache once hashed */
	struct fidx_progress_counters *counters; /* bumped as the scan goes (zeroed by the
					caller), or NULL */
	const char *options_json;    /* recorded in each scan row ... */
	const char *const *root_options; /* ... or per root, in root order (NULL: as above) */
	/* Called (on the writer thread) for each entry recorded with an error, or NULL. */
	void (*on_error)(void *arg, const char *path, const char *error);
	void *on_error_arg;
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
	/* Files the source leaves out beside the store's own (fidx_store_files()):
	 * NULL-terminated paths, or NULL (`fidx check` reads its baseline's
	 * database while it scans). */
	const char *const *leave_out;
};

/*
 * The threads of a scan with jobs jobs that mostly wait on the kernel and the
 * disk: the source's threads, and with FIDX_IO_SSD the threads reading files.
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
	struct fidx_error index_error; /* why the indexes built after the scans could not be
					(a full disk: the scans are whole and sealed, queries
					slower until a later scan builds them); code 0: built */
};

/*
 * Scans the roots (absolute paths, for the walk) of the source src into the
 * open store st, one scan row per root; src stays the caller's.  Returns 0
 * when src ran to its end on every root or was interrupted by
 * cancel (result->interrupted), or -1 with err set when anything failed (the
 * store, memory in any stage).  The result is -1 on any failure, whether or
 * not it could be described.  Scan rows are ended 'complete', 'interrupted'
 * or 'failed' accordingly (as far as the store can still write).
 */
int fidx_scan(struct fidx_store *st, struct fidx_source *src, const char *const *roots,
	      size_t nroots, const struct fidx_scan_opts *opts, struct fidx_scan_result *result,
	      struct fidx_error *err);

#endif /* FIDX_SCAN_H */
