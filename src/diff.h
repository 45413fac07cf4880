/*
 * diff.h - what changed between two scans: the engine of `fidx diff` and
 * `fidx check`.
 *
 * Each side is a scan in a schema of one SQLite connection ("main", or the
 * scratch database `fidx check` attaches as "live").  Both sides are read
 * in path order (the index file(scan_id, path) gives it; BINARY collation,
 * i.e. byte order) and merge-joined on the path below each scan's root, so
 * scans of two roots compare as trees (a copy with its original):
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

#include <sqlite3.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "arena.h"

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

/* The exit codes of diff's and check's errors: AIDE's numbers. */
enum fidx_diff_exit {
	FIDX_DIFF_EXIT_WRITE = 14,    /* output could not be written */
	FIDX_DIFF_EXIT_USAGE = 15,    /* invalid argument */
	FIDX_DIFF_EXIT_CONFIG = 17,   /* no such scan, nothing to compare with */
	FIDX_DIFF_EXIT_READ = 18,     /* the database cannot be read */
	FIDX_DIFF_EXIT_VERSION = 19,  /* the database has a newer schema */
};

/*
 * The exit status for a database fidx_query_open() refused: VERSION for a
 * fidx database of a newer schema, READ otherwise.
 */
int fidx_diff_open_status(const char *path);

/*
 * The rows of the option tables (cli.h) that diff and check share: -v,
 * --ignore ATTRS and --atime, with the getopt values the command gives them.
 */
#define FIDX_DIFF_OPTIONS(ignore_val, atime_val)                                       \
	{{"verbose", no_argument, NULL, 'v'}, NULL,                                    \
	 "old and new values of each attribute that changed"},                         \
	{{"ignore", required_argument, NULL, (ignore_val)}, "ATTRS",                   \
	 "leave these attributes out of the comparison, e.g. ctime,mtime"},            \
	{{"atime", no_argument, NULL, (atime_val)}, NULL,                              \
	 "also compare access times (left out by default: reads move them)"}

/*
 * Adds the attributes of an --ignore argument to *mask.  Returns 0, or -1
 * after printing which name is unknown.
 */
int fidx_diff_ignore_arg(const char *arg, unsigned *mask);

/* One side of a comparison. */
struct fidx_diff_side {
	const char *schema;   /* schema name in the connection: "main", "live", ... */
	int64_t scan_id;      /* the scan */
	const char *root;     /* its scan.root: paths are compared below it */
	const char *db;       /* the database, for messages (NULL: "the database") */
};

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
 * Compares scan old with scan new over db, the attributes in the mask attrs.
 * Returns the differences, or NULL with a one-line message in *errmsg
 * (malloc'ed): the database cannot be read, out of memory, or a scan holds a
 * path outside its root.
 */
struct fidx_diff *fidx_diff_compare(sqlite3 *db, const struct fidx_diff_side *old,
				    const struct fidx_diff_side *new, unsigned attrs,
				    char **errmsg);

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

/* How fidx_diff_print() writes. */
struct fidx_diff_print_opts {
	bool json;     /* one JSON object per entry */
	bool nul;      /* end every line with NUL, not '\n' (text) */
	bool verbose;  /* old and new values of each changed attribute */
};

/*
 * Prints d on out (text or JSON lines, see `fidx diff --help`).  With
 * verbose, the two rows of each entry are read again by id from db.
 * Returns 0, or -1 with a one-line message in *errmsg when the database
 * cannot be read (a failed write is out's error flag, for the caller).
 */
int fidx_diff_print(const struct fidx_diff *d, sqlite3 *db, const struct fidx_diff_side *old,
		    const struct fidx_diff_side *new, const struct fidx_diff_print_opts *o,
		    FILE *out, char **errmsg);

/*
 * Formats the counts of d, "2 added, 1 removed, 4 changed, 1 moved" or
 * "identical", into buf.  Returns buf.
 */
const char *fidx_diff_counts(const struct fidx_diff *d, char buf[static 128]);

#endif /* FIDX_DIFF_H */
