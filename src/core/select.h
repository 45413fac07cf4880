/*
 * select.h - which scans a query reads: one inventory out of many scans.
 *
 * A database holds every scan ever made into it; a query shows one
 * inventory (docs/SCHEMA.md, "The scans shown").  By default, per root (of
 * each host: a fleet's store holds many), its
 * newest complete scan (with digests asked for, the newest that computed
 * one of them), each path once: a scan whose root lies in the tree of a
 * newer selected scan is dropped, and where the root of a newer scan lies in
 * an older one's tree, the older one's paths there are hidden (the newer
 * shows them):
 *
 *     scans  1 /usr (complete)   2 /usr/share (complete)   3 /usr (failed)
 *     shown  1 /usr but its /usr/share tree   +   2 /usr/share
 *
 * The commands read the selected scans' rows through the store, asking it
 * to leave the hidden trees out (struct fidx_rows_query), or ask
 * fidx_selection_shown() of each path.
 */
#ifndef FIDX_SELECT_H
#define FIDX_SELECT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "error.h"
#include "scanrow.h"

/* A tree of a selected scan that the selection does not show from it. */
struct fidx_hidden {
	int64_t scan_id;   /* the selected scan */
	char *root;        /* the root of the newer selected scan, in scan_id's tree */
};

/* The scans a query reads. */
struct fidx_selection {
	struct fidx_scan_list scans;   /* the selected scans, ascending ids (owned copies) */
	struct fidx_hidden *hidden;    /* the trees hidden (the default selection only) */
	size_t nhidden;
	bool by_default;               /* made by fidx_select_default() */
};

/*
 * Selects, among the scans of all, the default selection above: complete
 * scans only, preferring per root those that computed one of digests (a
 * mask; 0 for any scan).  Returns 0 (possibly selecting none), or -1 with
 * err set (out of memory).  *sel is replaced.
 */
int fidx_select_default(const struct fidx_scan_list *all, unsigned digests,
			struct fidx_selection *sel, struct fidx_error *err);

/*
 * Selects the scans of all whose ids are in ids[0..n) (each once, ascending),
 * or every scan of all when ids is NULL.  Returns 0, or -1 with err set:
 * ENOENT for an id all does not hold (its message names the id and the
 * database name), ENOMEM.
 */
int fidx_select_ids(const struct fidx_scan_list *all, const int64_t *ids, size_t n,
		    const char *name, struct fidx_selection *sel, struct fidx_error *err);

/* Returns whether path (of a row of scan) is shown by the selection. */
bool fidx_selection_shown(const struct fidx_selection *sel, int64_t scan, const char *path);

/* Whether the selection hides part of scan's tree (a newer scan shows it). */
bool fidx_selection_hides(const struct fidx_selection *sel, int64_t scan);

/* The ids of the selected scans into ids (room for sel->scans.n). */
void fidx_selection_ids(const struct fidx_selection *sel, int64_t *ids);

/* Frees what *sel holds and zeroes it.  A zeroed selection is allowed. */
void fidx_selection_free(struct fidx_selection *sel);

/* Whether path lies in the tree of root (is root, or below it; everything is below "/"). */
bool fidx_path_in_tree(const char *path, const char *root);

#endif /* FIDX_SELECT_H */
