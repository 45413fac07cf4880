/*
 * pathstore.h - the path index of `fidx find` in a SQLite database: built
 * after each scan, read by find (the bytes are core/pathindex.h's).
 *
 *     path_block    one row per block of FIDX_PATHINDEX_BLOCK paths
 *     path_trigram  one row per trigram: its list of blocks
 *     path_index    one row per indexed scan: the index is complete
 *
 * A scan without an index (a database from schema version 1, a scan still
 * running, interrupted, or not yet indexed) is read in the same order from
 * the `file` table instead.
 *
 * Errors: the iterator's functions return -1 (or NULL) with errno set:
 * ENOMEM, EBADMSG for a damaged index, EIO for an SQLite failure
 * (sqlite3_errmsg() of the connection says what); the build functions, which
 * roll back, fill a struct fidx_error (error.h).
 */
#ifndef FIDX_SQLITE_PATHSTORE_H
#define FIDX_SQLITE_PATHSTORE_H

#include <sqlite3.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "error.h"
#include "findpat.h"
#include "pathindex.h"

/*
 * Builds the index of scan scan_id from its `file` rows, in one transaction
 * of its own (db must have none open); a scan that has one already (another
 * fidx may have built it meanwhile) is left as it is.  Returns 0, or -1 with
 * errno set, the transaction rolled back and err filled (SQLite's message
 * would not survive the rollback).
 */
int fidx_pathindex_build(sqlite3 *db, int64_t scan_id, struct fidx_error *err);

/*
 * Builds the index of every complete scan that has none, each in its own
 * transaction.  Returns 0, or -1 as fidx_pathindex_build() does.
 */
int fidx_pathindex_build_missing(sqlite3 *db, struct fidx_error *err);

struct fidx_pathiter;

/*
 * Starts reading the paths of scan scan_id in byte order.  When the scan has
 * an index, only the blocks that hold every one of the ntri trigrams of tri
 * (sorted, as fidx_pathindex_trigrams() makes them) are read; without one,
 * or with ntri == 0, every path is.  Returns the iterator, or NULL with errno
 * set.
 */
struct fidx_pathiter *fidx_pathiter_open(sqlite3 *db, int64_t scan_id, const uint32_t *tri,
					 size_t ntri);

/* Returns whether it reads from the index (false: from the file table). */
bool fidx_pathiter_indexed(const struct fidx_pathiter *it);

/* Returns how many blocks it will read (0 without an index). */
size_t fidx_pathiter_blocks(const struct fidx_pathiter *it);

/*
 * Gives the next path in *e.  Returns 1, 0 at the end, or -1 with errno set:
 * EBADMSG when the index or the row read is damaged (fidx_pathiter_where()).
 */
int fidx_pathiter_next(struct fidx_pathiter *it, struct fidx_pathent *e);

/*
 * Where the iterator reads: the block of the index (fidx_pathiter_indexed())
 * or the file row.  Sets *damage to what is wrong there after an EBADMSG
 * ("a path out of order").
 */
int64_t fidx_pathiter_where(const struct fidx_pathiter *it, const char **damage);

/* Ends the reading.  NULL is allowed. */
void fidx_pathiter_close(struct fidx_pathiter *it);

#endif /* FIDX_SQLITE_PATHSTORE_H */
