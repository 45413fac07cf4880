/*
 * reuse.h - what a new scan takes from the scans before it, read through
 * the store.
 *
 *   - the digests of an earlier scan (struct fidx_reuse), for incremental
 *     rescans: a regular file whose device, inode, size, mtime and ctime are
 *     all what that scan recorded takes the digests recorded then instead of
 *     being read again.  ctime counts because anyone who can write a file
 *     can set its mtime back, but only the kernel sets ctime.  The table is
 *     keyed by (device, inode): content belongs to the inode, so hard links
 *     and renames without a ctime change are found too.
 *
 *   - the paths a scan already recorded (struct fidx_pathset), which
 *     `fidx scan --resume` does not record again.
 *
 * What a scan was made with (its root, status and content-shaping options)
 * is its scan row (scanrow.h).
 */
#ifndef FIDX_REUSE_H
#define FIDX_REUSE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "error.h"
#include "record.h"
#include "scanrow.h"
#include "store.h"

/* The digests of earlier scans, by (device, inode). */
struct fidx_reuse;

/* Bytes of the table fidx keeps in memory: ~170,000 files with SHA-256; beyond, $TMPDIR. */
#define FIDX_REUSE_MEMORY (16u << 20)

/*
 * Makes an empty table of the digests in the mask digests that holds up to
 * memory bytes of files in memory; a load of more sorts them into an unnamed
 * temporary file in fidx_tmpdir() (sysinfo.h), which look-ups read, so that
 * the table's memory does not grow with the tree (reuse.c).  Returns it, or
 * NULL with err set.
 */
struct fidx_reuse *fidx_reuse_new(unsigned digests, size_t memory, struct fidx_error *err);

/*
 * Adds to r every regular file of scan (a scan row of st) recorded without
 * an error, with all of r's digests, and with an mtime and a ctime older
 * than the scan's start by more than their granularity (2 s for whole
 * seconds, else 0.1 s: a change after the read must have moved them).  A
 * damaged row gives nothing: its file is read again.  Loads may follow one
 * another (one table for the bases of several roots).  Returns 0, or -1 with
 * err set (ENOMEM, or EIO: the temporary file could not be made or written)
 * and the table empty.
 */
int fidx_reuse_load(struct fidx_reuse *r, struct fidx_store *st,
		    const struct fidx_scan_row *scan, struct fidx_error *err);

/* Returns how many files the table holds. */
size_t fidx_reuse_count(const struct fidx_reuse *r);

/*
 * When rec (a regular file with metadata) has the device, inode, size,
 * mtime and ctime of a file in r, copies that file's digests of the mask
 * into rec (digest_mask, digest) and sets rec->digests_from to the scan
 * that read them; returns true.  Otherwise returns false and leaves rec
 * alone.  Safe to call from many threads at once (r is read-only).
 */
bool fidx_reuse_take(const struct fidx_reuse *r, struct fidx_record *rec);

/* Frees the table.  NULL is allowed. */
void fidx_reuse_free(struct fidx_reuse *r);

/* The paths a scan already recorded: what `fidx scan --resume` skips. */
struct fidx_pathset;

/*
 * Loads the path of every file row of scan (of st) but those of entries an
 * interruption left unfinished (FIDX_ERROR_NOT_READ, FIDX_ERROR_NOT_HASHED),
 * and calls each_error (when not NULL) for each row kept that has an error.
 * Returns the set, or NULL with err set.
 */
struct fidx_pathset *fidx_pathset_load(struct fidx_store *st, const struct fidx_scan_row *scan,
				       void (*each_error)(void *arg, const char *path,
							  const char *error),
				       void *arg, struct fidx_error *err);

/* Returns how many paths the set holds. */
size_t fidx_pathset_count(const struct fidx_pathset *set);

/* Returns whether path (len bytes) is in the set.  Safe from many threads. */
bool fidx_pathset_has(const struct fidx_pathset *set, const char *path, size_t len);

/* Frees the set.  NULL is allowed. */
void fidx_pathset_free(struct fidx_pathset *set);

#endif /* FIDX_REUSE_H */
