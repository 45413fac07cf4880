/*
 * hashio.h - the hashing stage of a scan: how file contents are read and
 * hashed, on solid-state and on spinning disks.
 *
 * The stage takes records of regular files from a queue (the walk fills it),
 * reads each file once, computes its digests and hands every record back,
 * with its digests or with the reason it has none, through a callback.  It
 * knows nothing of SQLite or of the command line.
 */
#ifndef FIDX_HASHIO_H
#define FIDX_HASHIO_H

#include <stdatomic.h>
#include <stdbool.h>

#include "queue.h"
#include "record.h"

/* How files are read. */
enum fidx_io_mode {
	FIDX_IO_AUTO, /* FIDX_IO_HDD when a root is on a spinning disk, else FIDX_IO_SSD */
	FIDX_IO_SSD,  /* many files read at once, each by the thread that hashes it */
	FIDX_IO_HDD,  /* one file at a time, in on-disk order; the CPUs hash in parallel */
};

/* Parses "auto", "ssd" or "hdd".  Returns 0, or -1 with errno EINVAL. */
int fidx_io_mode_parse(const char *name, enum fidx_io_mode *mode);

/* Returns "auto", "ssd" or "hdd". */
const char *fidx_io_mode_name(enum fidx_io_mode mode);

/*
 * Opens a regular file for reading as the stage does: O_NOATIME when allowed,
 * and never through a symlink unless follow (the walk followed it).  Returns
 * the descriptor, or -1 with errno set.
 */
int fidx_hashio_open(const char *path, bool follow);

/*
 * Checks, once bytes were read from fd, that it is still the file m
 * describes, unchanged: a regular file with m's device, inode, size and
 * mtime, and bytes equal to its size.  Returns NULL, or what to record:
 * "stat" (errno set) or "changed during scan" (errno 0).
 */
const char *fidx_hashio_check(int fd, const struct fidx_meta *m, uint64_t bytes);

struct fidx_hashio_opts {
	unsigned digests;            /* digests to compute (1u << enum fidx_digest), not 0 */
	enum fidx_io_mode mode;      /* FIDX_IO_SSD or FIDX_IO_HDD */
	unsigned jobs;               /* CPUs to hash on, >= 1 */
	unsigned readers;            /* SSD: files read at once (threads); 0: jobs */
	unsigned prefetch;           /* SSD: descriptors the stage may hold beside its
					threads' own, to read files ahead on a cold cache */
	bool drop_cache;             /* POSIX_FADV_DONTNEED on each file once read */
	struct fidx_queue *in;       /* records of regular files (with size, ino, mtime) */
	atomic_bool *cancel;         /* the user's interrupt: files not yet read are
					recorded "not hashed: scan interrupted" */
	atomic_bool *stop;           /* the pipeline failed: wind down as fast as possible */
	atomic_uint_least64_t *bytes_hashed; /* bumped as blocks are hashed */
	atomic_uint_least64_t *files_hashed; /* bumped as records are done */
	/*
	 * Every record taken from `in` is handed to done() exactly once, on one
	 * of the stage's threads, with the context thread_start() made for that
	 * thread.  done() takes the record; it returns -1 when the records have
	 * nowhere to go (the pipeline failed).  thread_end() is called on each
	 * such thread when it has no more records.
	 */
	void *(*thread_start)(void *arg);
	int (*done)(void *ctx, struct fidx_record *rec);
	void (*thread_end)(void *ctx, void *arg);
	/* Called when the stage cannot go on (out of memory): the scan fails. */
	void (*fail)(void *arg, const char *msg);
	void *arg;
};

struct fidx_hashio;

/*
 * Starts the stage's threads.  opts and the queue must outlive the stage.
 * Returns NULL with errno set when they cannot all be started; those that
 * did were told to stop through fail() and have ended (fail() must make the
 * input queue close, as the scan's failure path aborts it).
 */
struct fidx_hashio *fidx_hashio_start(const struct fidx_hashio_opts *opts);

/*
 * Waits until the input queue is closed (or aborted) and every record taken
 * from it was handed to done(), then frees the stage.  NULL is allowed.
 */
void fidx_hashio_finish(struct fidx_hashio *io);

#endif /* FIDX_HASHIO_H */
