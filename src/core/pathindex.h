/*
 * pathindex.h - the substring index of a scan's paths, behind `fidx find`:
 * its format, built and read, whatever store keeps it.
 *
 * After a scan, its paths are kept a second time, compactly and sorted, with
 * a trigram index over them:
 *
 *     blocks     FIDX_PATHINDEX_BLOCK consecutive paths in byte order,
 *                front-coded (each path as the length it shares with the one
 *                before + the rest), with their file ids
 *     trigrams   for each 3-byte sequence of the ASCII-lower-cased paths, the
 *                list of blocks in which it occurs (delta varints)
 *
 * A store keeps each block and each trigram's list as one value under its
 * number (the SQLite store in path_block and path_trigram, the PostgreSQL
 * store in fidx.path_block and fidx.path_trigram; docs/SCHEMA.md), and a row
 * that says the index of the scan is whole.  This file knows the bytes; the
 * store's glue (sqlite/pathindex.c, postgres/pathindex.c) knows where they
 * are.
 *
 * A query takes the trigrams that every match must contain, intersects their
 * block lists and reads only those blocks; the caller checks each path it
 * gets against the real pattern, so the index only ever narrows the search
 * (never a false positive, and since every trigram of a matching path is in
 * its block's lists, never a false negative).
 *
 * Errors (error.h): EBADMSG for a damaged block or list (err->msg says what
 * is wrong with it, "a path out of order", for the store to say where),
 * ENOMEM, or what a sink failed with.
 */
#ifndef FIDX_CORE_PATHINDEX_H
#define FIDX_CORE_PATHINDEX_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "error.h"
#include "findpat.h"

/*
 * Paths per block, chosen by measurement (docs/BENCHMARKS.md, "fidx find");
 * bench/find-build is compiled with other values to compare them.
 */
#ifndef FIDX_PATHINDEX_BLOCK
#define FIDX_PATHINDEX_BLOCK 32
#endif

/* Where a build puts what it makes; each returns 0, or -1 with err set. */
struct fidx_pathindex_sink {
	/* Block number block (0, 1, 2, ... in order) is the len bytes at data. */
	int (*block)(void *arg, uint32_t block, const void *data, size_t len,
		     struct fidx_error *err);
	/* Trigram tri occurs in the blocks of the list (len bytes at list); ascending tri. */
	int (*trigram)(void *arg, uint32_t tri, const void *list, size_t len,
		       struct fidx_error *err);
	void *arg;
};

/* What a build made. */
struct fidx_pathindex_totals {
	uint64_t paths;      /* paths added */
	uint32_t blocks;     /* blocks given to the sink */
	uint64_t trigrams;   /* lists given to the sink */
};

struct fidx_pathindex_builder;

/* Starts a build into sink (copied).  Returns it, or NULL with err set. */
struct fidx_pathindex_builder *fidx_pathindex_builder_new(const struct fidx_pathindex_sink *sink,
							  struct fidx_error *err);

/*
 * Adds the path of file id id (len bytes, in byte order after the one added
 * before).  Full blocks go to the sink as they fill.  Returns 0, or -1 with
 * err set.
 */
int fidx_pathindex_builder_add(struct fidx_pathindex_builder *b, int64_t id, const void *path,
			       size_t len, struct fidx_error *err);

/*
 * Gives the sink the last block and every trigram's list, and fills *t.
 * Returns 0, or -1 with err set.
 */
int fidx_pathindex_builder_end(struct fidx_pathindex_builder *b, struct fidx_pathindex_totals *t,
			       struct fidx_error *err);

/* Frees a build.  NULL is allowed. */
void fidx_pathindex_builder_free(struct fidx_pathindex_builder *b);

/*
 * Appends to out the trigrams of the n bytes at s, ASCII letters lower-cased,
 * as 24-bit numbers (first byte highest), sorted and without repeats.
 * out holds len trigrams already (sorted, no repeats) and must have room for
 * n - 2 more (nothing is added when n < 3).  Returns how many it holds after.
 */
size_t fidx_pathindex_trigrams(const char *s, size_t n, uint32_t *out, size_t len);

/*
 * The trigrams that every path holding all nlit literals (findpat.h) holds,
 * as fidx_pathindex_trigrams() makes them: a malloc'ed array into *tri (free
 * it even when *ntri is 0) and its length into *ntri.  Returns 0, or -1
 * with err set.
 */
int fidx_pathindex_literal_trigrams(const struct fidx_findpat_literal *lit, size_t nlit,
				    uint32_t **tri, size_t *ntri, struct fidx_error *err);

/* One trigram's block list as a store read it. */
struct fidx_pathindex_list {
	const void *p;
	size_t len;
};

/*
 * The blocks (of nblocks) in every one of the n lists, ascending, into
 * *blocks (malloc'ed; NULL when none) and *count.  An empty list means no
 * block can match.  Returns 0, or -1 with err set (EBADMSG: a damaged list).
 */
int fidx_pathindex_choose(const struct fidx_pathindex_list *lists, size_t n, uint64_t nblocks,
			  uint32_t **blocks, size_t *count, struct fidx_error *err);

/* One path as a query reads it. */
struct fidx_pathent {
	int64_t id;        /* file.id */
	const char *path;  /* NUL-terminated bytes; valid until the next call */
	size_t len;        /* its length */
};

/* A block being read. */
struct fidx_pathblock {
	const unsigned char *p, *end;  /* what is left of it */
	int64_t prev_id;               /* the id before */
	char *path;                    /* the current path (malloc'ed), NUL-terminated */
	size_t len, cap;
};

/*
 * Starts reading the len bytes of a block at data (the caller keeps them
 * until the block is read); the path buffer of r is kept from the block
 * before.  Returns 0, or -1 with err set (EBADMSG: an empty block).
 */
int fidx_pathblock_start(struct fidx_pathblock *r, const void *data, size_t len,
			 struct fidx_error *err);

/* Gives the block's next path in *e.  Returns 1, 0 at its end, or -1 with err set. */
int fidx_pathblock_next(struct fidx_pathblock *r, struct fidx_pathent *e, struct fidx_error *err);

/* Frees what r holds (not r). */
void fidx_pathblock_free(struct fidx_pathblock *r);

#endif /* FIDX_CORE_PATHINDEX_H */
