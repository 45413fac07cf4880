/*
 * dupes.h - files with identical content among the files of a database.
 *
 * The engine of `fidx dupes`.  It reads the regular files of the selected
 * scans (query.h), uses the digests the scans or an earlier run recorded, and
 * reads only what could still be a duplicate:
 *
 *   sizes two inodes share ──► every file has a SHA-256 (or every one a
 *     │                        SHA-512) recorded: decided, nothing read
 *     ├─ small files (<= FIDX_DUPES_WHOLE_MAX) ───────────────┐
 *     └─ larger: first and last FIDX_DUPES_EDGE_BLOCK bytes   │ read whole:
 *           (the "edges", XXH3-128) equal for two inodes ─────┴─► SHA-256
 *
 * Equal SHA-256 (or SHA-512) digests of files of equal size decide; the edge
 * hash only rules files out.  Every file is checked before its bytes count:
 * device, inode, size and mtime must still be those recorded, otherwise it is
 * left out with a warning, as is a file that cannot be read.  Hard links (one
 * inode under several paths) are one file: they are never duplicates of each
 * other, and a group lists each inode once with all its paths.
 *
 * Scans of several hosts (a fleet's store) are compared across hosts: an
 * inode is one of a host (two hosts' files are never hard links of each
 * other), and only this machine's files can be read, so another host's file
 * takes part when its SHA-256 (or SHA-512) was recorded, and is left out
 * otherwise.
 */
#ifndef FIDX_DUPES_H
#define FIDX_DUPES_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "hashio.h"
#include "error.h"
#include "record.h"
#include "select.h"
#include "store.h"

/*
 * Bytes read at each end of a file for its edge hash (docs/BENCHMARKS.md,
 * "Duplicates": the block size was measured on /usr/share, warm and cold).
 * A build may choose another value (-DFIDX_DUPES_EDGE_BLOCK=N, a power of
 * two): digests stored with another block size are then recomputed.
 */
#ifndef FIDX_DUPES_EDGE_BLOCK
#define FIDX_DUPES_EDGE_BLOCK (16 * 1024)
#endif
/* Files no larger than this are read whole at once: their edges would be all of them. */
#define FIDX_DUPES_WHOLE_MAX (2 * FIDX_DUPES_EDGE_BLOCK)

struct fidx_dupes_opts {
	bool empty;             /* also group empty files (all equal, none read) */
	unsigned jobs;          /* CPUs to hash on, >= 1 */
	enum fidx_io_mode io;   /* how files are read; FIDX_IO_AUTO: hdd when a file's
				   device reports itself rotational, else ssd */
	atomic_bool *cancel;    /* set (by a signal handler) to stop reading */
};

/* One file of a group: an inode and every path it has in the scans. */
struct fidx_dupes_file {
	const char *host;          /* its host, when the scans are of several (a fleet's
				      store: files of another host are compared by their
				      recorded SHA-256 only); NULL when of one */
	uint64_t dev, ino;         /* as recorded */
	struct fidx_time mtime;    /* as recorded */
	struct fidx_time ctime;    /* as recorded, when has_ctime */
	bool has_ctime;
	bool in_image;             /* an entry of a disk image: its paths name no file here */
	size_t npaths;             /* >= 1; more for hard links */
	const char *const *paths;  /* byte-exact, in byte order */
};

/* Files with identical content. */
struct fidx_dupes_group {
	uint64_t size;                       /* bytes of each file */
	enum fidx_digest algo;               /* FIDX_SHA256, or FIDX_SHA512 when every file
						had only that recorded */
	const uint8_t *digest;               /* the content's digest */
	size_t nfiles;                       /* distinct inodes, >= 2 */
	const struct fidx_dupes_file *files; /* ordered by their first path */
	uint64_t waste;                      /* (nfiles - 1) * size */
};

/* A file left out of the search: changed or unreadable. */
struct fidx_dupes_left {
	const char *host;          /* its host, as fidx_dupes_file's */
	const char *path;          /* its first path */
	const char *error;         /* why ("open: Permission denied", "changed during scan") */
};

/* What fidx_dupes_find() found, in the order to list it. */
struct fidx_dupes {
	struct fidx_dupes_group *groups; /* largest waste first, then larger size, then
					    by first path */
	size_t ngroups;
	uint64_t files;                  /* files (inodes) in the groups */
	uint64_t waste;                  /* bytes reclaimable: sum of the groups' waste */
	uint64_t left_out;               /* files left out: changed or unreadable */
	struct fidx_dupes_left *left;    /* those files, by path (NULL when interrupted:
					    the files were not all looked at) */
	bool interrupted;                /* cancel stopped the reading: the groups are
					    incomplete and must not be listed */
	struct fidx_dupes_engine *engine; /* the rows, nodes and computed digests */
};

/*
 * Finds the duplicate files among the regular files of the scans sel
 * selects in st (a path recorded by several of them counts once, from the
 * newest; the trees sel hides are left out).  Files that changed or cannot
 * be read are left out (d->left says which and why).  Returns the result
 * (free it with fidx_dupes_free()), or NULL with err set (the store cannot
 * be read, out of memory, no thread could start).
 */
struct fidx_dupes *fidx_dupes_find(struct fidx_store *st, const struct fidx_selection *sel,
				   const struct fidx_dupes_opts *o, struct fidx_error *err);

/*
 * How many digests the search computed (edges or SHA-256, one per file row
 * they describe), to keep with fidx_dupes_store().
 */
size_t fidx_dupes_computed(const struct fidx_dupes *d);

/*
 * Keeps the digests the search computed beside their rows in st (store.h,
 * fidx_store_add_digests()), so that a later search reads nothing it already
 * read.  Returns 0, or -1 with err set.
 */
int fidx_dupes_store(const struct fidx_dupes *d, struct fidx_store *st, struct fidx_error *err);

/* Frees a result.  NULL is allowed. */
void fidx_dupes_free(struct fidx_dupes *d);

#endif /* FIDX_DUPES_H */
