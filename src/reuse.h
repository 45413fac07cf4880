/*
 * reuse.h - what a new scan takes from the scans before it.
 *
 * Two things, both read from a database with a connection of the caller's
 * (read-only is enough):
 *
 *   - the recorded scan row (struct fidx_scan_row): its root, status and the
 *     options that shaped its content (digests, --xdev, --follow, --no-stat,
 *     --exclude), decoded from scan.options, so that `fidx scan --resume` and
 *     `fidx check` scan a tree exactly as the scan they continue or compare;
 *
 *   - the digests of an earlier scan (struct fidx_reuse), for incremental
 *     rescans: a regular file whose device, inode, size, mtime_ns and
 *     ctime_ns are all what that scan recorded takes the digests recorded
 *     then instead of being read again.  ctime counts because anyone who can
 *     write a file can set its mtime back, but only the kernel sets ctime.
 *     The table is keyed by (device, inode): content belongs to the inode,
 *     so hard links and renames without a ctime change are found too.
 */
#ifndef FIDX_REUSE_H
#define FIDX_REUSE_H

#include <sqlite3.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "record.h"

/* A scan row and the content-shaping options it was made with. */
struct fidx_scan_row {
	int64_t id;          /* scan.id */
	char *root;          /* scan.root, bytes */
	char status[16];     /* running, complete, interrupted or failed */
	int64_t pid;         /* the process that wrote it (0 when not recorded) */
	char *host;          /* scan.host (NULL when not recorded) */
	unsigned digests;    /* digests it computed (1u << enum fidx_digest) */
	bool xdev, follow, no_stat;
	char **excludes;     /* its --exclude patterns (bytes), NULL-terminated */
	size_t nexcludes;
};

/*
 * Reads the newest scan (highest id) of root (compared byte for byte) whose
 * status is one of the NULL-terminated list statuses, and whose id is below
 * before (0: any).  Returns 1, 0 when there is none, or -1 with a one-line
 * message in *errmsg (malloc'ed) when the database cannot be read or the
 * row's options cannot be decoded.
 */
int fidx_scan_row_newest(sqlite3 *db, const char *root, const char *const *statuses,
			 int64_t before, struct fidx_scan_row *row, char **errmsg);

/* Frees what *row holds (not row itself). */
void fidx_scan_row_free(struct fidx_scan_row *row);

/* The digests of an earlier scan, by (device, inode). */
struct fidx_reuse;

/*
 * Loads from scan scan_id every regular file recorded without an error, with
 * all the digests in the mask digests, and with an mtime and a ctime older
 * than the scan's start by more than their granularity (2 s for whole
 * seconds, else 0.1 s: a change after the read must have moved them).
 * Returns the table (empty when no row qualifies), or NULL with a one-line
 * message in *errmsg.
 */
struct fidx_reuse *fidx_reuse_load(sqlite3 *db, int64_t scan_id, unsigned digests,
				   char **errmsg);

/*
 * Adds the files of another scan (another root's) to r, as
 * fidx_reuse_load() loads them.  Returns 0, or -1 with *errmsg set.
 */
int fidx_reuse_load_more(struct fidx_reuse *r, sqlite3 *db, int64_t scan_id, char **errmsg);

/* Returns how many files the table holds. */
size_t fidx_reuse_count(const struct fidx_reuse *r);

/*
 * When rec (a regular file with metadata) has the device, inode, size,
 * mtime_ns and ctime_ns of a file in r, copies that file's digests of the
 * mask into rec (digest_mask, digest) and sets rec->digests_from to the scan
 * that read them; returns true.  Otherwise returns false and leaves rec
 * alone.  Safe to call from many threads at once (r is read-only).
 */
bool fidx_reuse_take(const struct fidx_reuse *r, struct fidx_record *rec);

/* Frees the table.  NULL is allowed. */
void fidx_reuse_free(struct fidx_reuse *r);

/* The paths a scan already recorded: what `fidx scan --resume` skips. */
struct fidx_pathset;

/*
 * Loads the path of every file row of scan scan_id but those of entries an
 * interruption left unfinished (FIDX_ERROR_NOT_READ, FIDX_ERROR_NOT_HASHED).  Returns the set, or
 * NULL with a one-line message in *errmsg.
 */
struct fidx_pathset *fidx_pathset_load(sqlite3 *db, int64_t scan_id, char **errmsg);

/* Returns how many paths the set holds. */
size_t fidx_pathset_count(const struct fidx_pathset *set);

/* Returns whether path (len bytes) is in the set.  Safe from many threads. */
bool fidx_pathset_has(const struct fidx_pathset *set, const char *path, size_t len);

/* Frees the set.  NULL is allowed. */
void fidx_pathset_free(struct fidx_pathset *set);

#endif /* FIDX_REUSE_H */
