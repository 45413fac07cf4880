/*
 * progress.h - the progress line of a scan.
 */
#ifndef FIDX_PROGRESS_H
#define FIDX_PROGRESS_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Counters the pipeline's threads bump (relaxed) and the reporter reads. */
struct fidx_progress_counters {
	atomic_uint_least64_t entries_found;   /* entries the walk reported */
	atomic_uint_least64_t files_found;     /* regular files among them */
	atomic_uint_least64_t bytes_found;     /* their sizes */
	atomic_uint_least64_t files_hashed;    /* files the hash workers finished */
	atomic_uint_least64_t bytes_hashed;    /* bytes read for hashing, within files too */
	atomic_uint_least64_t entries_written; /* rows handed to the store */
	atomic_bool walk_done;                 /* the totals are final: an ETA is possible */
};

struct fidx_progress;

/*
 * Starts a thread that redraws one line on stderr about ten times a second
 * from c (which must outlive it).  hashing says whether files are hashed.
 * Returns NULL (and the scan goes on without progress) if it cannot start.
 */
struct fidx_progress *fidx_progress_start(struct fidx_progress_counters *c, bool hashing);

/* Stops the thread and erases the line.  NULL is allowed. */
void fidx_progress_stop(struct fidx_progress *p);

/* Formats a byte count with a binary unit ("912.3 MiB") into buf. */
void fidx_format_bytes(char *buf, size_t size, uint64_t bytes);

#endif /* FIDX_PROGRESS_H */
