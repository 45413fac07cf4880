/*
 * dedupe.h - acting on duplicate files (`fidx dupes --delete | --link |
 * --reflink`): each file checked again immediately before it is touched.
 *
 * A group of duplicates (dupes.h) keeps one file; the others are removed,
 * replaced by hard links to the kept one, or made to share its extents.
 * The search is over a database, so any file may have changed since:
 *
 *   kept file ── open (O_NOFOLLOW), fstat: regular, device, inode, size,
 *   │            mtime and ctime as recorded ── else the group is left alone
 *   ▼
 *   each other file ── on the kept file's device only; open, fstat: the same checks
 *     ├─ --delete, --link: its bytes compared with the kept file's, all of
 *     │   them, then fstat again (nothing moved while it was compared)
 *     │     └─ each of its names (its folders reached with no symlink
 *     │        followed): the name must still be that inode (fstatat in
 *     │        its folder), the kept file must still have its name, then
 *     │        unlinkat(), or linkat() of the kept file to a temporary name
 *     │        beside it exchanged with the name (renameat2: the name
 *     │        always names one of the two copies) and the old one removed
 *     └─ --reflink: FIDEDUPERANGE, where the kernel compares the bytes and
 *        shares only ranges that are equal (btrfs, XFS): no name changes,
 *        each file keeps its own metadata
 *
 * What cannot be closed from user space: a file written between the last
 * check and the unlinkat() or renameat() of its name (microseconds) loses
 * that write, as with every deduplicator that works on names; and a process
 * killed (SIGKILL) between the link to the temporary name and the exchange,
 * or between the exchange and the removal, leaves that .fidx-link-* name
 * beside the name: it holds the same bytes (the kept file's or the copy's),
 * nothing is lost, and it may be removed.
 */
#ifndef FIDX_DEDUPE_H
#define FIDX_DEDUPE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "dupes.h"
#include "error.h"

/* What is done to the files of a group that are not kept. */
enum fidx_dedupe_how {
	FIDX_DEDUPE_DELETE,   /* every name removed */
	FIDX_DEDUPE_LINK,     /* every name made a hard link of the kept file */
	FIDX_DEDUPE_REFLINK,  /* its extents shared with the kept file's */
};

/* The file a group keeps, open and checked. */
struct fidx_dedupe_keep {
	const struct fidx_dupes_file *file;
	uint64_t size;        /* the group's size */
	int fd;               /* open for reading; -1 when closed */
};

/*
 * Opens file (of a group of files of size bytes) by its first name and
 * checks that it is still the file recorded: a regular file with its
 * device, inode, size, mtime and ctime.  Returns 0, or -1 with err set
 * (then nothing of the group is to be touched).
 */
int fidx_dedupe_keep_open(struct fidx_dedupe_keep *k, const struct fidx_dupes_file *file,
			  uint64_t size, struct fidx_error *err);

/* Closes k.  Safe on a k that failed to open. */
void fidx_dedupe_keep_close(struct fidx_dedupe_keep *k);

/*
 * Deletes, links or shares (how) dup, another file of k's group, after the
 * checks above, and calls report(arg, path, why) for each of dup's names:
 * why NULL when it was done, else why not (nothing was done to that name).
 * A copy on another device than k's is never touched (an overlay, NFS or
 * FUSE mount can show the kept file itself under another device).  Sets
 * *other_names to the names dup's inode still has once every name recorded
 * was deleted or replaced (names outside the scanned trees: its bytes are
 * not freed), else 0.  Returns how many names were done.
 */
size_t fidx_dedupe_file(const struct fidx_dedupe_keep *k, const struct fidx_dupes_file *dup,
			enum fidx_dedupe_how how,
			void (*report)(void *arg, const char *path, const struct fidx_error *why),
			void *arg, uint64_t *other_names);

#endif /* FIDX_DEDUPE_H */
