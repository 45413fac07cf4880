/*
 * diff.h - what changed between two scans: the engine of `fidx diff` and
 * `fidx check`.
 *
 * Each side is a scan of a store (the same store, or two: `fidx check`
 * compares a database's scan with a scratch database's).  Both sides are
 * read in byte order of path (FIDX_ROWS_PATH) and merge-joined on the path
 * below each scan's root, so scans of two roots compare as trees (a copy
 * with its original):
 *
 *   OLD rows ─┐  path only in OLD ──► removed ─┐
 *             ├► same path ─► attributes differ ─► changed      ├─► moved pairs
 *   NEW rows ─┘  path only in NEW ──► added   ─┘   (dev, ino, type and content equal)
 *
 * Only the differences are kept (changed entries as their paths and row ids,
 * added and removed rows whole, for the pairing), so memory grows with the
 * differences, not with the tree.  A moved entry is a path that disappeared
 * while a new path appeared with the same device and inode, the same type
 * and the same content: equal digests where the two rows have one in common,
 * otherwise (no digests, or not a regular file) equal size and mtime; and
 * the same birth time where both rows know it (an inode number the file
 * system gave again to a new file is not a move).  When several candidates
 * share an inode (hard links) they pair in path order.
 *
 * The summary of a changed or moved entry has one position per attribute,
 * in this order; its letter when the attribute differs, '.' when not:
 *
 *   pos  letter  attribute (--ignore name)    compared
 *    0   t       type                         the type letter (file, dir, link, ...)
 *    1   > < s   size (grew, shrank, to or   st_size
 *                from unknown)
 *    2   p       perm                         permission bits, mode & 07777
 *    3   u       owner                        uid
 *    4   g       group                        gid
 *    5   m       mtime                        ns
 *    6   c       ctime                        ns
 *    7   i       inode                        device or inode number
 *    8   n       nlink                        hard link count
 *    9   l       target                       a symlink's target, bytes
 *   10   H ?     content                      the digests both rows have (regular files)
 *   11   a       atime                        ns; only when asked (FIDX_DIFF_DEFAULT lacks it)
 *   12   b       btime                        ns (NULL = unknown compares as a value)
 *   13   e       error                        the row's error text
 *
 * '?' at content: the rows are regular files, at least one has a digest,
 * but they have none in common (one could not be read, or the scans used
 * other --hash lists).  It is shown, but does not by itself make an entry
 * changed.  Rows without metadata (--no-stat, an entry that could not be
 * stat'ed) compare their NULLs as values.
 */
#ifndef FIDX_DIFF_H
#define FIDX_DIFF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "arena.h"
#include "error.h"
#include "row.h"
#include "scanrow.h"
#include "store.h"

/* The attributes compared, in the order of the summary string. */
enum fidx_diff_attr {
	FIDX_DIFF_TYPE,
	FIDX_DIFF_SIZE,
	FIDX_DIFF_PERM,
	FIDX_DIFF_OWNER,
	FIDX_DIFF_GROUP,
	FIDX_DIFF_MTIME,
	FIDX_DIFF_CTIME,
	FIDX_DIFF_INODE,
	FIDX_DIFF_NLINK,
	FIDX_DIFF_TARGET,
	FIDX_DIFF_CONTENT,
	FIDX_DIFF_ATIME,
	FIDX_DIFF_BTIME,
	FIDX_DIFF_ERROR,
	FIDX_DIFF_STATE,      /* a disk image's entry: allocated, deleted... (row.h) */
	FIDX_DIFF_NATTRS
};

/* Every attribute. */
#define FIDX_DIFF_ALL ((1u << FIDX_DIFF_NATTRS) - 1)
/* What is compared unless asked otherwise: all but atime (every read may move it). */
#define FIDX_DIFF_DEFAULT (FIDX_DIFF_ALL & ~(1u << FIDX_DIFF_ATIME))

/* Returns the --ignore name of attribute a ("size", "perm", ...). */
const char *fidx_diff_attr_name(enum fidx_diff_attr a);

/*
 * Parses a comma-separated list of attribute names into a mask.  Returns 0,
 * or -1 with *bad pointing at the first unknown name (within list; its
 * length in *badlen).
 */
int fidx_diff_attr_parse(const char *list, unsigned *mask, const char **bad, size_t *badlen);

/* One side of a comparison. */
struct fidx_diff_side {
	struct fidx_store *st;             /* where the scan is */
	const struct fidx_scan_row *scan;  /* the scan: its rows' paths are compared below
					      its root; the folder of its own database
					      (options' "database") moves by itself */
	const char *under;                 /* only the tree of this path, compared below it
					      (`fidx diff HOST:PATH`); NULL: the root's */
};

/* The integer columns of a row, in the order of the attributes they hold. */
enum { FIDX_DIFF_V_SIZE, FIDX_DIFF_V_MODE, FIDX_DIFF_V_UID, FIDX_DIFF_V_GID, FIDX_DIFF_V_NLINK,
       FIDX_DIFF_V_DEV, FIDX_DIFF_V_INO, FIDX_DIFF_V_ATIME, FIDX_DIFF_V_MTIME, FIDX_DIFF_V_CTIME,
       FIDX_DIFF_V_BTIME, FIDX_DIFF_NV };

