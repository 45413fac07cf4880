/*
 * source.h - where a scan's records come from.
 *
 * The scan pipeline (scan.h) hashes, batches and stores records; a source
 * makes them.  The live filesystem's walk is one source (source_walk.c); a
 * disk image read with The Sleuth Kit is another (source_image.c), added as
 * one more file beside it; the pipeline only learned to leave alone a record
 * whose path names no file to read (no_read).  A source is a
 * struct fidx_source behind an ops table, as the store is (store.h):
 *
 *   run()   produces one record per entry under each root, on threads of its
 *           own, and hands each to the sink (the pipeline) from the thread
 *           that made it; it returns once every one of its threads ended;
 *   fds()   says how many descriptors run() may hold with that many threads,
 *           so that the pipeline reads files ahead only within what is left;
 *   free()  releases the source.
 *
 * A record comes with its path, type, metadata, link target and error as
 * record.h describes; root_index says which root it is under and scan_id is
 * the pipeline's to set.  A source that cannot give the pipeline a file to
 * read at the record's path (a file inside an image) computes the digests
 * itself (digest_mask set): the pipeline reads and hashes only regular
 * files that arrive without any.
 */
#ifndef FIDX_SOURCE_H
#define FIDX_SOURCE_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>

#include "error.h"
#include "record.h"

/* What the pipeline gives a source to hand its records to. */
struct fidx_sink {
	/* Called on each thread of the source before its first record: the
	 * thread's context for put(), or NULL when out of memory (the pipeline
	 * then fails, and put() on that context asks the source to stop). */
	void *(*thread_start)(void *arg);
	/* Called as each of those threads ends, with its context. */
	void (*thread_end)(void *ctx, void *arg);
	/* Takes rec (the pipeline owns it from then on).  Returns 0 to go on,
	 * or -1 when the source must stop: the scan failed or was cancelled. */
	int (*put)(void *ctx, struct fidx_record *rec);
	/* Whether the source must stop (before it looks further); thread-safe. */
	bool (*stopping)(void *arg);
	/* The source cannot go on (why: "out of memory"): the scan fails, and
	 * the sink stops the source.  Thread-safe. */
	void (*fail)(void *arg, const char *why);
	atomic_bool *stop;  /* set when the source must stop: a source that
			       waits may poll it, as fidx_walk's cancel does */
	void *arg;          /* passed to thread_start, thread_end and stopping */
};

/* What a run of a source is asked to do. */
struct fidx_source_run {
	const char *const *roots;     /* what to read: paths, for the walk */
	size_t nroots;
	unsigned threads;             /* threads it may run, >= 1 */
	/* Files never recorded (NULL-terminated absolute paths, their folders
	 * resolved): the store's own, which change while the scan runs, and any
	 * the caller adds.  A source of a live filesystem must leave them out
	 * whatever path leads to them; one that reads no live file ignores it. */
	const char *const *leave_out;
	const struct fidx_sink *sink;
};

struct fidx_source;

/* The operations of a kind of source. */
struct fidx_source_ops {
	const char *name;             /* "walk" */
	/* Runs the source (see above).  Returns 0 when it ran to its end or was
	 * stopped through the sink, or -1 with err set when it could not run. */
	int (*run)(struct fidx_source *src, const struct fidx_source_run *run,
		   struct fidx_error *err);
	/* The descriptors run() may hold at once with threads threads. */
	unsigned long (*fds)(const struct fidx_source *src, unsigned threads);
	void (*free)(struct fidx_source *src);
};

/* A source: its ops, then its own state (a backend's struct starts with this). */
struct fidx_source {
	const struct fidx_source_ops *ops;
};

/* Frees src through its ops.  NULL is allowed. */
void fidx_source_free(struct fidx_source *src);

/* The live filesystem's walk (fidx/walk.h) as a source. */
struct fidx_walk_source_opts {
	bool xdev;                    /* stay on each root's filesystem */
	bool follow;                  /* follow symlinks whose targets lie inside the roots */
	bool follow_all;              /* ... and those that lead anywhere (--follow-all) */
	bool no_stat;                 /* names, types and link targets only: no stat */
	const char *const *excludes;  /* NULL-terminated glob list, or NULL (fidx_walk_opts) */
};

/*
 * Makes the walk source with opts (copied; the excludes are borrowed and
 * must outlive it).  Returns it, or NULL with err set (out of memory).
 */
struct fidx_source *fidx_walk_source_new(const struct fidx_walk_source_opts *opts,
					 struct fidx_error *err);

/* Disk images read with The Sleuth Kit (source_image.c) as a source. */
struct fidx_image_source_opts {
	unsigned digests;             /* the digests of every file (1u << enum fidx_digest) */
	unsigned image_digests;       /* the digests of each image's media (0: none); an E01's
					 stored MD5 and SHA-1 are then checked too */
	unsigned workers;             /* threads reading and hashing files, >= 1 */
};

/*
 * Makes the image source with opts (copied): each root is an image or a
 * block device, read read-only (source_image.c tells what is recorded and
 * where).  Returns it, or NULL with err set (out of memory).
 */
struct fidx_source *fidx_image_source_new(const struct fidx_image_source_opts *opts,
					  struct fidx_error *err);

/*
 * What the image at path is, as a JSON object recorded in its scan's
 * options ("format", "size", "sector_size", "pieces", "table", "partitions":
 * [{"name", "start", "length", "description", "fs"}], "fs" without a table,
 * "stored_md5"/"stored_sha1" of an E01).  Returns it malloc'ed, or NULL with
 * err set (EMEDIUMTYPE: not an image The Sleuth Kit opens).
 */
char *fidx_image_describe(const char *path, struct fidx_error *err);

/*
 * Whether path looks like a disk image or a block device: a block device, or a
 * file The Sleuth Kit finds a partition table or a file system in (or a
 * format other than raw).  For a hint; false when it cannot tell.
 */
bool fidx_image_probe(const char *path);

/* The Sleuth Kit's name and version ("The Sleuth Kit 4.11.1"), for --version. */
const char *fidx_image_library(void);

#ifdef _WIN32
/* A live Windows file system, read through the Win32 API (source_win.c), as a source. */
struct fidx_win_source_opts {
	bool xdev;                    /* do not enter volumes mounted on folders (a mount point
					 is recorded, not entered) */
	bool streams;                 /* record each named stream (alternate data stream) as
					 FILE:NAME (callers set it: the default is true) */
	const char *const *excludes;  /* NULL-terminated glob list, or NULL: as the walk's
					 (fidx_walk_opts), on stored paths (winpath.h) */
};

/*
 * Makes the Windows source with opts (copied; the excludes are borrowed and
 * must outlive it): each root is a stored path (/C:/x) or a native one
 * (C:\x, \\server\share, relative), source_win.c tells what is recorded.
 * Returns it, or NULL with err set (out of memory).
 */
struct fidx_source *fidx_win_source_new(const struct fidx_win_source_opts *opts,
					struct fidx_error *err);
#endif

#endif /* FIDX_SOURCE_H */
