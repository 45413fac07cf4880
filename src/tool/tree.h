/*
 * tree.h - one scan's tree in memory, every entry with its subtree's sums:
 * what `fidx report` draws and `fidx browse` walks.
 *
 * `fidx du` keeps only the directories it shows; a picture of the space
 * needs every entry (ncdu's model), so the rows of one scan at and below a
 * path are read in one pass (in the store's order, any) into an array of
 * nodes, then linked into a tree whose every directory holds the sums of
 * its subtree, counted as `fidx du` counts them:
 *
 *     row /r/a/f ──► node f ─ parent ─► node a (made when first named,
 *                                        filled when its own row comes)
 *     finish: children of each node contiguous (kids[]), sums added up
 *             from the leaves, hard links counted once per subtree
 *
 * A directory no row names (a scan still running, a row damaged) is made
 * from its children's paths and marked FIDX_TREE_NO_ROW.  A file with
 * several hard links counts once in every directory that holds one of its
 * names, like du; its names other than the first in byte order of the
 * paths (whatever order the store gives the rows in) show their size but
 * add nothing more where the first one counted (FIDX_TREE_LINK).  Memory: about 80 bytes an entry and its name
 * (a 1M-entry scan, ~100 MiB).
 */
#ifndef FIDX_TREE_H
#define FIDX_TREE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "arena.h"
#include "query.h"

/* No node: the parent of the top. */
#define FIDX_TREE_NONE UINT32_MAX

/* What a node's flags say. */
enum {
	FIDX_TREE_ERROR = 1,   /* its row has an error (an entry fidx could not read whole) */
	FIDX_TREE_NO_SIZE = 2, /* its row has no sizes (not stat'ed): counts nothing */
	FIDX_TREE_LINK = 4,    /* a hard-linked file's name not first in byte order: counted at that one */
	FIDX_TREE_NO_ROW = 8,  /* a directory known only from the paths below it */
};

/* One entry: its own row, then (after the load) its subtree's sums. */
struct fidx_tree_node {
	const char *name;      /* its last component (the top: its whole path), exact bytes */
	int64_t id;            /* its row id; 0 for FIDX_TREE_NO_ROW */
	int64_t mtime;         /* seconds, its own; INT64_MIN when unknown */
	int64_t latest;        /* the newest mtime in its subtree; INT64_MIN when none */
	uint64_t apparent;     /* st_size summed over its subtree (a file: its own) */
	uint64_t allocated;    /* st_blocks x 512, likewise */
	uint64_t entries;      /* rows in its subtree, its own included */
	uint64_t errors;       /* rows with an error in its subtree */
	uint32_t parent;       /* FIDX_TREE_NONE for the top */
	uint32_t kids;         /* its children: tree.kids[kids .. kids + nkids) */
	uint32_t nkids;
	char type;             /* the row's type letter ('d', 'f', 'l', ...); 0 when unknown;
				  'd' for FIDX_TREE_NO_ROW */
	uint8_t flags;         /* FIDX_TREE_* */
};

/* One scan's tree. */
struct fidx_tree {
	struct fidx_tree_node *nodes;  /* nodes[top] is the path asked for */
	uint32_t nnodes;
	uint32_t top;
	uint32_t *kids;                /* children, each node's contiguous, in load order (a
					  caller may sort a node's own in place: browse) */
	int64_t scan;                  /* the scan read */
	uint64_t dir_apparent;         /* the directories' own sizes, summed (a node's sums
					  hold its subtree's) */
	uint64_t dir_allocated;
	struct fidx_arena names;
};

/*
 * Loads the rows of selected scan k of q at and below path (absolute, as
 * the scan recorded it; the scan's root when NULL).  Returns the tree, or
 * NULL after printing one line: the store failed, out of memory, no row at
 * path ("no entry ... in scan N"), more than 2^32 - 2 entries, or a damaged
 * scan (the whole of a complete scan with fewer or more rows than its scan
 * row counts, a row that is in no tree).
 */
struct fidx_tree *fidx_tree_load(const struct fidx_query *q, size_t k, const char *path);

/* Returns the path of node i (malloc'd: free it), or NULL (ENOMEM). */
char *fidx_tree_path(const struct fidx_tree *t, uint32_t i);

/* Frees t.  NULL is allowed. */
void fidx_tree_free(struct fidx_tree *t);

/*
 * Picks the scan of q that a tree command reads: the selected scan whose
 * root holds path, the newest when several do (path NULL: the only selected
 * scan).  Returns its index in q->ids, or -1 after printing why (no scan
 * holds path; several roots and no path: they are named, with --scan).
 */
int64_t fidx_tree_pick_scan(const struct fidx_query *q, const char *path);

#endif /* FIDX_TREE_H */