/* One file row, as compared: pointing into the store's memory, or copies (fidx_diff_row_keep()). */
struct fidx_diff_row {
	int64_t id;                               /* file.id */
	const char *path;                         /* file.path */
	const char *key;                          /* path below the scan's root */
	char type;                                /* type letter, 0 for NULL */
	unsigned present;                         /* bit per FIDX_DIFF_V_ column that is not NULL */
	int64_t v[FIDX_DIFF_NV];                  /* the integer columns (not the times) */
	struct fidx_time t[4];                    /* FIDX_DIFF_V_ATIME .. V_BTIME, in that order */
	const char *target;                       /* link_target, or NULL */
	const char *error;                        /* error, or NULL */
	const char *state;                        /* state (an image's entry), or NULL */
	unsigned dmask;                           /* bit per digest that is not NULL */
	const unsigned char *digest[FIDX_NDIGESTS];
	int dlen[FIDX_NDIGESTS];                  /* bytes of each digest */
};

/* The columns a compared row is read with. */
#define FIDX_DIFF_COLUMNS                                                                     \
	(FIDX_COLUMN(FIDX_COL_PATH) | FIDX_COLUMN(FIDX_COL_TYPE) | FIDX_COLUMN(FIDX_COL_SIZE) |   \
	 FIDX_COLUMN(FIDX_COL_MODE) | FIDX_COLUMN(FIDX_COL_UID) | FIDX_COLUMN(FIDX_COL_GID) |     \
	 FIDX_COLUMN(FIDX_COL_NLINK) | FIDX_COLUMN(FIDX_COL_DEV) | FIDX_COLUMN(FIDX_COL_INO) |    \
	 FIDX_TIME_COLUMNS | FIDX_COLUMN(FIDX_COL_LINK_TARGET) | FIDX_COLUMN(FIDX_COL_ERROR) |    \
	 FIDX_COLUMN(FIDX_COL_STATE) |                                                          \
	 FIDX_DIGEST_COLUMN(FIDX_MD5) | FIDX_DIGEST_COLUMN(FIDX_SHA1) |                          \
	 FIDX_DIGEST_COLUMN(FIDX_SHA256) | FIDX_DIGEST_COLUMN(FIDX_SHA512) |                     \
	 FIDX_DIGEST_COLUMN(FIDX_XXH128))

/* Fills r from the store's row (read with FIDX_DIFF_COLUMNS); key is left NULL. */
void fidx_diff_row_of(const struct fidx_row *row, struct fidx_diff_row *r);

/* Copies r's strings and digests into ar, so that it outlives the store's row.  Returns 0, or -1 (ENOMEM). */
int fidx_diff_row_keep(struct fidx_arena *ar, struct fidx_diff_row *r);

enum fidx_diff_kind {
	FIDX_DIFF_ADDED,      /* path only in NEW (and not the end of a move) */
	FIDX_DIFF_REMOVED,    /* path only in OLD (and not the start of a move) */
	FIDX_DIFF_CHANGED,    /* path in both, attributes differ */
	FIDX_DIFF_MOVED,      /* OLD path gone, the same inode and content at a NEW path */
	FIDX_DIFF_NKINDS
};

/* One difference. */
struct fidx_diff_entry {
	const char *key;        /* sort key: the path below its root (a move's OLD path's) */
	const char *path;       /* NEW path (added, changed, moved), or OLD path (removed) */
	const char *old_path;   /* moved: the OLD path; else NULL */
	int64_t old_id;         /* file.id of the OLD row, 0 for added */
	int64_t new_id;         /* file.id of the NEW row, 0 for removed */
	unsigned changed;       /* attributes that differ (1u << enum fidx_diff_attr) */
	signed char grew;       /* size changed: 1 grew, -1 shrank, 0 unknown (a NULL) */
	bool unknown;           /* content could not be compared ('?') */
	enum fidx_diff_kind kind;
};

/* Every difference, in byte order of the key. */
struct fidx_diff {
	struct fidx_diff_entry *entries;
	size_t n;
	size_t count[FIDX_DIFF_NKINDS];  /* entries of each kind */
	struct fidx_arena arena;         /* the paths */
};

/*
 * Compares scan old with scan new, the attributes in the mask attrs.
 * Returns the differences, or NULL with err set: a store cannot be read, a
 * row is damaged (a path outside its scan's root among them), out of memory.
 */
struct fidx_diff *fidx_diff_compare(const struct fidx_diff_side *old,
				    const struct fidx_diff_side *new, unsigned attrs,
				    struct fidx_error *err);

/* Frees d.  NULL is allowed. */
void fidx_diff_free(struct fidx_diff *d);

/*
 * Writes e's summary (FIDX_DIFF_NATTRS characters, layout above) into buf:
 * '+' everywhere for added, '-' for removed.  Returns buf.
 */
const char *fidx_diff_summary(const struct fidx_diff_entry *e, char buf[static FIDX_DIFF_NATTRS + 1]);

/*
 * The exit status of a comparison, as AIDE's: bit 1 something added, bit 2
 * removed, bit 4 changed; a move counts as added and removed, and as changed
 * when its summary shows a change.  0 when identical.
 */
int fidx_diff_status(const struct fidx_diff *d);

/*
 * Formats the counts of d, "2 added, 1 removed, 4 changed, 1 moved" or
 * "identical", into buf.  Returns buf.
 */
const char *fidx_diff_counts(const struct fidx_diff *d, char buf[static 128]);

#endif /* FIDX_DIFF_H */
